package swift

// Generic and function specializations and their parameters.

func (d *demangler) specAttributes(k kind) *node {
	serialized := d.nextIf('q')
	asyncRemoved := d.nextIf('a')
	reprChanged := d.nextIf('r')
	pass := int(d.next()) - '0'
	if pass < 0 || pass >= 10 {
		return nil
	}
	n := d.newNode(k)
	if n == nil {
		return nil
	}
	if serialized {
		n.add(d.newNode(kIsSerialized))
	}
	if asyncRemoved {
		n.add(d.newNode(kAsyncRemoved))
	}
	if reprChanged {
		n.add(d.newNode(kRepresentationChanged))
	}
	n.add(d.indexNode(kSpecializationPassID, uint64(pass)))
	return n
}

func (d *demangler) genericSpecialization(k kind, dropped []*node) *node {
	spec := d.specAttributes(k)
	if spec == nil {
		return nil
	}
	for _, a := range dropped {
		spec.add(a)
	}
	tl := d.popTypeList()
	if tl == nil {
		return nil
	}
	for _, t := range tl.children {
		spec.add(d.with(kGenericSpecializationParam, t))
	}
	return spec
}

func (d *demangler) functionSpecialization() *node {
	spec := d.specAttributes(kFunctionSignatureSpecialization)
	if spec.first().is(kRepresentationChanged) {
		// Only the function's representation changed: no parameters.
		return spec
	}
	for spec != nil && !d.nextIf('_') {
		spec = addChild(spec, d.funcSpecParam(kFunctionSignatureSpecializationParam))
	}
	if !d.nextIf('n') {
		spec = addChild(spec, d.funcSpecParam(kFunctionSignatureSpecializationReturn))
	}
	if spec == nil {
		return nil
	}
	for i := spec.numChildren() - 1; i >= 0; i-- {
		if param := spec.child(i); param.kind == kFunctionSignatureSpecializationParam {
			if !d.funcSpecParamArgs(param) {
				return nil
			}
		}
	}
	return spec
}

// funcSpecParamArgs pops what each of param's kinds propagates (a name,
// types) and puts it after the kind: the last kind's are on top of the
// stack.
func (d *demangler) funcSpecParamArgs(param *node) bool {
	kids := param.children
	var args [][]*node
	for j := len(kids) - 1; j >= 0; j-- {
		pk := kids[j]
		if pk.kind != kFunctionSignatureSpecializationParamKind {
			continue
		}
		var extra []*node
		switch pk.index {
		case fsConstantPropStruct:
			t := d.popKind(kType)
			if t == nil {
				return false
			}
			extra = []*node{t}
		case fsConstantPropFunction, fsConstantPropGlobal, fsConstantPropString, fsConstantPropKeyPath,
			fsClosureProp, fsEscapingClosureProp:
			var types []*node
			for t := d.popKind(kType); t != nil; t = d.popKind(kType) {
				if pk.index != fsClosureProp && pk.index != fsEscapingClosureProp && pk.index != fsConstantPropKeyPath {
					return false
				}
				types = append(types, t)
			}
			name := d.popKind(kIdentifier)
			if name == nil {
				return false
			}
			if pk.index == fsClosureProp || pk.index == fsEscapingClosureProp {
				// Printed as it is, not demangled (Swift 6.3).
				extra = append(extra, name)
			} else {
				text := name.text
				if pk.index == fsConstantPropString && len(text) > 0 && text[0] == '_' {
					text = text[1:]
				}
				extra = append(extra, d.textNode(kFunctionSignatureSpecializationParamPayload, text))
			}
			for k := len(types) - 1; k >= 0; k-- {
				extra = append(extra, types[k])
			}
		default:
			continue
		}
		if args == nil {
			args = make([][]*node, len(kids))
		}
		args[j] = extra
	}
	if args == nil {
		return true
	}
	// A kind's own payloads (a number, a string's encoding) stay next to
	// it; what was popped for it follows them.
	out := make([]*node, 0, len(kids)+4)
	var pending []*node
	for j, c := range kids {
		if c.kind == kFunctionSignatureSpecializationParamKind {
			out = append(out, pending...)
			pending = args[j]
		}
		out = append(out, c)
	}
	out = append(out, pending...)
	param.children = out
	return true
}

