package swift

// Witnesses, special types and metatype representations.

func (d *demangler) witness() *node {
	c := d.next()
	switch c {
	case 'C':
		return d.with(kEnumCase, d.popIf(isEntity))
	case 'V':
		return d.with(kValueWitnessTable, d.popKind(kType))
	case 'v':
		var dir uint64
		switch d.next() {
		case 'd':
			dir = 0
		case 'i':
			dir = 1
		default:
			return nil
		}
		return d.with(kFieldOffset, d.indexNode(kDirectness, dir), d.popIf(isEntity))
	case 'S':
		return d.with(kProtocolSelfConformanceWitnessTable, d.popProtocol())
	case 'P':
		return d.with(kProtocolWitnessTable, d.popProtocolConformance())
	case 'p':
		return d.with(kProtocolWitnessTablePattern, d.popProtocolConformance())
	case 'G':
		return d.with(kGenericProtocolWitnessTable, d.popProtocolConformance())
	case 'I':
		return d.with(kGenericProtocolWitnessTableInstantiationFunction, d.popProtocolConformance())
	case 'r':
		return d.with(kResilientProtocolWitnessTable, d.popProtocolConformance())
	case 'l', 'L':
		conf := d.popProtocolConformance()
		t := d.popKind(kType)
		if c == 'l' {
			return d.with(kLazyProtocolWitnessTableAccessor, t, conf)
		}
		return d.with(kLazyProtocolWitnessTableCacheVariable, t, conf)
	case 'a':
		return d.with(kProtocolWitnessTableAccessor, d.popProtocolConformance())
	case 't':
		name := d.popIf(isDeclName)
		conf := d.popProtocolConformance()
		return d.with(kAssociatedTypeMetadataAccessor, conf, name)
	case 'T':
		proto := d.popKind(kType)
		path := d.popAssocTypePath()
		conf := d.popProtocolConformance()
		return d.with(kAssociatedTypeWitnessTableAccessor, conf, path, proto)
	case 'b':
		proto := d.popKind(kType)
		conf := d.popProtocolConformance()
		return d.with(kBaseWitnessTableAccessor, conf, proto)
	case 'O':
		oc := d.next()
		switch oc {
		case 'i', 'j':
			k := kOutlinedEnumTagStore
			if oc == 'j' {
				k = kOutlinedEnumProjectDataForLoad
			}
			idx := d.indexAsNode()
			if sig := d.popKind(kDependentGenericSignature); sig != nil {
				return d.with(k, d.popKind(kType), sig, idx)
			}
			return d.with(k, d.popKind(kType), idx)
		}
		k, ok := outlinedKinds.get()[oc]
		if !ok {
			return nil
		}
		if sig := d.popKind(kDependentGenericSignature); sig != nil {
			return d.with(k, d.popKind(kType), sig)
		}
		return d.with(k, d.popKind(kType))
	case 'Z', 'z':
		list := d.newNode(kGlobalVariableOnceDeclList)
		if list == nil {
			return nil
		}
		var vars []*node
		for d.popKind(kFirstElementMarker) != nil {
			id := d.popIf(isDeclName)
			if id == nil {
				return nil
			}
			vars = append(vars, id)
		}
		for i := len(vars) - 1; i >= 0; i-- {
			list.add(vars[i])
		}
		ctx := d.popContext()
		if ctx == nil {
			return nil
		}
		k := kGlobalVariableOnceToken
		if c == 'Z' {
			k = kGlobalVariableOnceFunction
		}
		return d.with(k, ctx, list)
	case 'J':
		return d.differentiabilityWitness()
	}
	return nil
}

