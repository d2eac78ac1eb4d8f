package swift

import "strconv"

// Printing witnesses, witness table accessors and protocol conformances.

// printWitnessNode prints the node kinds of its area; ok is false for any other kind.
func (p *printer) printWitnessNode(n *node, depth int, asPrefix bool) (r *node, ok bool) {
	c0 := func() { p.print(n.child(0), depth+1, false) }
	c := func(i int) { p.print(n.child(i), depth+1, false) }
	switch n.kind {
	case kRetroactiveConformance:
		if n.numChildren() == 2 {
			p.s("retroactive @ ")
			c0()
			c(1)
		}
	case kLazyProtocolWitnessTableAccessor, kLazyProtocolWitnessTableCacheVariable:
		if n.kind == kLazyProtocolWitnessTableAccessor {
			p.s("lazy protocol witness table accessor for type ")
		} else {
			p.s("lazy protocol witness table cache variable for type ")
		}
		c0()
		p.s(" and conformance ")
		c(1)
	case kProtocolWitness:
		p.s("protocol witness for ")
		c(1)
		p.s(" in conformance ")
		c0()
	case kFieldOffset:
		c0()
		p.s("field offset for ")
		c(1)
	case kEnumCase:
		p.s("enum case for ")
		c0()
	case kAssociatedConformanceDescriptor, kDefaultAssociatedConformanceAccessor:
		if n.kind == kAssociatedConformanceDescriptor {
			p.s("associated conformance descriptor for ")
		} else {
			p.s("default associated conformance accessor for ")
		}
		c0()
		p.s(".")
		c(1)
		p.s(": ")
		c(2)
	case kAssociatedTypeMetadataAccessor:
		p.s("associated type metadata accessor for ")
		c(1)
		p.s(" in ")
		c0()
	case kBaseConformanceDescriptor:
		p.s("base conformance descriptor for ")
		c0()
		p.s(": ")
		c(1)
	case kAssociatedTypeWitnessTableAccessor:
		p.s("associated type witness table accessor for ")
		c(1)
		p.s(" : ")
		c(2)
		p.s(" in ")
		c0()
	case kBaseWitnessTableAccessor:
		p.s("base witness table accessor for ")
		c(1)
		p.s(" in ")
		c0()
	case kValueWitness:
		if k := n.first().index; k < uint64(len(valueWitnessNames)) {
			p.s(valueWitnessNames[k])
		}
		if p.opt.shortenValueWitness {
			p.s(" for ")
		} else {
			p.s(" value witness for ")
		}
		c(1)
	case kProtocolConformance:
		if n.numChildren() == 4 {
			p.s("property behavior storage of ")
			c(2)
			p.s(" in ")
			c0()
			p.s(" : ")
			c(1)
		} else {
			c0()
			if p.opt.displayConformances {
				p.s(" : ")
				c(1)
				p.s(" in ")
				c(2)
			}
		}
	case kAnyProtocolConformanceList:
		if n.numChildren() > 0 {
			p.s("(")
			p.children(n, depth, ", ")
			p.s(")")
		}
	case kConcreteProtocolConformance:
		p.s("concrete protocol conformance ")
		if n.hasIndex {
			p.s("#" + strconv.FormatUint(n.index, 10) + " ")
		}
		c0()
		p.s(" to ")
		c(1)
		if n.numChildren() > 2 && n.child(2).numChildren() > 0 {
			p.s(" with conditional requirements: ")
			c(2)
		}
	case kPackProtocolConformance:
		p.s("pack protocol conformance ")
		p.children(n, depth, "")
	case kDependentAssociatedConformance:
		p.s("dependent associated conformance ")
		p.children(n, depth, "")
	case kDependentProtocolConformanceAssociated, kDependentProtocolConformanceInherited, kDependentProtocolConformanceRoot:
		switch n.kind {
		case kDependentProtocolConformanceAssociated:
			p.s("dependent associated protocol conformance ")
		case kDependentProtocolConformanceInherited:
			p.s("dependent inherited protocol conformance ")
		default:
			p.s("dependent root protocol conformance ")
		}
		if idx := n.child(2); idx != nil && idx.hasIndex {
			p.s("#" + strconv.FormatUint(idx.index, 10) + " ")
		}
		c0()
		p.s(" to ")
		c(1)
	case kDependentProtocolConformanceOpaque:
		p.s("opaque result conformance ")
		c0()
		p.s(" of ")
		c(1)
	case kProtocolConformanceRefInTypeModule:
		p.s("protocol conformance ref (type's module) ")
		p.children(n, depth, "")
	case kProtocolConformanceRefInProtocolModule:
		p.s("protocol conformance ref (protocol's module) ")
		p.children(n, depth, "")
	case kProtocolConformanceRefInOtherModule:
		p.s("protocol conformance ref (retroactive) ")
		p.children(n, depth, "")
	default:
		return nil, false
	}
	return nil, true
}