func (d *demangler) funcSpecParam(k kind) *node {
	p := d.newNode(k)
	if p == nil {
		return nil
	}
	kindNode := func(v uint64) *node {
		return addChild(p, d.indexNode(kFunctionSignatureSpecializationParamKind, v))
	}
	switch d.next() {
	case 'n':
		return p
	case 'c':
		return kindNode(fsClosureProp)
	case 'E':
		return kindNode(fsEscapingClosureProp)
	case 'C':
		// The same closure as an earlier argument: its index.
		kindNode(fsClosurePropPrevious)
		i := d.natural()
		if i < 0 {
			return nil
		}
		return addChild(p, d.indexNode(kFunctionSignatureSpecializationParamPayload, uint64(i)))
	case 'p':
		// One or more constants, each a kind letter (and its digits).
		for {
			switch d.next() {
			case 'S':
				p = kindNode(fsConstantPropStruct)
			case 'f':
				p = kindNode(fsConstantPropFunction)
			case 'g':
				p = kindNode(fsConstantPropGlobal)
			case 'i', 'd':
				v := uint64(fsConstantPropInteger)
				if d.text[d.pos-1] == 'd' {
					v = fsConstantPropFloat
				}
				p = kindNode(v)
				start := d.pos
				for isDigit(d.peek()) {
					d.next()
				}
				if d.pos == start {
					return nil
				}
				p = addChild(p, d.textNode(kFunctionSignatureSpecializationParamPayload, d.text[start:d.pos]))
			case 's':
				var enc string
				switch d.next() {
				case 'b':
					enc = "u8"
				case 'w':
					enc = "u16"
				case 'c':
					enc = "objc"
				default:
					return nil
				}
				p = kindNode(fsConstantPropString)
				p = addChild(p, d.textNode(kFunctionSignatureSpecializationParamPayload, enc))
			case 'k':
				p = kindNode(fsConstantPropKeyPath)
			default:
				// As Swift's: at the end of the name too, which steps
				// back onto the last letter and fails the name.
				d.back()
				return p
			}
			if p == nil {
				return nil
			}
		}
	case 'e':
		v := uint64(fsExistentialToGeneric)
		if d.nextIf('D') {
			v |= fsDead
		}
		if d.nextIf('G') {
			v |= fsOwnedToGuaranteed
		}
		if d.nextIf('O') {
			v |= fsGuaranteedToOwned
		}
		if d.nextIf('X') {
			v |= fsSROA
		}
		return kindNode(v)
	case 'd':
		v := uint64(fsDead)
		if d.nextIf('G') {
			v |= fsOwnedToGuaranteed
		}
		if d.nextIf('O') {
			v |= fsGuaranteedToOwned
		}
		if d.nextIf('X') {
			v |= fsSROA
		}
		return kindNode(v)
	case 'g':
		v := uint64(fsOwnedToGuaranteed)
		if d.nextIf('X') {
			v |= fsSROA
		}
		return kindNode(v)
	case 'o':
		v := uint64(fsGuaranteedToOwned)
		if d.nextIf('X') {
			v |= fsSROA
		}
		return kindNode(v)
	case 'x':
		return kindNode(fsSROA)
	case 'i':
		return kindNode(fsBoxToValue)
	case 's':
		return kindNode(fsBoxToStack)
	case 'r':
		return kindNode(fsInOutToOut)
	}
	return nil
}

var outlinedKinds = lazy[map[byte]kind]{build: func() map[byte]kind {
	return map[byte]kind{
		'B': kOutlinedInitializeWithTakeNoValueWitness, 'C': kOutlinedInitializeWithCopyNoValueWitness,
		'D': kOutlinedAssignWithTakeNoValueWitness, 'F': kOutlinedAssignWithCopyNoValueWitness,
		'H': kOutlinedDestroyNoValueWitness, 'y': kOutlinedCopy, 'e': kOutlinedConsume,
		'r': kOutlinedRetain, 's': kOutlinedRelease, 'b': kOutlinedInitializeWithTake,
		'c': kOutlinedInitializeWithCopy, 'd': kOutlinedAssignWithTake, 'f': kOutlinedAssignWithCopy,
		'h': kOutlinedDestroy, 'g': kOutlinedEnumGetTag,
	}
}}
