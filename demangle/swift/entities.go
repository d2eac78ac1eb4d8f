package swift

// Entities and what annotates them: accessors, functions, subscripts,
// generic signatures and requirements, macro expansions, punycode.

import (
	"math"
	"strings"
)

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
		k = kYieldingBorrowAccessor
	case 'M':
		k = kModifyAccessor
	case 'x':
		k = kYieldingMutateAccessor
	case 'i':
		k = kInitAccessor
	case 'b':
		k = kBorrowAccessor
	case 'z':
		k = kMutateAccessor
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
	case 'F':
		k = kPropertyWrappedFieldInitAccessor
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
	case 'i', 'I', 'j', 'J':
		ck, tk = cInverse, tGeneric
		switch d.text[d.pos-1] {
		case 'I':
			tk = tSubst
		case 'j':
			tk = tAssoc
		case 'J':
			tk = tCompound
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

var valueWitnessKinds = lazy[map[string]int]{build: func() map[string]int {
	return map[string]int{
		"al": 0, "ca": 1, "ta": 2, "de": 3, "xx": 4, "XX": 5, "CP": 6, "Cp": 7, "cp": 8, "Tk": 9,
		"tk": 10, "pr": 11, "TK": 12, "Xx": 13, "Cc": 14, "Tt": 15, "tT": 16, "xs": 17, "xg": 18,
		"ug": 19, "up": 20, "ui": 21, "et": 22, "st": 23,
	}
}}

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
	k, ok := valueWitnessKinds.get()[d.text[d.pos:d.pos+2]]
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
