package swift

import "strconv"

// Printing generic signatures' requirements and dependent types.

// printGenericNode prints the node kinds of its area; ok is false for any other kind.
func (p *printer) printGenericNode(n *node, depth int, asPrefix bool) (r *node, ok bool) {
	c0 := func() { p.print(n.child(0), depth+1, false) }
	c := func(i int) { p.print(n.child(i), depth+1, false) }
	switch n.kind {
	case kDependentPseudogenericSignature, kDependentGenericSignature:
		p.genericSignature(n, depth)
	case kDependentGenericConformanceRequirement:
		c0()
		p.s(": ")
		c(1)
	case kDependentGenericInverseConformanceRequirement:
		c0()
		p.s(": ~")
		switch i := n.child(1).index; i {
		case 0:
			p.s("Swift.Copyable")
		case 1:
			p.s("Swift.Escapable")
		default:
			p.s("Swift.<bit " + strconv.FormatUint(i, 10) + ">")
		}
	case kDependentGenericLayoutRequirement:
		c0()
		p.s(": ")
		var name string
		switch n.child(1).text {
		case "U":
			name = "_UnknownLayout"
		case "R":
			name = "_RefCountedObject"
		case "N":
			name = "_NativeRefCountedObject"
		case "C":
			name = "AnyObject"
		case "D":
			name = "_NativeClass"
		case "T", "E", "e":
			name = "_Trivial"
		case "M", "m":
			name = "_TrivialAtMost"
		}
		p.s(name)
		if n.numChildren() > 2 {
			p.s("(")
			c(2)
			if n.numChildren() > 3 {
				p.s(", ")
				c(3)
			}
			p.s(")")
		}
	case kDependentGenericSameTypeRequirement:
		c0()
		p.s(" == ")
		c(1)
	case kDependentGenericSameShapeRequirement:
		c0()
		p.s(".shape == ")
		c(1)
		p.s(".shape")
	case kDependentGenericParamType:
		p.s(genericParameterName(n.child(0).index, n.child(1).index))
	case kDependentGenericType:
		c0()
		if needSpaceBeforeType(n.child(1)) {
			p.s(" ")
		}
		c(1)
	case kDependentMemberType:
		c0()
		p.s(".")
		c(1)
	case kDependentAssociatedTypeRef:
		if n.numChildren() > 1 {
			c(1)
			p.s(".")
		}
		c0()
	case kAssocTypePath:
		p.children(n, depth, ".")
	case kAssociatedTypeGenericParamRef:
		p.s("generic parameter reference for associated type ")
		p.children(n, depth, "")
	default:
		return nil, false
	}
	return nil, true
}
