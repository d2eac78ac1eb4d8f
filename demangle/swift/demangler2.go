package swift

import (
	"math"
	"strings"
)

func (d *demangler) implParamConvention(k kind) *node {
	var attr string
	switch d.next() {
	case 'i':
		attr = "@in"
	case 'c':
		attr = "@in_constant"
	case 'l':
		attr = "@inout"
	case 'b':
		attr = "@inout_aliasable"
	case 'n':
		attr = "@in_guaranteed"
	case 'X':
		attr = "@in_cxx"
	case 'x':
		attr = "@owned"
	case 'g':
		attr = "@guaranteed"
	case 'e':
		attr = "@deallocating"
	case 'y':
		attr = "@unowned"
	case 'v':
		attr = "@pack_owned"
	case 'p':
		attr = "@pack_guaranteed"
	case 'm':
		attr = "@pack_inout"
	default:
		d.back()
		return nil
	}
	return d.with(k, d.textNode(kImplConvention, attr))
}

func (d *demangler) implResultConvention(k kind) *node {
	var attr string
	switch d.next() {
	case 'r':
		attr = "@out"
	case 'o':
		attr = "@owned"
	case 'd':
		attr = "@unowned"
	case 'u':
		attr = "@unowned_inner_pointer"
	case 'a':
		attr = "@autoreleased"
	case 'k':
		attr = "@pack_out"
	default:
		d.back()
		return nil
	}
	return d.with(k, d.textNode(kImplConvention, attr))
}

func (d *demangler) clangType() *node {
	n := d.natural()
	if n <= 0 || n > len(d.text)-d.pos {
		return nil
	}
	s := d.text[d.pos : d.pos+n]
	d.pos += n
	return d.textNode(kClangType, s)
}

