package swift

// Printing the parts of SIL implementation function types.

// printImplNode prints the node kinds of its area; ok is false for any other kind.
func (p *printer) printImplNode(n *node, depth int, asPrefix bool) (r *node, ok bool) {
	c0 := func() { p.print(n.child(0), depth+1, false) }
	c := func(i int) { p.print(n.child(i), depth+1, false) }
	switch n.kind {
	case kImplDifferentiabilityKind:
		p.s("@differentiable")
		switch n.index {
		case 'l':
			p.s("(_linear)")
		case 'f':
			p.s("(_forward)")
		case 'r':
			p.s("(reverse)")
		}
	case kImplCoroutineKind:
		if n.text != "" {
			p.s("@" + n.text)
		}
	case kImplParameterResultDifferentiability, kImplParameterSending, kImplParameterIsolated,
		kImplParameterImplicitLeading:
		if n.text != "" {
			p.s(n.text + " ")
		}
	case kImplFunctionConvention:
		p.s("@convention(")
		switch n.numChildren() {
		case 1:
			p.s(n.first().text)
		case 2:
			p.s(n.first().text + ", mangledCType: \"")
			c(1)
			p.s("\"")
		}
		p.s(")")
	case kImplErrorResult:
		p.s("@error ")
		p.children(n, depth, " ")
	case kImplYield:
		p.s("@yields ")
		p.children(n, depth, " ")
	case kImplParameter, kImplResult:
		c0()
		p.s(" ")
		switch n.numChildren() {
		case 3:
			c(1)
		case 4:
			c(1)
			c(2)
		}
		p.print(n.last(), depth+1, false)
	case kImplFunctionType:
		p.implFunctionType(n, depth)
	case kImplInvocationSubstitutions:
		p.s("for <")
		p.children(n.first(), depth, ", ")
		p.s(">")
	case kImplPatternSubstitutions:
		p.s("@substituted ")
		c0()
		p.s(" for <")
		p.children(n.child(1), depth, ", ")
		p.s(">")
	default:
		return nil, false
	}
	return nil, true
}
