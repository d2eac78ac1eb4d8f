package swift

// Metatypes, archetypes, associated and dependent types, generic
// parameters and protocol conformances.

func (d *demangler) metatype() *node {
	popped := func(k kind) *node { return d.with(k, d.popKind(kType)) }
	switch d.next() {
	case 'a':
		return popped(kTypeMetadataAccessFunction)
	case 'A':
		return d.with(kReflectionMetadataAssocTypeDescriptor, d.popProtocolConformance())
	case 'b':
		return popped(kCanonicalSpecializedGenericTypeMetadataAccessFunction)
	case 'B':
		return popped(kReflectionMetadataBuiltinDescriptor)
	case 'c':
		return d.with(kProtocolConformanceDescriptor, d.popProtocolConformance())
	case 'C':
		t := d.popKind(kType)
		if t == nil || t.first() == nil || !isAnyGeneric(t.first().kind) {
			return nil
		}
		return d.with(kReflectionMetadataSuperclassDescriptor, t.first())
	case 'D':
		return popped(kTypeMetadataDemanglingCache)
	case 'f':
		return popped(kFullTypeMetadata)
	case 'F':
		return popped(kReflectionMetadataFieldDescriptor)
	case 'g':
		return d.with(kOpaqueTypeDescriptorAccessor, d.pop())
	case 'h':
		return d.with(kOpaqueTypeDescriptorAccessorImpl, d.pop())
	case 'i':
		return popped(kTypeMetadataInstantiationFunction)
	case 'I':
		return popped(kTypeMetadataInstantiationCache)
	case 'j':
		return d.with(kOpaqueTypeDescriptorAccessorKey, d.pop())
	case 'J':
		return d.with(kNoncanonicalSpecializedGenericTypeMetadataCache, d.pop())
	case 'k':
		return d.with(kOpaqueTypeDescriptorAccessorVar, d.pop())
	case 'K':
		return d.with(kMetadataInstantiationCache, d.pop())
	case 'l':
		return popped(kTypeMetadataSingletonInitializationCache)
	case 'L':
		return popped(kTypeMetadataLazyCache)
	case 'm':
		return popped(kMetaclass)
	case 'M':
		return popped(kCanonicalSpecializedGenericMetaclass)
	case 'n':
		return popped(kNominalTypeDescriptor)
	case 'N':
		return popped(kNoncanonicalSpecializedGenericTypeMetadata)
	case 'o':
		return popped(kClassMetadataBaseOffset)
	case 'p':
		return d.with(kProtocolDescriptor, d.popProtocol())
	case 'P':
		return popped(kGenericTypeMetadataPattern)
	case 'q':
		return d.with(kUniquable, d.pop())
	case 'Q':
		return d.with(kOpaqueTypeDescriptor, d.pop())
	case 'r':
		return popped(kTypeMetadataCompletionFunction)
	case 's':
		return popped(kObjCResilientClassStub)
	case 'S':
		return d.with(kProtocolSelfConformanceDescriptor, d.popProtocol())
	case 't':
		return popped(kFullObjCResilientClassStub)
	case 'u':
		return popped(kMethodLookupFunction)
	case 'U':
		return popped(kObjCMetadataUpdateFunction)
	case 'V':
		return d.with(kPropertyDescriptor, d.popIf(isEntity))
	case 'X':
		return d.privateContextDescriptor()
	case 'z':
		return popped(kCanonicalPrespecializedGenericTypeCachingOnceToken)
	}
	return nil
}

func (d *demangler) privateContextDescriptor() *node {
	switch d.next() {
	case 'E':
		return d.with(kExtensionDescriptor, d.popContext())
	case 'M':
		return d.with(kModuleDescriptor, d.popModule())
	case 'Y':
		disc := d.pop()
		if disc == nil {
			return nil
		}
		return d.with(kAnonymousDescriptor, d.popContext(), disc)
	case 'X':
		return d.with(kAnonymousDescriptor, d.popContext())
	case 'A':
		path := d.popAssocTypePath()
		if path == nil {
			return nil
		}
		return d.with(kAssociatedTypeGenericParamRef, d.popKind(kType), path)
	}
	return nil
}

