package swift

import "strconv"

// Types of the Swift 3 mangling: nominal, function, builtin, special and
// SIL implementation function types.

func (o *oldDemangler) oldType(depth int) *node {
	return o.typ(o.typeImpl(depth))
}

func (o *oldDemangler) functionTypeOld(k kind, depth int) *node {
	throws, concurrent, async := false, false, false
	var diff byte
	var actor *node
	if !o.empty() {
		throws = o.nextIf('z')
		concurrent = o.nextIf('y')
		async = o.nextIf('Z')
		if o.nextIf('D') {
			switch c := o.next(); c {
			case 'f', 'r', 'd', 'l':
				diff = c
			}
		}
		if o.nextIf('Y') {
			if actor = o.oldType(depth + 1); actor == nil {
				return nil
			}
		}
	}
	in := o.oldType(depth + 1)
	if in == nil {
		return nil
	}
	out := o.oldType(depth + 1)
	if out == nil {
		return nil
	}
	b := o.newNode(k)
	if b == nil {
		return nil
	}
	if throws {
		b.add(o.newNode(kThrowsAnnotation))
	}
	if async {
		b.add(o.newNode(kAsyncAnnotation))
	}
	if concurrent {
		b.add(o.newNode(kConcurrentFunctionType))
	}
	if diff != 0 {
		b.add(o.indexNode(kDifferentiableFunctionType, uint64(diff)))
	}
	if actor != nil {
		b.add(o.with(kGlobalActorFunctionType, actor))
	}
	if !child(b, o.with(kArgumentTuple, in)) || !child(b, o.with(kReturnType, out)) {
		return nil
	}
	return b
}

func (o *oldDemangler) builtinSize() (uint64, bool) {
	n, ok := o.naturalOld()
	return n, ok && o.nextIf('_')
}

