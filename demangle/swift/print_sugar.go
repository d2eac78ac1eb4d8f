package swift

// Printing bound generic types, as Swift.Optional<X> or with the sugar
// the full form synthesizes: X?, X!, [X], [K : V].

func isSwiftModule(n *node) bool     { return n.is(kModule) && n.text == "Swift" }
func isIdent(n *node, s string) bool { return n.is(kIdentifier) && n.text == s }

const (
	sugarNone = iota
	sugarOptional
	sugarIUO
	sugarArray
	sugarDictionary
)

func findSugar(n *node) int {
	for n.numChildren() == 1 && n.kind == kType {
		n = n.first()
	}
	if n.numChildren() != 2 || n.kind != kBoundGenericEnum && n.kind != kBoundGenericStructure {
		return sugarNone
	}
	unbound := n.first().first()
	args := n.child(1)
	if unbound == nil {
		return sugarNone
	}
	name, mod := unbound.child(1), unbound.child(0)
	if name == nil || mod == nil {
		return sugarNone
	}
	if n.kind == kBoundGenericEnum {
		if isIdent(name, "Optional") && args.numChildren() == 1 && isSwiftModule(mod) {
			return sugarOptional
		}
		if isIdent(name, "ImplicitlyUnwrappedOptional") && args.numChildren() == 1 && isSwiftModule(mod) {
			return sugarIUO
		}
		return sugarNone
	}
	if isIdent(name, "Array") && args.numChildren() == 1 && isSwiftModule(mod) {
		return sugarArray
	}
	if isIdent(name, "Dictionary") && args.numChildren() == 2 && isSwiftModule(mod) {
		return sugarDictionary
	}
	return sugarNone
}

func (p *printer) boundGenericNoSugar(n *node, depth int) {
	if n.numChildren() < 2 {
		return
	}
	p.print(n.first(), depth+1, false)
	p.s("<")
	p.children(n.child(1), depth, ", ")
	p.s(">")
}

func (p *printer) boundGeneric(n *node, depth int) {
	if n.numChildren() < 2 {
		return
	}
	if n.numChildren() != 2 || !p.opt.synthesizeSugar || n.kind == kBoundGenericClass {
		p.boundGenericNoSugar(n, depth)
		return
	}
	if n.kind == kBoundGenericProtocol {
		p.children(n.child(1), depth, "")
		p.s(" as ")
		p.print(n.first(), depth+1, false)
		return
	}
	switch sugar := findSugar(n); sugar {
	case sugarOptional, sugarIUO:
		p.withParens(n.child(1).first(), depth)
		if sugar == sugarOptional {
			p.s("?")
		} else {
			p.s("!")
		}
	case sugarArray:
		p.s("[")
		p.print(n.child(1).first(), depth+1, false)
		p.s("]")
	case sugarDictionary:
		p.s("[")
		p.print(n.child(1).child(0), depth+1, false)
		p.s(" : ")
		p.print(n.child(1).child(1), depth+1, false)
		p.s("]")
	default:
		p.boundGenericNoSugar(n, depth)
	}
}
