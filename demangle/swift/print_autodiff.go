package swift

import "strconv"

// Printing automatic differentiation thunks, functions and witnesses.

// printAutoDiffNode prints the node kinds of its area; ok is false for any other kind.
func (p *printer) printAutoDiffNode(n *node, depth int, asPrefix bool) (r *node, ok bool) {
	c0 := func() { p.print(n.child(0), depth+1, false) }
	c := func(i int) { p.print(n.child(i), depth+1, false) }
	switch n.kind {
	case kAutoDiffFunction, kAutoDiffDerivativeVTableThunk:
		end := 0
		for end < n.numChildren() && n.child(end).kind != kAutoDiffFunctionKind {
			end++
		}
		if end+2 >= n.numChildren() {
			p.invalid = true
			return nil, true
		}
		if n.kind == kAutoDiffDerivativeVTableThunk {
			p.s("vtable thunk for ")
		}
		c(end)
		p.s(" of ")
		var sig *node
		for i := 0; i < end; i++ {
			if i == end-1 && n.child(i).kind == kDependentGenericSignature {
				sig = n.child(i)
				break
			}
			c(i)
		}
		if p.opt.shortenThunk {
			return nil, true
		}
		p.s(" with respect to parameters ")
		c(end + 1)
		p.s(" and results ")
		c(end + 2)
		if sig != nil && p.opt.displayWhere {
			p.s(" with ")
			p.print(sig, depth+1, false)
		}
	case kAutoDiffSelfReorderingReabstractionThunk:
		p.s("autodiff self-reordering reabstraction thunk ")
		if n.numChildren() < 3 {
			p.invalid = true
			return nil, true
		}
		from, to := n.child(0), n.child(1)
		if p.opt.shortenThunk {
			p.s("for ")
			p.print(from, depth+1, false)
			return nil, true
		}
		i := 2
		var sig *node
		if n.child(i).kind == kDependentGenericSignature {
			sig = n.child(i)
			i++
		}
		p.s("for ")
		c(i)
		if sig != nil {
			p.print(sig, depth+1, false)
			p.s(" ")
		}
		p.s(" from ")
		p.print(from, depth+1, false)
		p.s(" to ")
		p.print(to, depth+1, false)
	case kAutoDiffSubsetParametersThunk:
		p.s("autodiff subset parameters thunk for ")
		i := n.numChildren() - 1
		if i < 4 {
			p.invalid = true
			return nil, true
		}
		toParams, results, params, kindNd := n.child(i), n.child(i-1), n.child(i-2), n.child(i-3)
		i -= 4
		p.print(kindNd, depth+1, false)
		p.s(" from ")
		if i == 0 {
			c0()
		} else {
			for j := 0; j < i; j++ {
				c(j)
			}
		}
		if p.opt.shortenThunk {
			return nil, true
		}
		p.s(" with respect to parameters ")
		p.print(params, depth+1, false)
		p.s(" and results ")
		p.print(results, depth+1, false)
		p.s(" to parameters ")
		p.print(toParams, depth+1, false)
		if i > 0 {
			p.s(" of type ")
			c(i)
		}
	case kAutoDiffFunctionKind:
		switch n.index {
		case 'f':
			p.s("forward-mode derivative")
		case 'r':
			p.s("reverse-mode derivative")
		case 'd':
			p.s("differential")
		case 'p':
			p.s("pullback")
		}
	case kDifferentiabilityWitness:
		off := 3
		if n.last().is(kDependentGenericSignature) {
			off = 4
		}
		ki := n.numChildren() - off
		if ki < 0 {
			p.invalid = true
			return nil, true
		}
		switch n.child(ki).index {
		case 'f':
			p.s("forward-mode")
		case 'r':
			p.s("reverse-mode")
		case 'd':
			p.s("normal")
		case 'l':
			p.s("linear")
		}
		p.s(" differentiability witness for ")
		i := 0
		for ; i < n.numChildren() && n.child(i).kind != kIndex; i++ {
			c(i)
		}
		i++
		p.s(" with respect to parameters ")
		c(i)
		i++
		p.s(" and results ")
		c(i)
		i++
		if i < n.numChildren() {
			p.s(" with ")
			c(i)
		}
	case kIndexSubset:
		p.s("{")
		first := true
		for i := 0; i < len(n.text); i++ {
			if n.text[i] != 'S' {
				continue
			}
			if !first {
				p.s(", ")
			}
			p.s(strconv.Itoa(i))
			first = false
		}
		p.s("}")
	default:
		return nil, false
	}
	return nil, true
}