func (d *demangler) specialType() *node {
	c := d.next()
	switch c {
	case 'E':
		return d.popFunctionType(kNoEscapeFunctionType, false)
	case 'A':
		return d.popFunctionType(kEscapingAutoClosureType, false)
	case 'f':
		return d.popFunctionType(kThinFunctionType, false)
	case 'K':
		return d.popFunctionType(kAutoClosureType, false)
	case 'U':
		return d.popFunctionType(kUncurriedFunctionType, false)
	case 'L':
		return d.popFunctionType(kEscapingObjCBlock, false)
	case 'B':
		return d.popFunctionType(kObjCBlock, false)
	case 'O':
		return d.popFunctionType(kCalledOnceFunctionType, false)
	case 'C':
		return d.popFunctionType(kCFunctionPointer, false)
	case 'g', 'G':
		t := d.popKind(kType)
		var sig *node
		if c == 'G' {
			sig = d.popKind(kDependentGenericSignature)
		}
		if sig != nil {
			return d.with(kExtendedExistentialTypeShape, sig, t)
		}
		return d.with(kExtendedExistentialTypeShape, t)
	case 'j':
		return nil // symbolic extended existential: needs a symbolic reference
	case 'z':
		switch d.next() {
		case 'B':
			return d.popFunctionType(kObjCBlock, true)
		case 'C':
			return d.popFunctionType(kCFunctionPointer, true)
		}
		return nil
	case 'o':
		return d.typ(d.with(kUnowned, d.popKind(kType)))
	case 'u':
		return d.typ(d.with(kUnmanaged, d.popKind(kType)))
	case 'w':
		return d.typ(d.with(kWeak, d.popKind(kType)))
	case 'b':
		return d.typ(d.with(kSILBoxType, d.popKind(kType)))
	case 'D':
		return d.typ(d.with(kDynamicSelf, d.popKind(kType)))
	case 'M', 'm':
		mtr := d.metatypeRepresentation()
		t := d.popKind(kType)
		if c == 'M' {
			return d.typ(d.with(kMetatype, mtr, t))
		}
		return d.typ(d.with(kExistentialMetatype, mtr, t))
	case 'P':
		reqs := d.popList(kConstrainedExistentialRequirementList, func() *node { return d.popIf(isRequirement) })
		if reqs != nil && reqs.numChildren() == 0 {
			// The grammar has no empty form here.
			return nil
		}
		base := d.popKind(kType)
		return d.typ(d.with(kConstrainedExistential, base, reqs))
	case 'p':
		return d.typ(d.with(kExistentialMetatype, d.popKind(kType)))
	case 'c':
		super := d.popKind(kType)
		protos := d.protocolList()
		return d.typ(d.with(kProtocolListWithClass, protos, super))
	case 'l':
		return d.typ(d.with(kProtocolListWithAnyObject, d.protocolList()))
	case 'X', 'x':
		var sig, args *node
		if c == 'X' {
			if sig = d.popKind(kDependentGenericSignature); sig == nil {
				return nil
			}
			if args = d.popTypeList(); args == nil {
				return nil
			}
		}
		fields := d.popTypeList()
		if fields == nil {
			return nil
		}
		layout := d.newNode(kSILBoxLayout)
		if layout == nil {
			return nil
		}
		for _, f := range fields.children {
			k := kSILBoxImmutableField
			if f.first().is(kInOut) {
				k = kSILBoxMutableField
				f = d.typ(f.first().first())
			}
			layout.add(d.with(k, f))
		}
		box := d.with(kSILBoxTypeWithLayout, layout)
		if box != nil && sig != nil {
			box.add(sig)
			box.add(args)
		}
		return d.typ(box)
	case 'Y':
		return d.anyGenericType(kOtherNominalType)
	case 'Z':
		types := d.popTypeList()
		name := d.popKind(kIdentifier)
		parent := d.popContext()
		anon := d.newNode(kAnonymousContext)
		anon = addChild(anon, name)
		anon = addChild(anon, parent)
		return addChild(anon, types)
	case 'e':
		return d.typ(d.newNode(kErrorType))
	case 'S':
		switch d.next() {
		case 'q':
			return d.typ(d.with(kSugaredOptional, d.popKind(kType)))
		case 'a':
			return d.typ(d.with(kSugaredArray, d.popKind(kType)))
		case 'A':
			elem := d.popKind(kType)
			count := d.popKind(kType)
			return d.typ(d.with(kSugaredInlineArray, count, elem))
		case 'D':
			v := d.popKind(kType)
			k := d.popKind(kType)
			return d.typ(d.with(kSugaredDictionary, k, v))
		case 'p':
			return d.typ(d.with(kSugaredParen, d.popKind(kType)))
		}
		return nil
	}
	return nil
}

func (d *demangler) metatypeRepresentation() *node {
	switch d.next() {
	case 't':
		return d.textNode(kMetatypeRepresentation, "@thin")
	case 'T':
		return d.textNode(kMetatypeRepresentation, "@thick")
	case 'o':
		return d.textNode(kMetatypeRepresentation, "@objc_metatype")
	}
	return nil
}