func (d *demangler) archetype() *node {
	switch d.next() {
	case 'a':
		id := d.popKind(kIdentifier)
		arch := d.popTypeChild()
		t := d.typ(d.with(kAssociatedTypeRef, arch, id))
		d.addSubst(t)
		return t
	case 'O':
		return d.with(kOpaqueReturnTypeOf, d.popContext())
	case 'o':
		idx := d.index()
		lists, retro, ok := d.boundGenerics()
		if !ok {
			return nil
		}
		name := d.pop()
		if name == nil {
			return nil
		}
		op := d.with(kOpaqueType, name, d.indexNode(kIndex, uint64(int64(idx))))
		bg := d.newNode(kTypeList)
		if op == nil || bg == nil {
			return nil
		}
		for i := len(lists) - 1; i >= 0; i-- {
			bg.add(lists[i])
		}
		op.add(bg)
		op.add(retro)
		t := d.typ(op)
		d.addSubst(t)
		return t
	case 'r':
		return d.typ(d.newNode(kOpaqueReturnType))
	case 'R':
		i := d.index()
		if i < 0 {
			return nil
		}
		return d.typ(d.with(kOpaqueReturnType, d.indexNode(kOpaqueReturnTypeIndex, uint64(i))))
	case 'x':
		t := d.assocTypeSimple(nil)
		d.addSubst(t)
		return t
	case 'X':
		t := d.assocTypeCompound(nil)
		d.addSubst(t)
		return t
	case 'y':
		t := d.assocTypeSimple(d.genericParamIndexOrNil())
		d.addSubst(t)
		return t
	case 'Y':
		t := d.assocTypeCompound(d.genericParamIndexOrNil())
		d.addSubst(t)
		return t
	case 'z':
		t := d.assocTypeSimple(d.genericParam(0, 0))
		d.addSubst(t)
		return t
	case 'Z':
		t := d.assocTypeCompound(d.genericParam(0, 0))
		d.addSubst(t)
		return t
	case 'p':
		count := d.popTypeChild()
		pattern := d.popTypeChild()
		return d.typ(d.with(kPackExpansion, pattern, count))
	case 'e':
		pack := d.popTypeChild()
		level := d.index()
		if level < 0 {
			return nil
		}
		return d.typ(d.with(kPackElement, pack, d.indexNode(kPackElementLevel, uint64(level))))
	case 'P':
		return d.typ(d.popList(kPack, func() *node { return d.popKind(kType) }))
	case 'S':
		var k kind
		switch d.next() {
		case 'd':
			k = kSILPackDirect
		case 'i':
			k = kSILPackIndirect
		default:
			return nil
		}
		return d.typ(d.popList(k, func() *node { return d.popKind(kType) }))
	}
	return nil
}

// genericParamIndexOrNil is genericParamIndex where a missing base makes
// the associated type pop its base from the stack: keep it non-nil
// by construction (Swift passes the result through).
func (d *demangler) genericParamIndexOrNil() *node { return d.genericParamIndex() }

func (d *demangler) assocTypeSimple(base *node) *node {
	name := d.popAssocTypeName()
	var bt *node
	if base != nil {
		bt = d.typ(base)
	} else {
		bt = d.popKind(kType)
	}
	return d.typ(d.with(kDependentMemberType, bt, name))
}

func (d *demangler) assocTypeCompound(base *node) *node {
	var names []*node
	for {
		first := d.popKind(kFirstElementMarker) != nil
		n := d.popAssocTypeName()
		if n == nil {
			return nil
		}
		names = append(names, n)
		if first {
			break
		}
	}
	var bt *node
	if base != nil {
		bt = d.typ(base)
	} else {
		bt = d.popKind(kType)
	}
	for i := len(names) - 1; i >= 0; i-- {
		bt = d.typ(d.with(kDependentMemberType, bt, names[i]))
	}
	return bt
}

func (d *demangler) popAssocTypeName() *node {
	proto := d.popKind(kType)
	if proto != nil && !isProtocolNode(proto) {
		return nil
	}
	if proto == nil {
		proto = d.popKind(kProtocolSymbolicReference)
	}
	if proto == nil {
		proto = d.popKind(kObjectiveCProtocolSymbolicReference)
	}
	id := d.popKind(kIdentifier)
	at := d.with(kDependentAssociatedTypeRef, id)
	if at != nil && proto != nil {
		at.add(proto)
	}
	return at
}

// popAssocConformanceSubject pops what an associated conformance is
// about: a generic parameter (Self's) or a path of associated types.
func (d *demangler) popAssocConformanceSubject() *node {
	if t := d.popKind(kType); t != nil {
		if t.first().is(kDependentGenericParamType) {
			return t
		}
		d.push(t)
	}
	return d.popAssocTypePath()
}

func (d *demangler) popAssocTypePath() *node {
	return d.popList(kAssocTypePath, d.popAssocTypeName)
}

func (d *demangler) genericParam(depth, index int) *node {
	if depth < 0 || index < 0 {
		return nil
	}
	return d.with(kDependentGenericParamType, d.indexNode(kIndex, uint64(depth)), d.indexNode(kIndex, uint64(index)))
}

func (d *demangler) genericParamIndex() *node {
	if d.nextIf('d') {
		depth := d.index() + 1
		index := d.index()
		return d.genericParam(depth, index)
	}
	if d.nextIf('z') {
		return d.genericParam(0, 0)
	}
	if d.nextIf('s') {
		return d.newNode(kConstrainedExistentialSelf)
	}
	return d.genericParam(0, d.index()+1)
}

func (d *demangler) popProtocolConformance() *node {
	sig := d.popKind(kDependentGenericSignature)
	mod := d.popModule()
	proto := d.popProtocol()
	t := d.popKind(kType)
	var id *node
	if t == nil {
		id = d.popKind(kIdentifier)
		t = d.popKind(kType)
	}
	if sig != nil {
		t = d.typ(d.with(kDependentGenericType, sig, t))
	}
	c := d.with(kProtocolConformance, t, proto, mod)
	if c != nil && id != nil {
		c.add(id)
	}
	return c
}
