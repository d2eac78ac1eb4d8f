package swift

// Function signature specialization parameter kinds (Swift's
// FunctionSigSpecializationParamKind): values below 64 are exclusive, the
// bits from 64 up combine.
const (
	fsConstantPropFunction = 0
	fsConstantPropGlobal   = 1
	fsConstantPropInteger  = 2
	fsConstantPropFloat    = 3
	fsConstantPropString   = 4
	fsClosureProp          = 5
	fsBoxToValue           = 6
	fsBoxToStack           = 7
	fsInOutToOut           = 8
	fsConstantPropKeyPath  = 9
	fsDead                 = 1 << 6
	fsOwnedToGuaranteed    = 1 << 7
	fsSROA                 = 1 << 8
	fsGuaranteedToOwned    = 1 << 9
	fsExistentialToGeneric = 1 << 10
)

func (d *demangler) thunkOrSpecialization() *node {
	c := d.next()
	switch c {
	case 'T':
		if d.next() == 'I' {
			return d.with(kSILThunkIdentity, d.popIf(isEntity))
		}
		return nil
	case 'c':
		return d.with(kCurryThunk, d.popIf(isEntity))
	case 'j':
		return d.with(kDispatchThunk, d.popIf(isEntity))
	case 'q':
		return d.with(kMethodDescriptor, d.popIf(isEntity))
	case 'o':
		return d.newNode(kObjCAttribute)
	case 'O':
		return d.newNode(kNonObjCAttribute)
	case 'D':
		return d.newNode(kDynamicAttribute)
	case 'd':
		return d.newNode(kDirectMethodReferenceAttribute)
	case 'E':
		return d.newNode(kDistributedThunk)
	case 'F':
		return d.newNode(kDistributedAccessor)
	case 'a':
		return d.newNode(kPartialApplyObjCForwarder)
	case 'A':
		return d.newNode(kPartialApplyForwarder)
	case 'm':
		return d.newNode(kMergedFunction)
	case 'X':
		return d.newNode(kDynamicallyReplaceableFunctionVar)
	case 'x':
		return d.newNode(kDynamicallyReplaceableFunctionKey)
	case 'I':
		return d.newNode(kDynamicallyReplaceableFunctionImpl)
	case 'Y', 'Q':
		disc := d.indexAsNode()
		if c == 'Q' {
			return d.with(kAsyncAwaitResumePartialFunction, disc)
		}
		return d.with(kAsyncSuspendResumePartialFunction, disc)
	case 'C':
		return d.with(kCoroutineContinuationPrototype, d.popKind(kType))
	case 'z', 'Z':
		flag := d.indexAsNode()
		sig := d.popKind(kDependentGenericSignature)
		res := d.popKind(kType)
		impl := d.popKind(kType)
		k := kObjCAsyncCompletionHandlerImpl
		if c == 'Z' {
			k = kPredefinedObjCAsyncCompletionHandlerImpl
		}
		n := d.with(k, impl, res, flag)
		if n != nil && sig != nil {
			n.add(sig)
		}
		return n
	case 'V':
		base := d.popIf(isEntity)
		derived := d.popIf(isEntity)
		return d.with(kVTableThunk, derived, base)
	case 'W':
		e := d.popIf(isEntity)
		conf := d.popProtocolConformance()
		return d.with(kProtocolWitness, conf, e)
	case 'S':
		return d.with(kProtocolSelfConformanceWitness, d.popIf(isEntity))
	case 'R', 'r', 'y':
		k := kReabstractionThunk
		if c == 'R' {
			k = kReabstractionThunkHelper
		} else if c == 'y' {
			k = kReabstractionThunkHelperWithSelf
		}
		t := d.newNode(k)
		if t == nil {
			return nil
		}
		if sig := d.popKind(kDependentGenericSignature); sig != nil {
			t.add(sig)
		}
		if k == kReabstractionThunkHelperWithSelf {
			t = addChild(t, d.popKind(kType))
		}
		t = addChild(t, d.popKind(kType))
		return addChild(t, d.popKind(kType))
	case 'g':
		return d.genericSpecialization(kGenericSpecialization, nil)
	case 'G':
		return d.genericSpecialization(kGenericSpecializationNotReAbstracted, nil)
	case 'B':
		return d.genericSpecialization(kGenericSpecializationInResilienceDomain, nil)
	case 't':
		d.back()
		var dropped []*node
		for d.nextIf('t') {
			n := d.natural()
			v := uint64(0)
			if n >= 0 {
				v = uint64(n + 1)
			}
			dropped = append(dropped, d.indexNode(kDroppedArgument, v))
		}
		var k kind
		switch d.next() {
		case 'g':
			k = kGenericSpecialization
		case 'G':
			k = kGenericSpecializationNotReAbstracted
		case 'B':
			k = kGenericSpecializationInResilienceDomain
		default:
			return nil
		}
		return d.genericSpecialization(k, dropped)
	case 's':
		return d.genericSpecialization(kGenericSpecializationPrespecialized, nil)
	case 'i':
		return d.genericSpecialization(kInlinedGenericFunction, nil)
	case 'p', 'P':
		k := kGenericPartialSpecialization
		if c == 'P' {
			k = kGenericPartialSpecializationNotReAbstracted
		}
		spec := d.specAttributes(k)
		param := d.with(kGenericSpecializationParam, d.popKind(kType))
		return addChild(spec, param)
	case 'f':
		return d.functionSpecialization()
	case 'K', 'k':
		var k kind
		switch {
		case d.nextIfStr("mu"):
			k = kKeyPathUnappliedMethodThunkHelper
		case d.nextIfStr("MA"):
			k = kKeyPathAppliedMethodThunkHelper
		case c == 'K':
			k = kKeyPathGetterThunkHelper
		default:
			k = kKeyPathSetterThunkHelper
		}
		serialized := d.nextIf('q')
		var types []*node
		n := d.pop()
		if n == nil || n.kind != kType {
			return nil
		}
		for n != nil && n.kind == kType {
			types = append(types, n)
			n = d.pop()
		}
		if n == nil {
			return nil
		}
		var r *node
		if n.kind == kDependentGenericSignature {
			decl := d.pop()
			if decl == nil {
				return nil
			}
			r = d.with(k, decl, n)
		} else {
			r = d.with(k, n)
		}
		if r == nil {
			return nil
		}
		for i := len(types) - 1; i >= 0; i-- {
			r.add(types[i])
		}
		if serialized {
			r.add(d.newNode(kIsSerialized))
		}
		return r
	case 'l':
		n := d.popAssocTypeName()
		if n == nil {
			return nil
		}
		return d.with(kAssociatedTypeDescriptor, n)
	case 'L':
		return d.with(kProtocolRequirementsBaseDescriptor, d.popProtocol())
	case 'M':
		return d.with(kDefaultAssociatedTypeMetadataAccessor, d.popAssocTypeName())
	case 'n', 'N':
		req := d.popProtocol()
		path := d.popAssocTypePath()
		proto := d.popKind(kType)
		k := kAssociatedConformanceDescriptor
		if c == 'N' {
			k = kDefaultAssociatedConformanceAccessor
		}
		return d.with(k, proto, path, req)
	case 'b':
		req := d.popProtocol()
		proto := d.popKind(kType)
		return d.with(kBaseConformanceDescriptor, proto, req)
	case 'H', 'h':
		k := kKeyPathHashThunkHelper
		if c == 'H' {
			k = kKeyPathEqualsThunkHelper
		}
		serialized := d.nextIf('q')
		var sig *node
		var types []*node
		n := d.pop()
		switch {
		case n == nil:
			return nil
		case n.kind == kDependentGenericSignature:
			sig = n
		case n.kind == kType:
			types = append(types, n)
		default:
			return nil
		}
		for n := d.pop(); n != nil; n = d.pop() {
			if n.kind != kType {
				return nil
			}
			types = append(types, n)
		}
		r := d.newNode(k)
		if r == nil {
			return nil
		}
		for i := len(types) - 1; i >= 0; i-- {
			r.add(types[i])
		}
		r.add(sig)
		if serialized {
			r.add(d.newNode(kIsSerialized))
		}
		return r
	case 'v':
		i := d.index()
		if i < 0 {
			return nil
		}
		if d.next() == 'r' {
			return d.indexNode(kOutlinedReadOnlyObject, uint64(i))
		}
		return d.indexNode(kOutlinedVariable, uint64(i))
	case 'e':
		p := d.bridgedMethodParams()
		if p == "" {
			return nil
		}
		return d.textNode(kOutlinedBridgedMethod, p)
	case 'u':
		return d.newNode(kAsyncFunctionPointer)
	case 'U':
		actor := d.popKind(kType)
		if actor == nil {
			return nil
		}
		re := d.pop()
		if re == nil {
			return nil
		}
		return d.with(kReabstractionThunkHelperWithGlobalActor, re, actor)
	case 'J':
		switch d.peek() {
		case 'S':
			d.next()
			return d.autoDiffSubsetParametersThunk()
		case 'O':
			d.next()
			return d.autoDiffSelfReorderingThunk()
		case 'V':
			d.next()
			return d.autoDiffFunction(kAutoDiffDerivativeVTableThunk)
		}
		return d.autoDiffFunction(kAutoDiffFunction)
	case 'w':
		switch d.next() {
		case 'b':
			return d.newNode(kBackDeploymentThunk)
		case 'B':
			return d.newNode(kBackDeploymentFallback)
		case 'c':
			return d.newNode(kCoroFunctionPointer)
		case 'd':
			return d.newNode(kDefaultOverride)
		case 'S':
			return d.newNode(kHasSymbolQuery)
		}
		return nil
	}
	return nil
}

