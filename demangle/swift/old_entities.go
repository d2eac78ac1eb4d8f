package swift

// Entities of the Swift 3 mangling and their generics: accessors, generic
// parameters, dependent and associated types, signatures, archetypes, tuples.

var oldAccessors = lazy[map[byte]kind]{build: func() map[byte]kind {
	return map[byte]kind{
		'g': kGetter, 'G': kGlobalGetter, 's': kSetter, 'm': kMaterializeForSet, 'w': kWillSet,
		'W': kDidSet, 'r': kReadAccessor, 'M': kModifyAccessor,
	}
}}

func (o *oldDemangler) entity(depth int) *node {
	if depth > oldMaxDepth {
		return nil
	}
	static := o.nextIf('Z')
	var basic kind
	switch {
	case o.nextIf('F'):
		basic = kFunction
	case o.nextIf('v'):
		basic = kVariable
	case o.nextIf('I'):
		basic = kInitializer
	case o.nextIf('i'):
		basic = kSubscript
	default:
		return o.nominalType(depth + 1)
	}
	ctx := o.context(depth + 1)
	if ctx == nil {
		return nil
	}
	var k kind
	hasType, wrap := true, false
	var name *node
	switch c := o.peek(); {
	case c == 'D':
		o.pos++
		k, hasType = kDeallocator, false
	case c == 'Z':
		o.pos++
		k, hasType = kIsolatedDeallocator, false
	case c == 'd':
		o.pos++
		k, hasType = kDestructor, false
	case c == 'e':
		o.pos++
		k, hasType = kIVarInitializer, false
	case c == 'E':
		o.pos++
		k, hasType = kIVarDestroyer, false
	case c == 'C':
		o.pos++
		k = kAllocator
	case c == 'c':
		o.pos++
		k = kConstructor
	case c == 'a' || c == 'l':
		o.pos++
		wrap = true
		mut := c == 'a'
		switch o.next() {
		case 'O':
			k = map[bool]kind{true: kOwningMutableAddressor, false: kOwningAddressor}[mut]
		case 'o':
			k = map[bool]kind{true: kNativeOwningMutableAddressor, false: kNativeOwningAddressor}[mut]
		case 'p':
			k = map[bool]kind{true: kNativePinningMutableAddressor, false: kNativePinningAddressor}[mut]
		case 'u':
			k = map[bool]kind{true: kUnsafeMutableAddressor, false: kUnsafeAddressor}[mut]
		default:
			return nil
		}
		if name = o.declName(depth + 1); name == nil {
			return nil
		}
	case oldAccessors.get()[c] != kNone:
		o.pos++
		wrap = true
		k = oldAccessors.get()[c]
		if name = o.declName(depth + 1); name == nil {
			return nil
		}
	case c == 'U' || c == 'u':
		o.pos++
		k = kExplicitClosure
		if c == 'u' {
			k = kImplicitClosure
		}
		if name = o.indexAsNodeOld(depth + 1); name == nil {
			return nil
		}
	case basic == kInitializer:
		switch {
		case o.nextIf('A'):
			k = kDefaultArgumentInitializer
			if name = o.indexAsNodeOld(depth + 1); name == nil {
				return nil
			}
		case o.nextIf('i'):
			k = kInitializer
		default:
			return nil
		}
		hasType = false
	default:
		k = basic
		if name = o.declName(depth + 1); name == nil {
			return nil
		}
	}
	e := o.newNode(k)
	if e == nil {
		return nil
	}
	if wrap {
		sub := false
		switch name.kind {
		case kIdentifier:
			if name.text == "subscript" {
				sub, name = true, nil
			}
		case kPrivateDeclName:
			if name.numChildren() > 1 && name.child(1).text == "subscript" {
				sub = true
				name = o.with(kPrivateDeclName, name.first())
			}
		}
		wk := kVariable
		if sub {
			wk = kSubscript
		}
		w := o.newNode(wk)
		if w == nil {
			return nil
		}
		w.add(ctx)
		if !sub {
			w.add(name)
		}
		if hasType && !child(w, o.oldType(depth+1)) {
			return nil
		}
		if sub && name != nil {
			w.add(name)
		}
		e.add(w)
	} else {
		e.add(ctx)
		e.add(name)
		if hasType && !child(e, o.oldType(depth+1)) {
			return nil
		}
	}
	if static {
		return o.with(kStatic, e)
	}
	return e
}

func (o *oldDemangler) genericParamIndexOld(depth int) *node {
	var d, i uint64
	switch {
	case o.nextIf('d'):
		var ok bool
		if d, ok = o.indexOld(); !ok {
			return nil
		}
		d++
		if i, ok = o.indexOld(); !ok {
			return nil
		}
	case o.nextIf('x'):
	default:
		var ok bool
		if i, ok = o.indexOld(); !ok {
			return nil
		}
		i++
	}
	return o.with(kDependentGenericParamType, o.indexNode(kIndex, d), o.indexNode(kIndex, i))
}

func (o *oldDemangler) dependentMemberTypeName(base *node, depth int) *node {
	var assoc *node
	if o.nextIf('S') {
		assoc = o.substitutionIndex(depth + 1)
		if !assoc.is(kDependentAssociatedTypeRef) {
			return nil
		}
	} else {
		var proto *node
		if o.nextIf('P') {
			if proto = o.protocolName(depth + 1); proto == nil {
				return nil
			}
		}
		assoc = o.with(kDependentAssociatedTypeRef, o.identifier(depth+1, kNone))
		if assoc == nil {
			return nil
		}
		assoc.add(proto)
		o.subs = append(o.subs, assoc)
	}
	return o.with(kDependentMemberType, base, assoc)
}