func (o *oldDemangler) typeImpl(depth int) *node {
	if depth > oldMaxDepth || o.empty() {
		return nil
	}
	c := o.next()
	builtin := func(s string) *node { return o.textNode(kBuiltinTypeName, s) }
	switch c {
	case 'B':
		if o.empty() {
			return nil
		}
		switch o.next() {
		case 'b':
			return builtin("Builtin.BridgeObject")
		case 'B':
			return builtin("Builtin.UnsafeValueBuffer")
		case 'f':
			if n, ok := o.builtinSize(); ok {
				return builtin("Builtin.FPIEEE" + strconv.FormatUint(n, 10))
			}
		case 'i':
			if n, ok := o.builtinSize(); ok {
				return builtin("Builtin.Int" + strconv.FormatUint(n, 10))
			}
		case 'v':
			elts, ok := o.naturalOld()
			if !ok {
				return nil
			}
			if !o.nextIf('B') {
				return nil
			}
			pre := "Builtin.Vec" + strconv.FormatUint(elts, 10)
			switch {
			case o.nextIf('i'):
				n, ok := o.builtinSize()
				if !ok {
					return nil
				}
				return builtin(pre + "xInt" + strconv.FormatUint(n, 10))
			case o.nextIf('f'):
				n, ok := o.builtinSize()
				if !ok {
					return nil
				}
				return builtin(pre + "xFPIEEE" + strconv.FormatUint(n, 10))
			case o.nextIf('p'):
				return builtin(pre + "xRawPointer")
			}
		case 'O':
			return builtin("Builtin.UnknownObject")
		case 'o':
			return builtin("Builtin.NativeObject")
		case 'p':
			return builtin("Builtin.RawPointer")
		case 't':
			return builtin("Builtin.SILToken")
		case 'w':
			return builtin("Builtin.Word")
		}
		return nil
	case 'a':
		return o.declarationName(kTypeAlias, depth+1)
	case 'b':
		return o.functionTypeOld(kObjCBlock, depth+1)
	case 'c':
		return o.functionTypeOld(kCFunctionPointer, depth+1)
	case 'D':
		return o.with(kDynamicSelf, o.oldType(depth+1))
	case 'E':
		if !o.nextIfStr("RR") {
			return nil
		}
		return o.textNode(kErrorType, "")
	case 'F':
		return o.functionTypeOld(kFunctionType, depth+1)
	case 'f':
		return o.functionTypeOld(kUncurriedFunctionType, depth+1)
	case 'G':
		return o.boundGenericType(depth + 1)
	case 'K':
		return o.functionTypeOld(kAutoClosureType, depth+1)
	case 'M':
		return o.with(kMetatype, o.oldType(depth+1))
	case 'P':
		if o.nextIf('M') {
			return o.with(kExistentialMetatype, o.oldType(depth+1))
		}
		return o.protocolList(depth + 1)
	case 'Q':
		if o.nextIf('u') {
			return o.newNode(kOpaqueReturnType)
		}
		if o.nextIf('U') {
			i, ok := o.indexOld()
			if !ok {
				return nil
			}
			return o.with(kOpaqueReturnType, o.indexNode(kOpaqueReturnTypeIndex, i))
		}
		return o.archetypeType(depth + 1)
	case 'q':
		return o.dependentType(depth + 1)
	case 'x':
		return o.with(kDependentGenericParamType, o.indexNode(kIndex, 0), o.indexNode(kIndex, 0))
	case 'w':
		return o.assocTypeSimpleOld(depth + 1)
	case 'W':
		return o.assocTypeCompoundOld(depth + 1)
	case 'R':
		return o.with(kInOut, o.typeImpl(depth+1))
	case 'k':
		return o.with(kNoDerivative, o.typeImpl(depth+1))
	case 'S':
		return o.substitutionIndex(depth + 1)
	case 'T':
		return o.tuple(false, depth+1)
	case 't':
		return o.tuple(true, depth+1)
	case 'u':
		sig := o.genericSignatureOld(depth+1, false)
		if sig == nil {
			return nil
		}
		return o.with(kDependentGenericType, sig, o.oldType(depth+1))
	case 'X':
		return o.specialTypeOld(depth)
	case 'C', 'V', 'O':
		k := map[byte]kind{'C': kClass, 'V': kStructure, 'O': kEnum}[c]
		return o.declarationName(k, depth+1)
	}
	return nil
}

func (o *oldDemangler) specialTypeOld(depth int) *node {
	switch {
	case o.nextIf('b'):
		return o.with(kSILBoxType, o.oldType(depth+1))
	case o.nextIf('B'):
		var sig *node
		if o.nextIf('G') {
			if sig = o.genericSignatureOld(depth, false); sig == nil {
				return nil
			}
		}
		layout := o.newNode(kSILBoxLayout)
		if layout == nil {
			return nil
		}
		for !o.nextIf('_') {
			var k kind
			switch {
			case o.nextIf('m'):
				k = kSILBoxMutableField
			case o.nextIf('i'):
				k = kSILBoxImmutableField
			default:
				return nil
			}
			if !child(layout, o.with(k, o.oldType(depth+1))) {
				return nil
			}
		}
		var args *node
		if sig != nil {
			if args = o.newNode(kTypeList); args == nil {
				return nil
			}
			for !o.nextIf('_') {
				if !child(args, o.oldType(depth+1)) {
					return nil
				}
			}
		}
		box := o.with(kSILBoxTypeWithLayout, layout)
		if box != nil && sig != nil {
			box.add(sig)
			box.add(args)
		}
		return box
	case o.nextIf('M'):
		r := o.metatypeReprOld()
		if r == nil {
			return nil
		}
		return o.with(kMetatype, r, o.oldType(depth+1))
	case o.nextIf('P'):
		if o.nextIf('M') {
			r := o.metatypeReprOld()
			if r == nil {
				return nil
			}
			return o.with(kExistentialMetatype, r, o.oldType(depth+1))
		}
		return o.protocolList(depth + 1)
	case o.nextIf('f'):
		return o.functionTypeOld(kThinFunctionType, depth+1)
	case o.nextIf('o'):
		return o.with(kUnowned, o.oldType(depth+1))
	case o.nextIf('u'):
		return o.with(kUnmanaged, o.oldType(depth+1))
	case o.nextIf('w'):
		return o.with(kWeak, o.oldType(depth+1))
	case o.nextIf('F'):
		return o.implFunctionTypeOld(depth + 1)
	}
	return nil
}