func (d *demangler) popAllReversed(r *node) *node {
	if r == nil {
		return nil
	}
	start := len(r.children)
	for n := d.pop(); n != nil; n = d.pop() {
		r.add(n)
	}
	r.reverseFrom(start)
	return r
}

func (d *demangler) autoDiffFunction(k kind) *node {
	r := d.popAllReversed(d.newNode(k))
	r = addChild(r, d.autoDiffFunctionKind())
	r = addChild(r, d.indexSubset())
	if !d.nextIf('p') {
		return nil
	}
	r = addChild(r, d.indexSubset())
	if !d.nextIf('r') {
		return nil
	}
	return r
}

func (d *demangler) autoDiffFunctionKind() *node {
	switch c := d.next(); c {
	case 'f', 'r', 'd', 'p':
		return d.indexNode(kAutoDiffFunctionKind, uint64(c))
	}
	return nil
}

func (d *demangler) autoDiffSubsetParametersThunk() *node {
	r := d.popAllReversed(d.newNode(kAutoDiffSubsetParametersThunk))
	r = addChild(r, d.autoDiffFunctionKind())
	r = addChild(r, d.indexSubset())
	if !d.nextIf('p') {
		return nil
	}
	r = addChild(r, d.indexSubset())
	if !d.nextIf('r') {
		return nil
	}
	r = addChild(r, d.indexSubset())
	if !d.nextIf('P') {
		return nil
	}
	return r
}