func (o *oldDemangler) assocTypeSimpleOld(depth int) *node {
	base := o.genericParamIndexOld(depth + 1)
	if base == nil {
		return nil
	}
	return o.dependentMemberTypeName(o.typ(base), depth+1)
}

func (o *oldDemangler) assocTypeCompoundOld(depth int) *node {
	base := o.genericParamIndexOld(depth + 1)
	if base == nil {
		return nil
	}
	for !o.nextIf('_') {
		if base = o.dependentMemberTypeName(o.typ(base), depth+1); base == nil {
			return nil
		}
	}
	return base
}

func (o *oldDemangler) dependentType(depth int) *node {
	if o.empty() {
		return nil
	}
	if c := o.peek(); c != 'd' && c != '_' && !isDigit(c) {
		base := o.oldType(depth + 1)
		if base == nil {
			return nil
		}
		return o.dependentMemberTypeName(base, depth+1)
	}
	return o.genericParamIndexOld(depth + 1)
}

func (o *oldDemangler) constrainedType(depth int) *node {
	var t *node
	switch {
	case o.nextIf('w'):
		t = o.assocTypeSimpleOld(depth + 1)
	case o.nextIf('W'):
		t = o.assocTypeCompoundOld(depth + 1)
	default:
		t = o.genericParamIndexOld(depth + 1)
	}
	return o.typ(t)
}

func (o *oldDemangler) genericSignatureOld(depth int, pseudo bool) *node {
	k := kDependentGenericSignature
	if pseudo {
		k = kDependentPseudogenericSignature
	}
	sig := o.newNode(k)
	if sig == nil {
		return nil
	}
	count, any := uint64(0), false
	for o.peek() != 'R' && o.peek() != 'r' {
		if o.nextIf('z') {
			count = 0
		} else if i, ok := o.indexOld(); ok {
			count = i + 1
		} else {
			return nil
		}
		any = true
		sig.add(o.indexNode(kDependentGenericParamCount, count))
	}
	if !any {
		sig.add(o.indexNode(kDependentGenericParamCount, 1))
	}
	if o.nextIf('r') {
		return sig
	}
	if !o.nextIf('R') {
		return nil
	}
	for !o.nextIf('r') {
		if !child(sig, o.genericRequirementOld(depth+1)) {
			return nil
		}
	}
	return sig
}

func (o *oldDemangler) genericRequirementOld(depth int) *node {
	ct := o.constrainedType(depth + 1)
	if ct == nil {
		return nil
	}
	if o.nextIf('z') {
		return o.with(kDependentGenericSameTypeRequirement, ct, o.oldType(depth+1))
	}
	if o.nextIf('l') {
		c := o.next()
		var size, align uint64
		hasSize, hasAlign := false, false
		switch c {
		case 'U', 'R', 'N', 'T', 'B':
		case 'E', 'M':
			var ok bool
			if size, ok = o.naturalOld(); !ok || !o.nextIf('_') {
				return nil
			}
			if align, ok = o.naturalOld(); !ok {
				return nil
			}
			hasSize, hasAlign = true, true
		case 'e', 'm', 'S':
			var ok bool
			if size, ok = o.naturalOld(); !ok {
				return nil
			}
			hasSize = true
		default:
			return nil
		}
		r := o.with(kDependentGenericLayoutRequirement, ct, o.textNode(kIdentifier, string(c)))
		if r != nil && hasSize {
			r.add(o.indexNode(kNumber, size))
			if hasAlign {
				r.add(o.indexNode(kNumber, align))
			}
		}
		return r
	}
	if o.empty() {
		return nil
	}
	var constraint *node
	switch o.peek() {
	case 'C':
		constraint = o.oldType(depth + 1)
	case 'S':
		o.pos++
		sub := o.substitutionIndex(depth + 1)
		var tn *node
		switch {
		case sub == nil:
			return nil
		case sub.kind == kProtocol || sub.kind == kClass:
			tn = sub
		case sub.kind == kModule:
			tn = o.protocolGivenContext(sub, depth+1)
		}
		constraint = o.typ(tn)
	default:
		constraint = o.protocolName(depth + 1)
	}
	return o.with(kDependentGenericConformanceRequirement, ct, constraint)
}

func (o *oldDemangler) archetypeType(depth int) *node {
	assoc := func(root *node) *node {
		r := o.with(kAssociatedTypeRef, root, o.identifier(depth+1, kNone))
		if r != nil {
			o.subs = append(o.subs, r)
		}
		return r
	}
	switch {
	case o.nextIf('Q'):
		root := o.archetypeType(depth + 1)
		if root == nil {
			return nil
		}
		return assoc(root)
	case o.nextIf('S'):
		sub := o.substitutionIndex(depth + 1)
		if sub == nil {
			return nil
		}
		return assoc(sub)
	case o.nextIf('s'):
		return assoc(o.textNode(kModule, "Swift"))
	}
	return nil
}

func (o *oldDemangler) tuple(variadic bool, depth int) *node {
	t := o.newNode(kTuple)
	if t == nil {
		return nil
	}
	var elt *node
	for !o.nextIf('_') {
		if o.empty() {
			return nil
		}
		elt = o.newNode(kTupleElement)
		if elt == nil {
			return nil
		}
		if c := o.peek(); isDigit(c) || c == 'o' {
			if !child(elt, o.identifier(depth+1, kTupleElementName)) {
				return nil
			}
		}
		if !child(elt, o.oldType(depth+1)) {
			return nil
		}
		t.add(elt)
	}
	if variadic && elt != nil {
		elt.children = append([]*node{o.newNode(kVariadicMarker)}, elt.children...)
		if elt.children[0] == nil {
			return nil
		}
	}
	return t
}