func (o *oldDemangler) metatypeReprOld() *node {
	switch {
	case o.nextIf('t'):
		return o.textNode(kMetatypeRepresentation, "@thin")
	case o.nextIf('T'):
		return o.textNode(kMetatypeRepresentation, "@thick")
	case o.nextIf('o'):
		return o.textNode(kMetatypeRepresentation, "@objc_metatype")
	}
	return nil
}

func (o *oldDemangler) reabstractSignature(sig *node, depth int) bool {
	if o.nextIf('G') {
		if !child(sig, o.genericSignatureOld(depth+1, false)) {
			return false
		}
	}
	if !child(sig, o.oldType(depth+1)) { // source type
		return false
	}
	return child(sig, o.oldType(depth+1)) // destination type
}

const (
	convCallee = iota
	convParam
	convResult
)

func (o *oldDemangler) implConvention(ctx int) string {
	table := map[byte][3]string{
		'a': {"", "", "@autoreleased"},
		'd': {"@callee_unowned", "@unowned", "@unowned"},
		'D': {"", "", "@unowned_inner_pointer"},
		'g': {"@callee_guaranteed", "@guaranteed", ""},
		'e': {"", "@deallocating", ""},
		'i': {"", "@in", "@out"},
		'l': {"", "@inout", ""},
		'o': {"@callee_owned", "@owned", "@owned"},
	}
	if e, ok := table[o.peek()]; ok && !o.empty() {
		o.pos++
		return e[ctx]
	}
	return ""
}

func (o *oldDemangler) implFunctionTypeOld(depth int) *node {
	t := o.newNode(kImplFunctionType)
	if t == nil {
		return nil
	}
	var callee string
	if o.nextIf('t') {
		callee = "@convention(thin)"
	} else {
		callee = o.implConvention(convCallee)
	}
	if callee == "" {
		return nil
	}
	t.add(o.textNode(kImplConvention, callee))
	if o.nextIf('C') {
		var conv string
		switch {
		case o.nextIf('b'):
			conv = "block"
		case o.nextIf('c'):
			conv = "c"
		case o.nextIf('m'):
			conv = "method"
		case o.nextIf('O'):
			conv = "objc_method"
		case o.nextIf('w'):
			conv = "witness_method"
		default:
			return nil
		}
		t.add(o.with(kImplFunctionConvention, o.textNode(kImplFunctionConventionName, conv)))
	}
	if o.nextIf('h') {
		t.add(o.textNode(kImplFunctionAttribute, "@Sendable"))
	}
	if o.nextIf('H') {
		t.add(o.textNode(kImplFunctionAttribute, "@async"))
	}
	pseudo := false
	if o.nextIf('G') || func() bool { pseudo = o.nextIf('g'); return pseudo }() {
		if !child(t, o.genericSignatureOld(depth+1, pseudo)) {
			return nil
		}
	}
	if !o.nextIf('_') {
		return nil
	}
	for _, k := range []kind{kImplParameter, kImplResult} {
		for !o.nextIf('_') {
			kk := k
			if o.nextIf('z') {
				if k != kImplResult {
					return nil
				}
				kk = kImplErrorResult
			}
			ctx := convParam
			if k == kImplResult {
				ctx = convResult
			}
			conv := o.implConvention(ctx)
			if conv == "" {
				return nil
			}
			ty := o.oldType(depth + 1)
			if ty == nil {
				return nil
			}
			if !child(t, o.with(kk, o.textNode(kImplConvention, conv), ty)) {
				return nil
			}
		}
	}
	return t
}
