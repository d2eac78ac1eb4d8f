package swift

import "strconv"

// Printing thunks, specializations, outlined operations and async partial
// functions.

// printThunkNode prints the node kinds of its area; ok is false for any other kind.
func (p *printer) printThunkNode(n *node, depth int, asPrefix bool) (r *node, ok bool) {
	c0 := func() { p.print(n.child(0), depth+1, false) }
	c := func(i int) { p.print(n.child(i), depth+1, false) }
	switch n.kind {
	case kOutlinedBridgedMethod:
		p.s("outlined bridged method (" + n.text + ") of ")
	case kOutlinedCopy, kOutlinedConsume:
		if n.kind == kOutlinedCopy {
			p.s("outlined copy of ")
		} else {
			p.s("outlined consume of ")
		}
		c0()
		if n.numChildren() > 1 {
			c(1)
		}
	case kOutlinedVariable:
		p.s("outlined variable #" + strconv.FormatUint(n.index, 10) + " of ")
	case kOutlinedReadOnlyObject:
		p.s("outlined read-only object #" + strconv.FormatUint(n.index, 10) + " of ")
	case kFunctionSignatureSpecialization:
		p.specializationPrefix(n, "function signature specialization", depth, "")
	case kGenericPartialSpecialization:
		p.specializationPrefix(n, "generic partial specialization", depth, "Signature = ")
	case kGenericPartialSpecializationNotReAbstracted:
		p.specializationPrefix(n, "generic not-reabstracted partial specialization", depth, "Signature = ")
	case kGenericSpecialization, kGenericSpecializationInResilienceDomain:
		p.specializationPrefix(n, "generic specialization", depth, "")
	case kGenericSpecializationPrespecialized:
		p.specializationPrefix(n, "generic pre-specialization", depth, "")
	case kGenericSpecializationNotReAbstracted:
		p.specializationPrefix(n, "generic not re-abstracted specialization", depth, "")
	case kInlinedGenericFunction:
		p.specializationPrefix(n, "inlined generic function", depth, "")
	case kDroppedArgument:
		p.s("param" + strconv.FormatUint(n.index, 10) + "-removed")
	case kGenericSpecializationParam:
		c0()
		for i := 1; i < n.numChildren(); i++ {
			if i == 1 {
				p.s(" with ")
			} else {
				p.s(" and ")
			}
			c(i)
		}
	case kFunctionSignatureSpecializationParamPayload:
		if dm := demangleAsString(n.text, defaultOptions); dm != "" {
			p.s(dm)
		} else {
			p.s(n.text)
		}
	case kFunctionSignatureSpecializationParamKind:
		p.funcSigSpecParamKind(n.index)
	case kVTableThunk:
		p.s("vtable thunk for ")
		c(1)
		p.s(" dispatching to ")
		c0()
	case kPartialApplyForwarder, kPartialApplyObjCForwarder:
		switch {
		case p.opt.shortenPartialApply:
			p.s("partial apply")
		case n.kind == kPartialApplyForwarder:
			p.s("partial apply forwarder")
		default:
			p.s("partial apply ObjC forwarder")
		}
		if n.numChildren() > 0 {
			p.s(" for ")
			p.children(n, depth, "")
		}
	case kKeyPathGetterThunkHelper, kKeyPathSetterThunkHelper, kKeyPathUnappliedMethodThunkHelper,
		kKeyPathAppliedMethodThunkHelper:
		switch n.kind {
		case kKeyPathGetterThunkHelper:
			p.s("key path getter for ")
		case kKeyPathSetterThunkHelper:
			p.s("key path setter for ")
		case kKeyPathUnappliedMethodThunkHelper:
			p.s("key path unapplied method ")
		default:
			p.s("key path applied method ")
		}
		c0()
		p.s(" : ")
		for i := 1; i < n.numChildren(); i++ {
			if n.child(i).kind == kIsSerialized {
				p.s(", ")
			}
			c(i)
		}
	case kKeyPathEqualsThunkHelper, kKeyPathHashThunkHelper:
		if n.kind == kKeyPathEqualsThunkHelper {
			p.s("key path index equality operator for ")
		} else {
			p.s("key path index hash operator for ")
		}
		last := n.numChildren()
		if n.child(last - 1).is(kIsSerialized) {
			last--
		}
		if n.child(last - 1).is(kDependentGenericSignature) {
			c(last - 1)
			last--
		}
		p.s("(")
		for i := 0; i < last; i++ {
			if i != 0 {
				p.s(", ")
			}
			c(i)
		}
		p.s(")")
	case kReabstractionThunk, kReabstractionThunkHelper:
		if p.opt.shortenThunk {
			p.s("thunk for ")
			c(n.numChildren() - 1)
			return nil, true
		}
		p.s("reabstraction thunk ")
		if n.kind == kReabstractionThunkHelper {
			p.s("helper ")
		}
		i := 0
		if n.numChildren() == 3 {
			c0()
			p.s(" ")
			i = 1
		}
		p.s("from ")
		c(i + 1)
		p.s(" to ")
		c(i)
	case kReabstractionThunkHelperWithGlobalActor:
		c0()
		p.s(" with global actor constraint ")
		c(1)
	case kReabstractionThunkHelperWithSelf:
		p.s("reabstraction thunk ")
		i := 0
		if n.numChildren() == 4 {
			c0()
			p.s(" ")
			i = 1
		}
		p.s("from ")
		c(i + 2)
		p.s(" to ")
		c(i + 1)
		p.s(" self ")
		c(i)
	case kPredefinedObjCAsyncCompletionHandlerImpl, kObjCAsyncCompletionHandlerImpl:
		if n.kind == kPredefinedObjCAsyncCompletionHandlerImpl {
			p.s("predefined ")
		}
		p.s("@objc completion handler block implementation for ")
		if n.numChildren() >= 4 {
			c(3)
		}
		c0()
		p.s(" with result type ")
		c(1)
		switch n.child(2).index {
		case 0:
		case 1:
			p.s(" nonzero on error")
		case 2:
			p.s(" zero on error")
		default:
			p.s(" <invalid error flag>")
		}
	case kAsyncAwaitResumePartialFunction, kAsyncSuspendResumePartialFunction:
		if p.opt.showAsyncResume {
			p.s("(")
			c0()
			p.s(")")
			if n.kind == kAsyncAwaitResumePartialFunction {
				p.s(" await resume partial function for ")
			} else {
				p.s(" suspend resume partial function for ")
			}
		}
	default:
		return nil, false
	}
	return nil, true
}
