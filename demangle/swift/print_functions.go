package swift

// Printing function types: parameters, attributes, results, and SIL
// implementation function types.

func (p *printer) functionParameters(labels, paramType *node, depth int, showTypes bool) {
	if !paramType.is(kArgumentTuple) {
		p.invalid = true
		return
	}
	params := paramType.first().first()
	if params == nil {
		p.invalid = true
		return
	}
	if params.kind != kTuple {
		if showTypes {
			p.s("(")
			p.print(params, depth+1, false)
			p.s(")")
		} else {
			p.s("(_:)")
		}
		return
	}
	hasLabels := labels.numChildren() > 0
	p.s("(")
	for i, param := range params.children {
		if i > 0 && showTypes {
			p.s(", ")
		}
		if hasLabels {
			l := labels.child(i)
			if l.is(kIdentifier) {
				p.s(l.text + ":")
			} else {
				p.s("_:")
			}
		} else if !showTypes {
			if l := param.childOfKind(kTupleElementName); l != nil {
				p.s(l.text + ":")
			} else {
				p.s("_:")
			}
		}
		if hasLabels && showTypes {
			p.s(" ")
		}
		if showTypes {
			p.print(param, depth+1, false)
		}
	}
	p.s(")")
}

func (p *printer) functionType(labels, n *node, depth int) {
	if n.numChildren() < 2 {
		p.invalid = true
		return
	}
	convention := func(c string) {
		p.s("@convention(" + c)
		if n.first().is(kClangType) {
			p.s(", mangledCType: \"")
			p.print(n.first(), depth+1, false)
			p.s("\"")
		}
		p.s(") ")
	}
	switch n.kind {
	case kAutoClosureType, kEscapingAutoClosureType:
		p.s("@autoclosure ")
	case kCalledOnceFunctionType:
		p.s("@called(once) ")
	case kThinFunctionType:
		p.s("@convention(thin) ")
	case kCFunctionPointer:
		convention("c")
	case kEscapingObjCBlock:
		p.s("@escaping ")
		convention("block")
	case kObjCBlock:
		convention("block")
	}
	argIndex := n.numChildren() - 2
	i := 0
	if n.child(i).is(kClangType) {
		i++
	}
	sending, sendable, async := false, false, false
	var diff uint64
	if n.child(i).is(kSendingResultFunctionType) {
		i++
		sending = true
	}
	if n.child(i).is(kIsolatedAnyFunctionType) {
		p.print(n.child(i), depth+1, false)
		i++
	}
	var nonIsolated *node
	if n.child(i).is(kNonIsolatedCallerFunctionType) {
		nonIsolated = n.child(i)
		i++
	}
	if n.child(i).is(kGlobalActorFunctionType) {
		p.print(n.child(i), depth+1, false)
		i++
	}
	if n.child(i).is(kDifferentiableFunctionType) {
		diff = n.child(i).index
		i++
	}
	var thrown *node
	if n.child(i).is(kThrowsAnnotation) || n.child(i).is(kTypedThrowsAnnotation) {
		thrown = n.child(i)
		i++
	}
	if n.child(i).is(kConcurrentFunctionType) {
		i++
		sendable = true
	}
	if n.child(i).is(kAsyncAnnotation) {
		async = true
	}
	switch diff {
	case 'f':
		p.s("@differentiable(_forward) ")
	case 'r':
		p.s("@differentiable(reverse) ")
	case 'l':
		p.s("@differentiable(_linear) ")
	case 'd':
		p.s("@differentiable ")
	}
	if nonIsolated != nil {
		p.print(nonIsolated, depth+1, false)
	}
	if sendable {
		p.s("@Sendable ")
	}
	p.functionParameters(labels, n.child(argIndex), depth, p.opt.showArgumentTypes)
	if !p.opt.showArgumentTypes {
		return
	}
	if async {
		p.s(" async")
	}
	if thrown != nil {
		p.print(thrown, depth+1, false)
	}
	p.s(" -> ")
	if sending {
		p.s("sending ")
	}
	p.print(n.child(argIndex+1), depth+1, false)
}

func (p *printer) implFunctionType(fn *node, depth int) {
	var patternSubs, invocationSubs, sendingResult *node
	const (
		attrs = iota
		inputs
		results
	)
	state := attrs
	transition := func(to int) {
		for ; state < to; state++ {
			switch state {
			case attrs:
				if patternSubs != nil {
					p.s("@substituted ")
					p.print(patternSubs.first(), depth+1, false)
					p.s(" ")
				}
				p.s("(")
			case inputs:
				p.s(") -> ")
				if sendingResult != nil {
					p.print(sendingResult, depth+1, false)
					p.s(" ")
				}
				p.s("(")
			}
		}
	}
	for _, c := range fn.children {
		switch c.kind {
		case kImplParameter:
			if state == inputs {
				p.s(", ")
			}
			transition(inputs)
			p.print(c, depth+1, false)
		case kImplResult, kImplYield, kImplErrorResult:
			if state == results {
				p.s(", ")
			}
			transition(results)
			p.print(c, depth+1, false)
		case kImplPatternSubstitutions:
			patternSubs = c
		case kImplInvocationSubstitutions:
			invocationSubs = c
		case kImplSendingResult:
			sendingResult = c
		default:
			p.print(c, depth+1, false)
			p.s(" ")
		}
	}
	transition(results)
	p.s(")")
	if patternSubs != nil {
		p.s(" for <")
		p.children(patternSubs.child(1), depth, "")
		p.s(">")
	}
	if invocationSubs != nil {
		p.s(" for <")
		p.children(invocationSubs.first(), depth, "")
		p.s(">")
	}
}
