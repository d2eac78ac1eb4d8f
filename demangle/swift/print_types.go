package swift

import "strconv"

// Printing types: functions, tuples, packs, bound generics, metatypes,
// existentials, sugared and opaque types, SIL boxes.

// printTypeNode prints the node kinds of its area; ok is false for any other kind.
func (p *printer) printTypeNode(n *node, depth int, asPrefix bool) (r *node, ok bool) {
	c0 := func() { p.print(n.child(0), depth+1, false) }
	c := func(i int) { p.print(n.child(i), depth+1, false) }
	switch n.kind {
	case kFunctionType, kUncurriedFunctionType, kNoEscapeFunctionType, kAutoClosureType,
		kEscapingAutoClosureType, kThinFunctionType, kCFunctionPointer, kObjCBlock, kEscapingObjCBlock, kCalledOnceFunctionType:
		p.functionType(nil, n, depth)
	case kArgumentTuple:
		p.functionParameters(nil, n, depth, p.opt.showArgumentTypes)
	case kTuple:
		p.s("(")
		p.children(n, depth, ", ")
		p.s(")")
	case kTupleElement:
		if l := n.childOfKind(kTupleElementName); l != nil {
			p.s(l.text + ": ")
		}
		p.print(n.childOfKind(kType), depth+1, false)
		if n.childOfKind(kVariadicMarker) != nil {
			p.s("...")
		}
	case kTupleElementName:
		p.s(n.text + ": ")
	case kPack:
		p.s("Pack{")
		p.children(n, depth, ", ")
		p.s("}")
	case kSILPackDirect, kSILPackIndirect:
		if n.kind == kSILPackDirect {
			p.s("@direct")
		} else {
			p.s("@indirect")
		}
		p.s(" Pack{")
		p.children(n, depth, ", ")
		p.s("}")
	case kPackElement:
		p.s("/* level: " + strconv.FormatUint(n.child(1).index, 10) + " */ each ")
		c0()
	case kReturnType:
		if n.numChildren() == 0 {
			p.s(n.text)
		} else {
			p.children(n, depth, "")
		}
	case kBuiltinBorrow:
		p.s("Builtin.Borrow<")
		c0()
		p.s(">")
	case kBuiltinFixedArray:
		p.s("Builtin.FixedArray<")
		c0()
		p.s(", ")
		c(1)
		p.s(">")
	case kTypeSymbolicReference, kProtocolSymbolicReference, kOpaqueTypeDescriptorSymbolicReference:
		p.invalid = true
	case kBoundGenericClass, kBoundGenericStructure, kBoundGenericEnum, kBoundGenericProtocol,
		kBoundGenericOtherNominalType, kBoundGenericTypeAlias:
		p.boundGeneric(n, depth)
	case kMetatype:
		i := 0
		if n.numChildren() == 2 {
			c0()
			p.s(" ")
			i = 1
		}
		t := n.child(i).first()
		p.withParens(t, depth)
		if isExistential(t) {
			p.s(".Protocol")
		} else {
			p.s(".Type")
		}
	case kConstrainedExistential:
		p.s("any ")
		c0()
		p.s("<")
		c(1)
		p.s(">")
	case kConstrainedExistentialRequirementList:
		p.children(n, depth, ", ")
	case kExistentialMetatype:
		i := 0
		if n.numChildren() == 2 {
			c0()
			p.s(" ")
			i = 1
		}
		c(i)
		p.s(".Type")
	case kAssociatedTypeRef:
		c0()
		p.s("." + n.child(1).text)
	case kProtocolList:
		tl := n.first()
		if tl == nil {
			return nil, true
		}
		if tl.numChildren() == 0 {
			p.s("Any")
		} else {
			p.children(tl, depth, " & ")
		}
	case kProtocolListWithClass:
		if n.numChildren() < 2 {
			return nil, true
		}
		c(1)
		p.s(" & ")
		if n.first().numChildren() < 1 {
			return nil, true
		}
		p.children(n.first().first(), depth, " & ")
	case kProtocolListWithAnyObject:
		if n.first().numChildren() < 1 {
			return nil, true
		}
		tl := n.first().first()
		if tl.numChildren() > 0 {
			p.children(tl, depth, " & ")
			p.s(" & ")
		}
		p.s("Swift.AnyObject")
	case kTypeList:
		p.children(n, depth, "")
	case kDifferentiableFunctionType:
		p.s("@differentiable")
		switch n.index {
		case 'f':
			p.s("(_forward)")
		case 'r':
			p.s("(reverse)")
		case 'l':
			p.s("(_linear)")
		}
		p.s(" ")
	case kGlobalActorFunctionType:
		if n.numChildren() > 0 {
			p.s("@")
			c0()
			p.s(" ")
		}
	case kTypedThrowsAnnotation:
		p.s(" throws(")
		if n.numChildren() == 1 {
			c0()
		}
		p.s(")")
	case kSILBoxTypeWithLayout:
		if n.numChildren() == 3 {
			c(1)
			p.s(" ")
		}
		c0()
		if n.numChildren() == 3 {
			p.s(" <")
			p.children(n.child(2), depth, ", ")
			p.s(">")
		}
	case kSILBoxLayout:
		p.s("{")
		for i := range n.children {
			if i > 0 {
				p.s(",")
			}
			p.s(" ")
			c(i)
		}
		p.s(" }")
	case kSILBoxImmutableField, kSILBoxMutableField:
		if n.kind == kSILBoxImmutableField {
			p.s("let ")
		} else {
			p.s("var ")
		}
		c0()
	case kSugaredOptional:
		p.withParens(n.first(), depth)
		p.s("?")
	case kSugaredArray:
		p.s("[")
		c0()
		p.s("]")
	case kSugaredInlineArray:
		p.s("[")
		c0()
		p.s(" of ")
		c(1)
		p.s("]")
	case kSugaredDictionary:
		p.s("[")
		c0()
		p.s(" : ")
		c(1)
		p.s("]")
	case kSugaredParen:
		p.s("(")
		c0()
		p.s(")")
	case kOpaqueType:
		c0()
		p.s(".")
		c(1)
	case kExtendedExistentialTypeShape:
		save := p.opt.displayWhere
		p.opt.displayWhere = true
		var sig, t *node
		if n.numChildren() == 2 {
			sig, t = n.child(0), n.child(1)
		} else {
			t = n.child(0)
		}
		p.s("existential shape for ")
		if sig != nil {
			p.print(sig, depth+1, false)
			p.s(" ")
		}
		p.s("any ")
		p.print(t, depth+1, false)
		p.opt.displayWhere = save
	default:
		return nil, false
	}
	return nil, true
}