func (d *demangler) implFunctionType() *node {
	t := d.newNode(kImplFunctionType)
	if t == nil {
		return nil
	}
	if d.nextIf('s') {
		lists, retro, ok := d.boundGenerics()
		if !ok {
			return nil
		}
		sig := d.popKind(kDependentGenericSignature)
		if sig == nil || len(lists) != 1 {
			return nil
		}
		subs := d.with(kImplPatternSubstitutions, sig, lists[0])
		if subs == nil {
			return nil
		}
		subs.add(retro)
		t.add(subs)
	}
	if d.nextIf('I') {
		lists, retro, ok := d.boundGenerics()
		if !ok || len(lists) != 1 {
			return nil
		}
		subs := d.with(kImplInvocationSubstitutions, lists[0])
		if subs == nil {
			return nil
		}
		subs.add(retro)
		t.add(subs)
	}
	sig := d.popKind(kDependentGenericSignature)
	if sig != nil && d.nextIf('P') {
		sig = d.changeKind(sig, kDependentPseudogenericSignature)
	}
	if d.nextIf('e') {
		t.add(d.newNode(kImplEscaping))
	}
	if d.nextIf('A') {
		t.add(d.newNode(kImplErasedIsolation))
	}
	switch c := d.peek(); c {
	case 'd', 'l', 'f', 'r':
		d.next()
		t.add(d.indexNode(kImplDifferentiabilityKind, uint64(c)))
	}
	var callee string
	switch d.next() {
	case 'y':
		callee = "@callee_unowned"
	case 'g':
		callee = "@callee_guaranteed"
	case 'x':
		callee = "@callee_owned"
	case 't':
		callee = "@convention(thin)"
	default:
		return nil
	}
	t.add(d.textNode(kImplConvention, callee))
	conv, clang := "", false
	switch d.next() {
	case 'B':
		conv = "block"
	case 'C':
		conv = "c"
	case 'z':
		switch d.next() {
		case 'B':
			conv, clang = "block", true
		case 'C':
			conv, clang = "c", true
		default:
			d.back()
			d.back()
		}
	case 'M':
		conv = "method"
	case 'O':
		conv = "objc_method"
	case 'K':
		conv = "closure"
	case 'W':
		conv = "witness_method"
	default:
		d.back()
	}
	if conv != "" {
		f := d.with(kImplFunctionConvention, d.textNode(kImplFunctionConventionName, conv))
		if f == nil {
			return nil
		}
		if clang {
			f = addChild(f, d.clangType())
		}
		if f == nil {
			return nil
		}
		t.add(f)
	}
	switch {
	case d.nextIf('A'):
		t.add(d.textNode(kImplCoroutineKind, "yield_once"))
	case d.nextIf('I'):
		t.add(d.textNode(kImplCoroutineKind, "yield_once_2"))
	case d.nextIf('G'):
		t.add(d.textNode(kImplCoroutineKind, "yield_many"))
	}
	if d.nextIf('h') {
		t.add(d.textNode(kImplFunctionAttribute, "@Sendable"))
	}
	if d.nextIf('H') {
		t.add(d.textNode(kImplFunctionAttribute, "@async"))
	}
	if d.nextIf('T') {
		t.add(d.newNode(kImplSendingResult))
	}
	t.add(sig)
	n := 0
	for p := d.implParamConvention(kImplParameter); p != nil; p = d.implParamConvention(kImplParameter) {
		t.add(p)
		p.add(d.implDifferentiability())
		if d.nextIf('T') {
			p.add(d.textNode(kImplParameterSending, "sending"))
		}
		if d.nextIf('I') {
			p.add(d.textNode(kImplParameterIsolated, "isolated"))
		}
		if d.nextIf('L') {
			p.add(d.textNode(kImplParameterImplicitLeading, "sil_implicit_leading_param"))
		}
		n++
	}
	for r := d.implResultConvention(kImplResult); r != nil; r = d.implResultConvention(kImplResult) {
		t.add(r)
		r.add(d.implDifferentiability())
		n++
	}
	for d.nextIf('Y') {
		y := d.implParamConvention(kImplYield)
		if y == nil {
			return nil
		}
		t.add(y)
		n++
	}
	if d.nextIf('z') {
		e := d.implResultConvention(kImplErrorResult)
		if e == nil {
			return nil
		}
		t.add(e)
		n++
	}
	if !d.nextIf('_') {
		return nil
	}
	for i := 0; i < n; i++ {
		ty := d.popKind(kType)
		if ty == nil {
			return nil
		}
		t.child(t.numChildren() - i - 1).add(ty)
	}
	return d.typ(t)
}

func (d *demangler) implDifferentiability() *node {
	attr := ""
	if d.nextIf('w') {
		attr = "@noDerivative"
	}
	return d.textNode(kImplParameterResultDifferentiability, attr)
}

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

func (d *demangler) typeAnnotation() *node {
	switch d.next() {
	case 'a':
		return d.newNode(kAsyncAnnotation)
	case 'A':
		return d.newNode(kIsolatedAnyFunctionType)
	case 'b':
		return d.newNode(kConcurrentFunctionType)
	case 'c':
		return d.with(kGlobalActorFunctionType, d.popTypeChild())
	case 'C':
		return d.newNode(kNonIsolatedCallerFunctionType)
	case 'i':
		return d.typ(d.with(kIsolated, d.popTypeChild()))
	case 'j':
		return d.differentiableFunctionType()
	case 'k':
		return d.typ(d.with(kNoDerivative, d.popTypeChild()))
	case 'K':
		return d.with(kTypedThrowsAnnotation, d.popTypeChild())
	case 't':
		return d.typ(d.with(kCompileTimeLiteral, d.popTypeChild()))
	case 'g':
		return d.typ(d.with(kConstValue, d.popTypeChild()))
	case 'T':
		return d.newNode(kSendingResultFunctionType)
	case 'u':
		return d.typ(d.with(kSending, d.popTypeChild()))
	}
	return nil
}