func (d *demangler) autoDiffSelfReorderingThunk() *node {
	r := d.newNode(kAutoDiffSelfReorderingReabstractionThunk)
	if r == nil {
		return nil
	}
	r.add(d.popKind(kDependentGenericSignature))
	r = addChild(r, d.popKind(kType))
	r = addChild(r, d.popKind(kType))
	if r != nil {
		r.reverseFrom(0)
	}
	return addChild(r, d.autoDiffFunctionKind())
}

func (d *demangler) indexSubset() *node {
	start := d.pos
	for d.peek() == 'S' || d.peek() == 'U' {
		d.next()
	}
	if d.pos == start {
		return nil
	}
	return d.textNode(kIndexSubset, d.text[start:d.pos])
}

func (d *demangler) differentiabilityWitness() *node {
	r := d.newNode(kDifferentiabilityWitness)
	if r == nil {
		return nil
	}
	sig := d.popKind(kDependentGenericSignature)
	r = d.popAllReversed(r)
	var k byte
	switch c := d.next(); c {
	case 'f', 'r', 'd', 'l':
		k = c
	default:
		return nil
	}
	r = addChild(r, d.indexNode(kIndex, uint64(k)))
	r = addChild(r, d.indexSubset())
	if !d.nextIf('p') {
		return nil
	}
	r = addChild(r, d.indexSubset())
	if !d.nextIf('r') {
		return nil
	}
	if r != nil {
		r.add(sig)
	}
	return r
}

func (d *demangler) bridgedMethodParams() string {
	if d.nextIf('_') {
		return ""
	}
	start := d.pos
	switch d.next() {
	case 'o', 'p', 'a', 'm':
	default:
		return ""
	}
	for !d.nextIf('_') {
		switch d.next() {
		case 'n', 'b', 'g':
		default:
			return ""
		}
	}
	return d.text[start : d.pos-1]
}

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
		k, ok := outlinedKinds[oc]
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
