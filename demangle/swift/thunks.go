package swift

// Thunks, specialization markers and other global suffixes (the "T"
// operator), automatic differentiation entities and outlined bridged methods.

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
	fsConstantPropStruct   = 10
	fsClosurePropPrevious  = 11
	fsEscapingClosureProp  = 12
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
		path := d.popAssocConformanceSubject()
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
