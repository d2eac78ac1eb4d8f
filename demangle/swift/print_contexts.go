package swift

import "strconv"

// Printing contexts, entities, declaration names, identifiers and numbers.

// printContextNode prints the node kinds of its area; ok is false for any other kind.
func (p *printer) printContextNode(n *node, depth int, asPrefix bool) (r *node, ok bool) {
	c0 := func() { p.print(n.child(0), depth+1, false) }
	c := func(i int) { p.print(n.child(i), depth+1, false) }
	switch n.kind {
	case kDirectness:
		if n.index == 0 {
			p.s("direct ")
		} else {
			p.s("indirect ")
		}
	case kAnonymousContext:
		if p.opt.displayExtensions {
			c(1)
			p.s(".(unknown context at ")
			c0()
			p.s(")")
			if n.numChildren() >= 3 && n.child(2).numChildren() > 0 {
				p.s("<")
				c(2)
				p.s(">")
			}
		}
	case kExtension:
		if p.opt.displayExtensions {
			p.s("(extension in ")
			p.print(n.child(0), depth+1, true)
			p.s("):")
		}
		c(1)
		if n.numChildren() == 3 {
			c(2)
		}
	case kVariable:
		return p.entity(n, depth, asPrefix, withColon, true, "", -1, ""), true
	case kFunction, kBoundGenericFunction:
		return p.entity(n, depth, asPrefix, functionStyle, true, "", -1, ""), true
	case kSubscript:
		return p.entity(n, depth, asPrefix, functionStyle, false, "", -1, "subscript"), true
	case kMacro:
		tp := functionStyle
		if n.numChildren() == 3 {
			tp = withColon
		}
		return p.entity(n, depth, asPrefix, tp, true, "", -1, ""), true
	case kFreestandingMacroExpansion:
		return p.entity(n, depth, asPrefix, noType, true, "freestanding macro expansion #", int(n.child(2).index)+1, ""), true
	case kMacroExpansionLoc:
		if n.numChildren() > 0 {
			p.s("module ")
			c0()
		}
		if n.numChildren() > 1 {
			p.s(" file ")
			c(1)
		}
		if n.numChildren() > 2 {
			p.s(" line ")
			c(2)
		}
		if n.numChildren() > 3 {
			p.s(" column ")
			c(3)
		}
	case kMacroExpansionUniqueName:
		return p.entity(n, depth, asPrefix, noType, true, "unique name #", int(n.child(2).index)+1, ""), true
	case kGenericTypeParamDecl:
		return p.entity(n, depth, asPrefix, noType, true, "", -1, ""), true
	case kExplicitClosure, kImplicitClosure:
		tp := noType
		if p.opt.showArgumentTypes {
			tp = functionStyle
		}
		name := "closure #"
		if n.kind == kImplicitClosure {
			name = "implicit closure #"
		}
		return p.entity(n, depth, asPrefix, tp, false, name, int(n.child(1).index)+1, ""), true
	case kGlobal:
		p.children(n, depth, "")
	case kSuffix:
		if p.opt.displaySuffix {
			p.s(" with unmangled suffix " + quoted(n.text))
		}
	case kInitializer:
		return p.entity(n, depth, asPrefix, noType, false, "variable initialization expression", -1, ""), true
	case kPropertyWrapperBackingInitializer:
		return p.entity(n, depth, asPrefix, noType, false, "property wrapper backing initializer", -1, ""), true
	case kPropertyWrappedFieldInitAccessor:
		return p.entity(n, depth, asPrefix, noType, false, "property wrapped field init accessor", -1, ""), true
	case kPropertyWrapperInitFromProjectedValue:
		return p.entity(n, depth, asPrefix, noType, false, "property wrapper init from projected value", -1, ""), true
	case kDefaultArgumentInitializer:
		return p.entity(n, depth, asPrefix, noType, false, "default argument ", int(n.child(1).index), ""), true
	case kTypeMangling:
		if n.first().is(kLabelList) {
			p.functionType(n.first(), n.child(1).first(), depth)
		} else {
			c0()
		}
	case kClass, kStructure, kEnum, kProtocol, kTypeAlias, kOtherNominalType:
		return p.entity(n, depth, asPrefix, noType, true, "", -1, ""), true
	case kLocalDeclName:
		c(1)
		if p.opt.displayLocalContexts {
			p.s(" #" + strconv.FormatUint(n.child(0).index+1, 10))
		}
	case kPrivateDeclName:
		if n.numChildren() > 1 {
			if p.opt.showPrivateDiscrims {
				p.s("(")
			}
			c(1)
			if p.opt.showPrivateDiscrims {
				p.s(" in " + n.first().text + ")")
			}
		} else if p.opt.showPrivateDiscrims {
			p.s("(in " + n.first().text + ")")
		}
	case kRelatedEntityDeclName:
		p.s("related decl '" + n.first().text + "' for ")
		c(1)
	case kModule:
		if p.opt.displayModules {
			p.s(n.text)
		}
	case kIdentifier, kClangType, kBuiltinTypeName, kImplConvention, kImplFunctionAttribute, kMetatypeRepresentation:
		p.s(n.text)
	case kIndex, kNumber, kSpecializationPassID, kInteger:
		p.u(n.index)
	case kNegativeInteger:
		p.s(strconv.FormatInt(int64(n.index), 10))
	case kInfixOperator:
		p.s(n.text + " infix")
	case kPrefixOperator:
		p.s(n.text + " prefix")
	case kPostfixOperator:
		p.s(n.text + " postfix")
	case kAllocator:
		name := "init"
		if n.first().is(kClass) {
			name = "__allocating_init"
		}
		return p.entity(n, depth, asPrefix, functionStyle, false, name, -1, ""), true
	case kConstructor:
		return p.entity(n, depth, asPrefix, functionStyle, n.numChildren() > 2, "init", -1, ""), true
	case kDestructor:
		return p.entity(n, depth, asPrefix, noType, false, "deinit", -1, ""), true
	case kDeallocator, kIsolatedDeallocator:
		name := "deinit"
		if n.first().is(kClass) {
			if n.kind == kDeallocator {
				name = "__deallocating_deinit"
			} else {
				name = "__isolated_deallocating_deinit"
			}
		}
		return p.entity(n, depth, asPrefix, noType, false, name, -1, ""), true
	case kIVarInitializer:
		return p.entity(n, depth, asPrefix, noType, false, "__ivar_initializer", -1, ""), true
	case kIVarDestroyer:
		return p.entity(n, depth, asPrefix, noType, false, "__ivar_destroyer", -1, ""), true
	case kOpaqueReturnTypeOf:
		p.s("<<opaque return type of ")
		p.children(n, depth, "")
		p.s(">>")
	case kAccessorFunctionReference:
		p.s("accessor function at " + strconv.FormatUint(n.index, 10))
	case kGlobalVariableOnceToken, kGlobalVariableOnceFunction:
		if n.kind == kGlobalVariableOnceToken {
			p.s("one-time initialization token for ")
		} else {
			p.s("one-time initialization function for ")
		}
		c(1)
	case kGlobalVariableOnceDeclList:
		if n.numChildren() == 1 {
			c0()
		} else {
			p.s("(")
			p.children(n, depth, ", ")
			p.s(")")
		}
	default:
		return nil, false
	}
	return nil, true
}