func (d *demangler) differentiableFunctionType() *node {
	switch c := d.next(); c {
	case 'f', 'r', 'd', 'l':
		return d.indexNode(kDifferentiableFunctionType, uint64(c))
	}
	return nil
}

func (d *demangler) accessor(child *node) *node {
	var k kind
	switch d.next() {
	case 'm':
		k = kMaterializeForSet
	case 's':
		k = kSetter
	case 'g':
		k = kGetter
	case 'G':
		k = kGlobalGetter
	case 'w':
		k = kWillSet
	case 'W':
		k = kDidSet
	case 'r':
		k = kReadAccessor
	case 'y':
		k = kRead2Accessor
	case 'M':
		k = kModifyAccessor
	case 'x':
		k = kModify2Accessor
	case 'i':
		k = kInitAccessor
	case 'a':
		switch d.next() {
		case 'O':
			k = kOwningMutableAddressor
		case 'o':
			k = kNativeOwningMutableAddressor
		case 'P':
			k = kNativePinningMutableAddressor
		case 'u':
			k = kUnsafeMutableAddressor
		default:
			return nil
		}
	case 'l':
		switch d.next() {
		case 'O':
			k = kOwningAddressor
		case 'o':
			k = kNativeOwningAddressor
		case 'p':
			k = kNativePinningAddressor
		case 'u':
			k = kUnsafeAddressor
		default:
			return nil
		}
	case 'p':
		return child
	default:
		return nil
	}
	return d.with(k, child)
}

func (d *demangler) functionEntity() *node {
	const (
		argsNone = iota
		argsTypeAndMaybePrivateName
		argsTypeAndIndex
		argsIndex
	)
	args := argsNone
	var k kind
	switch d.next() {
	case 'D':
		k = kDeallocator
	case 'd':
		k = kDestructor
	case 'Z':
		k = kIsolatedDeallocator
	case 'E':
		k = kIVarDestroyer
	case 'e':
		k = kIVarInitializer
	case 'i':
		k = kInitializer
	case 'C':
		args, k = argsTypeAndMaybePrivateName, kAllocator
	case 'c':
		args, k = argsTypeAndMaybePrivateName, kConstructor
	case 'U':
		args, k = argsTypeAndIndex, kExplicitClosure
	case 'u':
		args, k = argsTypeAndIndex, kImplicitClosure
	case 'A':
		args, k = argsIndex, kDefaultArgumentInitializer
	case 'm':
		return d.entity(kMacro)
	case 'M':
		return d.macroExpansion()
	case 'p':
		return d.entity(kGenericTypeParamDecl)
	case 'P':
		k = kPropertyWrapperBackingInitializer
	case 'W':
		k = kPropertyWrapperInitFromProjectedValue
	default:
		return nil
	}
	var nameOrIndex, paramType, labels *node
	switch args {
	case argsTypeAndMaybePrivateName:
		nameOrIndex = d.popKind(kPrivateDeclName)
		paramType = d.popKind(kType)
		labels = d.popFunctionParamLabels(paramType)
	case argsTypeAndIndex:
		nameOrIndex = d.indexAsNode()
		paramType = d.popKind(kType)
	case argsIndex:
		nameOrIndex = d.indexAsNode()
	}
	e := d.with(k, d.popContext())
	switch args {
	case argsIndex:
		e = addChild(e, nameOrIndex)
	case argsTypeAndMaybePrivateName:
		if e != nil && labels != nil {
			e.add(labels)
		}
		e = addChild(e, paramType)
		if e != nil && nameOrIndex != nil {
			e.add(nameOrIndex)
		}
	case argsTypeAndIndex:
		e = addChild(e, nameOrIndex)
		e = addChild(e, paramType)
	}
	return e
}

func (d *demangler) entity(k kind) *node {
	t := d.popKind(kType)
	labels := d.popFunctionParamLabels(t)
	name := d.popIf(isDeclName)
	ctx := d.popContext()
	if labels != nil {
		return d.with(k, ctx, name, labels, t)
	}
	return d.with(k, ctx, name, t)
}

