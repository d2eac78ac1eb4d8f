package swift

// Generic and function specializations and their parameters.

func (d *demangler) specAttributes(k kind) *node {
	serialized := d.nextIf('q')
	asyncRemoved := d.nextIf('a')
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
		param := spec.child(i)
		if param.kind != kFunctionSignatureSpecializationParam || param.numChildren() == 0 {
			continue
		}
		pk := param.first().index
		switch pk {
		case fsConstantPropFunction, fsConstantPropGlobal, fsConstantPropString, fsConstantPropKeyPath, fsClosureProp:
			fixed := param.numChildren()
			for t := d.popKind(kType); t != nil; t = d.popKind(kType) {
				if pk != fsClosureProp && pk != fsConstantPropKeyPath {
					return nil
				}
				param.add(t)
			}
			name := d.popKind(kIdentifier)
			if name == nil {
				return nil
			}
			text := name.text
			if pk == fsConstantPropString && len(text) > 0 && text[0] == '_' {
				text = text[1:]
			}
			param.add(d.textNode(kFunctionSignatureSpecializationParamPayload, text))
			param.reverseFrom(fixed)
		}
	}
	return spec
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
	case 'p':
		switch d.next() {
		case 'f':
			return kindNode(fsConstantPropFunction)
		case 'g':
			return kindNode(fsConstantPropGlobal)
		case 'i', 'd':
			v := uint64(fsConstantPropInteger)
			if d.text[d.pos-1] == 'd' {
				v = fsConstantPropFloat
			}
			p.add(d.indexNode(kFunctionSignatureSpecializationParamKind, v))
			start := d.pos
			for isDigit(d.peek()) {
				d.next()
			}
			if d.pos == start {
				return nil
			}
			return addChild(p, d.textNode(kFunctionSignatureSpecializationParamPayload, d.text[start:d.pos]))
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
			p.add(d.indexNode(kFunctionSignatureSpecializationParamKind, fsConstantPropString))
			return addChild(p, d.textNode(kFunctionSignatureSpecializationParamPayload, enc))
		case 'k':
			return kindNode(fsConstantPropKeyPath)
		}
		return nil
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

var outlinedKinds = map[byte]kind{
	'B': kOutlinedInitializeWithTakeNoValueWitness, 'C': kOutlinedInitializeWithCopyNoValueWitness,
	'D': kOutlinedAssignWithTakeNoValueWitness, 'F': kOutlinedAssignWithCopyNoValueWitness,
	'H': kOutlinedDestroyNoValueWitness, 'y': kOutlinedCopy, 'e': kOutlinedConsume,
	'r': kOutlinedRetain, 's': kOutlinedRelease, 'b': kOutlinedInitializeWithTake,
	'c': kOutlinedInitializeWithCopy, 'd': kOutlinedAssignWithTake, 'f': kOutlinedAssignWithCopy,
	'h': kOutlinedDestroy, 'g': kOutlinedEnumGetTag,
}