func (d *demangler) subscript() *node {
	priv := d.popKind(kPrivateDeclName)
	t := d.popKind(kType)
	labels := d.popFunctionParamLabels(t)
	ctx := d.popContext()
	if t == nil {
		return nil
	}
	s := d.with(kSubscript, ctx)
	if s != nil && labels != nil {
		s.add(labels)
	}
	s = addChild(s, t)
	if s != nil && priv != nil {
		s.add(priv)
	}
	return d.accessor(s)
}

func (d *demangler) protocolList() *node {
	tl := d.popList(kTypeList, d.popProtocol)
	return d.with(kProtocolList, tl)
}

func (d *demangler) genericSignature(counts bool) *node {
	sig := d.newNode(kDependentGenericSignature)
	if sig == nil {
		return nil
	}
	if counts {
		for !d.nextIf('l') {
			c := 0
			if !d.nextIf('z') {
				c = d.index() + 1
			}
			if c < 0 {
				return nil
			}
			sig.add(d.indexNode(kDependentGenericParamCount, uint64(c)))
		}
	} else {
		sig.add(d.indexNode(kDependentGenericParamCount, 1))
	}
	n := sig.numChildren()
	for r := d.popIf(isRequirement); r != nil; r = d.popIf(isRequirement) {
		sig.add(r)
	}
	sig.reverseFrom(n)
	return sig
}

func (d *demangler) genericRequirement() *node {
	const (
		tGeneric = iota
		tAssoc
		tCompound
		tSubst
	)
	const (
		cProtocol = iota
		cBaseClass
		cSameType
		cSameShape
		cLayout
		cPack
		cInverse
		cValue
	)
	var tk, ck int
	var inverse *node
	switch d.next() {
	case 'V':
		ck, tk = cValue, tGeneric
	case 'v':
		ck, tk = cPack, tGeneric
	case 'c':
		ck, tk = cBaseClass, tAssoc
	case 'C':
		ck, tk = cBaseClass, tCompound
	case 'b':
		ck, tk = cBaseClass, tGeneric
	case 'B':
		ck, tk = cBaseClass, tSubst
	case 't':
		ck, tk = cSameType, tAssoc
	case 'T':
		ck, tk = cSameType, tCompound
	case 's':
		ck, tk = cSameType, tGeneric
	case 'S':
		ck, tk = cSameType, tSubst
	case 'm':
		ck, tk = cLayout, tAssoc
	case 'M':
		ck, tk = cLayout, tCompound
	case 'l':
		ck, tk = cLayout, tGeneric
	case 'L':
		ck, tk = cLayout, tSubst
	case 'p':
		ck, tk = cProtocol, tAssoc
	case 'P':
		ck, tk = cProtocol, tCompound
	case 'Q':
		ck, tk = cProtocol, tSubst
	case 'h':
		ck, tk = cSameShape, tGeneric
	case 'i', 'I':
		ck, tk = cInverse, tGeneric
		if d.text[d.pos-1] == 'I' {
			tk = tSubst
		}
		inverse = d.indexAsNode()
		if inverse == nil {
			return nil
		}
	default:
		ck, tk = cProtocol, tGeneric
		d.back()
	}
	var t *node
	switch tk {
	case tGeneric:
		t = d.typ(d.genericParamIndex())
	case tAssoc:
		t = d.assocTypeSimple(d.genericParamIndex())
		d.addSubst(t)
	case tCompound:
		t = d.assocTypeCompound(d.genericParamIndex())
		d.addSubst(t)
	case tSubst:
		t = d.popKind(kType)
	}
	switch ck {
	case cValue:
		return d.with(kDependentGenericParamValueMarker, t, d.popKind(kType))
	case cPack:
		return d.with(kDependentGenericParamPackMarker, t)
	case cProtocol:
		return d.with(kDependentGenericConformanceRequirement, t, d.popProtocol())
	case cInverse:
		return d.with(kDependentGenericInverseConformanceRequirement, t, inverse)
	case cBaseClass:
		return d.with(kDependentGenericConformanceRequirement, t, d.popKind(kType))
	case cSameType:
		return d.with(kDependentGenericSameTypeRequirement, t, d.popKind(kType))
	case cSameShape:
		return d.with(kDependentGenericSameShapeRequirement, t, d.popKind(kType))
	}
	// Layout.
	c := d.next()
	var size, align *node
	switch c {
	case 'U', 'R', 'N', 'C', 'D', 'T', 'B':
	case 'E', 'M':
		if size = d.indexAsNode(); size == nil {
			return nil
		}
		align = d.indexAsNode()
	case 'e', 'm', 'S':
		if size = d.indexAsNode(); size == nil {
			return nil
		}
	default:
		return nil
	}
	r := d.with(kDependentGenericLayoutRequirement, t, d.textNode(kIdentifier, string(c)))
	if r != nil {
		r.add(size)
		r.add(align)
	}
	return r
}

var valueWitnessKinds = map[string]int{
	"al": 0, "ca": 1, "ta": 2, "de": 3, "xx": 4, "XX": 5, "CP": 6, "Cp": 7, "cp": 8, "Tk": 9,
	"tk": 10, "pr": 11, "TK": 12, "Xx": 13, "Cc": 14, "Tt": 15, "tT": 16, "xs": 17, "xg": 18,
	"ug": 19, "up": 20, "ui": 21, "et": 22, "ei": 23,
}

var valueWitnessNames = [...]string{
	"allocateBuffer", "assignWithCopy", "assignWithTake", "deallocateBuffer", "destroy",
	"destroyBuffer", "initializeBufferWithCopyOfBuffer", "initializeBufferWithCopy",
	"initializeWithCopy", "initializeBufferWithTake", "initializeWithTake", "projectBuffer",
	"initializeBufferWithTakeOfBuffer", "destroyArray", "initializeArrayWithCopy",
	"initializeArrayWithTakeFrontToBack", "initializeArrayWithTakeBackToFront",
	"storeExtraInhabitant", "getExtraInhabitantIndex", "getEnumTag", "destructiveProjectEnumData",
	"destructiveInjectEnumTag", "getEnumTagSinglePayload", "storeEnumTagSinglePayload",
}

func (d *demangler) valueWitness() *node {
	if d.pos+2 > len(d.text) {
		return nil
	}
	k, ok := valueWitnessKinds[d.text[d.pos:d.pos+2]]
	d.pos += 2
	if !ok {
		return nil
	}
	return d.with(kValueWitness, d.indexNode(kIndex, uint64(k)), d.popKind(kType))
}

func (d *demangler) integerType() *node {
	if d.nextIf('n') {
		return d.typ(d.indexNode(kNegativeInteger, uint64(-int64(d.index()))))
	}
	return d.typ(d.indexNode(kInteger, uint64(int64(d.index()))))
}

func isMacroExpansion(k kind) bool {
	switch k {
	case kAccessorAttachedMacroExpansion, kMemberAttributeAttachedMacroExpansion,
		kFreestandingMacroExpansion, kMemberAttachedMacroExpansion, kPeerAttachedMacroExpansion,
		kConformanceAttachedMacroExpansion, kExtensionAttachedMacroExpansion, kMacroExpansionLoc:
		return true
	}
	return false
}

func (d *demangler) macroExpansion() *node {
	var k kind
	attached, free := false, false
	switch d.next() {
	case 'a':
		k, attached = kAccessorAttachedMacroExpansion, true
	case 'r':
		k, attached = kMemberAttributeAttachedMacroExpansion, true
	case 'm':
		k, attached = kMemberAttachedMacroExpansion, true
	case 'p':
		k, attached = kPeerAttachedMacroExpansion, true
	case 'c':
		k, attached = kConformanceAttachedMacroExpansion, true
	case 'e':
		k, attached = kExtensionAttachedMacroExpansion, true
	case 'q':
		k, attached = kPreambleAttachedMacroExpansion, true
	case 'b':
		k, attached = kBodyAttachedMacroExpansion, true
	case 'f':
		k, free = kFreestandingMacroExpansion, true
	case 'u':
		k = kMacroExpansionUniqueName
	case 'X':
		line := d.index()
		col := d.index()
		ln := d.indexNode(kIndex, uint64(int64(line)))
		cn := d.indexNode(kIndex, uint64(int64(col)))
		buf := d.popKind(kIdentifier)
		mod := d.popKind(kIdentifier)
		return d.with(kMacroExpansionLoc, mod, buf, ln, cn)
	default:
		return nil
	}
	name := d.popKind(kIdentifier)
	var priv, attachedName *node
	if free {
		priv = d.popKind(kPrivateDeclName)
	}
	if attached {
		attachedName = d.popIf(isDeclName)
	}
	ctx := d.popIf(isMacroExpansion)
	if ctx == nil {
		ctx = d.popContext()
	}
	disc := d.indexAsNode()
	var r *node
	if attached && attachedName != nil {
		r = d.with(k, ctx, attachedName, name, disc)
	} else {
		r = d.with(k, ctx, name, disc)
	}
	if r != nil && priv != nil {
		r.add(priv)
	}
	return r
}

// punycode decodes Swift's Punycode variant (RFC 3492 with "_" as the
// delimiter and digits "a"-"z", "A"-"J"; code points 0xD800-0xD87F stand
// for ASCII characters that are not identifier characters).
func punycode(s string) (string, bool) {
	const (
		base, tmin, tmax, skew, damp, initialBias, initialN = 36, 1, 26, 38, 700, 72, 128
	)
	var out []rune
	if i := strings.LastIndexByte(s, '_'); i >= 0 {
		for j := 0; j < i; j++ {
			if s[j] >= 0x80 {
				return "", false
			}
			out = append(out, rune(s[j]))
		}
		s = s[i+1:]
	}
	n, bias, i := initialN, initialBias, 0
	for len(s) > 0 {
		oldi, w := i, 1
		for k := base; ; k += base {
			if len(s) == 0 {
				return "", false
			}
			c := s[0]
			s = s[1:]
			var digit int
			switch {
			case c >= 'a' && c <= 'z':
				digit = int(c - 'a')
			case c >= 'A' && c <= 'J':
				digit = int(c-'A') + 26
			default:
				return "", false
			}
			if digit > (math.MaxInt32-i)/w {
				return "", false
			}
			i += digit * w
			t := k - bias
			if k <= bias {
				t = tmin
			} else if k >= bias+tmax {
				t = tmax
			}
			if digit < t {
				break
			}
			if w > math.MaxInt32/(base-t) {
				return "", false
			}
			w *= base - t
		}
		// Bias adaptation (RFC 3492 6.1), "first time" as Swift decides it.
		delta, num := i-oldi, len(out)+1
		if oldi == 0 {
			delta /= damp
		} else {
			delta /= 2
		}
		delta += delta / num
		k := 0
		for delta > ((base-tmin)*tmax)/2 {
			delta /= base - tmin
			k += base
		}
		bias = k + (base-tmin+1)*delta/(delta+skew)
		if i/num > math.MaxInt32-n {
			return "", false
		}
		n += i / num
		i %= num
		if n < 0x80 || len(out) >= maxNameLen {
			return "", false
		}
		out = append(out, 0)
		copy(out[i+1:], out[i:])
		out[i] = rune(n)
		i++
	}
	var b strings.Builder
	for _, r := range out {
		switch {
		case r >= 0xd800 && r < 0xd880:
			r -= 0xd800
		case r >= 0xd880 && r < 0xe000 || r > 0x10ffff:
			return "", false
		}
		b.WriteRune(r)
	}
	return b.String(), true
}
