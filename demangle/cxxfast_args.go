package demangle

import "bytes"

// The fast path's template arguments: types, packs and their expansions,
// literals, addresses and the expressions it takes.

// templateArgs parses I <template-arg>+ E after the name cur and returns
// the span of cur<args>, the arguments left in p.args from base.
func (p *fastParser) templateArgs(cur span) (sp span, base int) {
	p.i++ // I
	base = len(p.args)
	for !p.bad && p.peek() != 'E' {
		var a fastType
		switch p.peek() {
		case 'L':
			a = p.literal()
		case 'J':
			a = p.pack()
		case 'X':
			a = p.exprArg()
		case 0:
			p.fail()
		default:
			a = p.typ()
		}
		p.args = append(p.args, a)
	}
	if p.bad || len(p.args) == base {
		p.fail()
		return span{}, base
	}
	p.i++ // E
	lo := p.n
	p.putSpan(cur)
	if p.n > lo && p.out[p.n-1] == '<' {
		p.putByte(' ') // as after operator<
	}
	p.putByte('<')
	args := p.args[base:]
	first := true
	for _, a := range args {
		if a.empty {
			continue // an empty pack prints nothing
		}
		if !first {
			p.put(", ")
		}
		p.appendType(a)
		first = false
	}
	// No space before the '>' after a trailing empty pack (as c++filt).
	if p.out[p.n-1] == '>' && !(len(args) > 1 && args[len(args)-1].empty) {
		p.putByte(' ')
	}
	p.putByte('>')
	return span{int32(lo), int32(p.n)}, base
}

// expansion parses Dp [PROK]* T <number> _, a parameter pack's
// expansion (as parameters: Args&&...), and returns the parameters it
// stands for, printed as a list.
func (p *fastParser) expansion() fastType {
	p.i += 2 // Dp
	mods := p.i
	for p.i < len(p.s) && (p.s[p.i] == 'P' || p.s[p.i] == 'R' || p.s[p.i] == 'O' || p.s[p.i] == 'K') {
		p.i++
	}
	mods2 := p.i
	if p.peek() != 'T' {
		p.fail()
		return fastType{}
	}
	// The pack itself, through templateParam's checks but for its kind.
	p.i++
	idx, ok := p.paramIndex()
	if !ok {
		p.fail()
		return fastType{}
	}
	if !p.haveFnArgs || p.noParam > 0 || idx >= len(p.fnArgs) || !p.fnArgs[idx].pack || p.peek() == 'I' {
		p.fail()
		return fastType{}
	}
	if p.firstT < 0 {
		p.firstT = len(p.subs)
	}
	// Candidates: the pack, each modified type, the expansion; named
	// again only the first two of them, and only when the pack holds one
	// type (below): c++filt prints one of a longer pack's types where
	// the full demangler prints them all.
	first := len(p.subs)
	for range mods2 - mods + 2 {
		p.subs = append(p.subs, fastType{pack: true, literal: true, closed: true, opaque: true})
	}
	pk := p.fnArgs[idx]
	elems := p.packElems[pk.elemLo:pk.elemHi]
	lo := p.n
	for n, e := range elems {
		if e.fn || e.closed && e.ins == 0 || e.literal || e.pack {
			p.fail()
			return fastType{}
		}
		if n > 0 {
			p.put(", ")
		}
		rest := e.hi // what follows the modifiers
		if e.closed {
			rest = e.ins
		}
		p.putSpan(span{e.lo, rest})
		ref, rref, cv := e.ref, e.ref && p.n >= 2 && p.out[p.n-1] == '&' && p.out[p.n-2] == '&', e.cv
		for j := mods2 - 1; j >= mods; j-- {
			switch c := p.s[j]; {
			case c == 'K':
				if ref || cv {
					p.fail()
					return fastType{}
				}
				p.put(" const")
				cv = true
			case c == 'P':
				if ref || e.closed {
					p.fail()
					return fastType{}
				}
				p.putByte('*')
				cv = false
			case c == 'R' && rref:
				p.n, rref = p.n-1, false // && & is &
			case c == 'R' && !ref:
				p.putByte('&')
				ref = true
			case c == 'O' && !ref:
				p.put("&&")
				ref, rref = true, true
			}
		}
		p.putSpan(span{rest, e.hi})
		if len(elems) == 1 && !e.closed {
			p.subs[first] = e
			p.subs[first].opaque = false
			switch {
			case mods2 == mods:
				// The expansion of T_ is T_'s type, named again as
				// it is only: the full demangler prints int&& for a
				// reference to the expansion of int&'s (literal: not
				// a type to make more of).
				p.subs[first+1] = fastType{span: e.span, literal: true}
			case mods2-mods == 1 && !e.ref:
				// T_ with one modifier, no references collapsed (the
				// full demangler prints int&&& for (int&)&&).
				p.subs[first+1] = fastType{span: span{int32(lo), int32(p.n)}, ref: ref, cv: cv}
			}
		}
	}
	return fastType{span: span{int32(lo), int32(p.n)}, pack: true, empty: len(elems) == 0}
}

// join emits the texts of a, sep and b and returns their span.
func (p *fastParser) join(a span, sep string, b span) span {
	lo := p.n
	p.putSpan(a)
	p.put(sep)
	p.putSpan(b)
	return span{int32(lo), int32(p.n)}
}

// addressArg parses Xad L_Z <encoding> E E, a template argument that is
// the address of a function or variable, printed as the full demangler
// does: &a::f for a qualified name (member or namespace scope), &x for
// a variable, and with its signature, &(void f<int>(int)), a plain or
// template function or a const member.
func (p *fastParser) addressArg() fastType {
	const prefix = "XadL_Z"
	if p.tmplInScope || len(p.s)-p.i < len(prefix) || p.s[p.i:p.i+len(prefix)] != prefix {
		p.fail()
		return fastType{}
	}
	p.i += len(prefix)
	c := p.peek()
	qualified := c == 'N' || c == 'S'
	if c != 'N' && (c < '1' || c > '9') && (c != 'S' || p.i+1 >= len(p.s) || p.s[p.i+1] != 't') {
		p.fail() // a local or special name, an operator
		return fastType{}
	}
	outer := p.enterEncoding()
	defer p.leaveEncoding(outer)
	name := p.functionName()
	if p.bad {
		return fastType{}
	}
	if qualified {
		// N with one component (N1AE) is no qualified name: the full
		// demangler keeps such a function's signature.
		t := p.text(name)
		if lt := bytes.IndexByte(t, '<'); lt >= 0 {
			t = t[:lt]
		}
		qualified = bytes.Contains(t, []byte("::"))
	}
	lo := p.n
	if p.peek() == 'E' {
		// A variable.
		if p.isConst || p.hasReturn || p.refQual != "" || p.haveFnArgs {
			p.fail()
			return fastType{}
		}
		p.putByte('&')
		p.putSpan(name)
	} else {
		ret, base, ok := p.signature()
		if !ok {
			return fastType{}
		}
		lo = p.n
		if qualified && !p.haveFnArgs && !p.isConst && p.refQual == "" {
			p.putByte('&')
			p.putSpan(name)
		} else {
			p.put("&(")
			if p.hasReturn {
				p.putSpan(ret.span)
				p.putByte(' ')
			}
			p.appendFunction(name, base)
			p.putByte(')')
		}
		p.params = p.params[:base]
	}
	if p.i+1 >= len(p.s) || p.s[p.i] != 'E' || p.s[p.i+1] != 'E' {
		p.fail()
		return fastType{}
	}
	p.i += 2
	return fastType{span: span{int32(lo), int32(p.n)}, literal: true}
}

// exprArg parses X <expression> E, a template argument, of the shapes
// the fast path prints: an address (addressArg), a qualified name (sr,
// unresolvedArg) and a template parameter's value (T_).
func (p *fastParser) exprArg() fastType {
	if p.i+2 < len(p.s) && p.s[p.i+1] == 's' && p.s[p.i+2] == 'r' {
		return p.unresolvedArg()
	}
	if p.i+1 < len(p.s) && p.s[p.i+1] == 'T' {
		// The value of the function's template argument, X T_ E.
		p.i += 2
		idx, ok := p.paramIndex()
		if !ok || !p.haveFnArgs || p.noParam > 0 || idx >= len(p.fnArgs) || !p.fnArgs[idx].literal || p.peek() != 'E' {
			p.fail()
			return fastType{}
		}
		p.i++ // E
		if p.firstT < 0 {
			p.firstT = len(p.subs)
		}
		return p.fnArgs[idx]
	}
	return p.addressArg()
}

// unresolvedArg parses X sr <level>+ E <name> E (std::is_signed<T>::value:
// a level is a name and its template arguments, no substitution
// candidate itself, as the full demangler's patch 1) or X sr T_ <name> E.
func (p *fastParser) unresolvedArg() fastType {
	p.i += 3 // Xsr
	base := len(p.params)
	if p.peek() == 'T' {
		t := p.typ() // a candidate
		if p.bad {
			return fastType{}
		}
		p.params = append(p.params, t.span)
	} else {
		for !p.bad && p.peek() != 'E' {
			if c := p.peek(); c < '1' || c > '9' {
				p.fail() // srN, a decltype, a substitution, ...
				return fastType{}
			}
			level := p.emit(nil, p.sourceName(), "")
			if p.peek() == 'I' {
				var args int
				level, args = p.templateArgs(level)
				p.args = p.args[:args]
			}
			p.params = append(p.params, level)
		}
		if p.bad || len(p.params) == base {
			p.fail()
			return fastType{}
		}
		p.i++ // E
	}
	if c := p.peek(); c < '1' || c > '9' {
		p.fail() // an operator, a destructor
		return fastType{}
	}
	id := p.sourceName()
	if p.bad || p.peek() != 'E' {
		p.fail() // template arguments, or no end
		return fastType{}
	}
	p.i++ // E
	lo := p.n
	for _, l := range p.params[base:] {
		p.putSpan(l)
		p.put("::")
	}
	p.put(id)
	p.params = p.params[:base]
	return fastType{span: span{int32(lo), int32(p.n)}, literal: true}
}

// pack parses J <template-arg>* E, an argument pack of types and
// literals, printed as its elements.
func (p *fastParser) pack() fastType {
	p.i++ // J
	base := len(p.args)
	for !p.bad && p.peek() != 'E' {
		var a fastType
		switch c := p.peek(); {
		case c == 'L':
			a = p.literal()
		case c == 'X':
			a = p.exprArg()
		case c == 0 || c == 'J':
			p.fail()
		case c == 'D' && p.i+1 < len(p.s) && p.s[p.i+1] == 'p':
			// An expansion of the function's pack, its elements
			// in this one's place.
			if a = p.expansion(); a.empty {
				continue
			}
		default:
			a = p.typ()
		}
		p.args = append(p.args, a)
	}
	if p.bad {
		return fastType{}
	}
	p.i++ // E
	elems := p.args[base:]
	lo := p.n
	for n, a := range elems {
		if n > 0 {
			p.put(", ")
		}
		p.appendType(a)
	}
	t := fastType{span: span{int32(lo), int32(p.n)}, pack: true, empty: len(elems) == 0}
	t.elemLo = int32(len(p.packElems))
	p.packElems = append(p.packElems, elems...)
	t.elemHi = int32(len(p.packElems))
	p.args = p.args[:base]
	return t
}

// literal parses L <type> [n] <digits> E, an integer template argument.
func (p *fastParser) literal() fastType {
	p.i++ // L
	c := p.peek()
	if c == '_' || c == 'Z' {
		p.fail() // an external name
		return fastType{}
	}
	var suffix string
	typed := false // printed as (type)value
	switch c {
	case 'i':
		suffix = ""
	case 'j':
		suffix = "u"
	case 'l':
		suffix = "l"
	case 'm':
		suffix = "ul"
	case 'x':
		suffix = "ll"
	case 'y':
		suffix = "ull"
	case 'b':
	case 'a', 'c', 'h', 's', 't', 'w', 'P':
		typed = true // P: a null pointer, (void*)0
	default:
		if c == 'N' || c >= '1' && c <= '9' || c == 'S' {
			typed = true // an enum
		} else {
			p.fail()
			return fastType{}
		}
	}
	t := p.typ()
	neg := p.peek() == 'n'
	if neg {
		p.i++
	}
	j := p.i
	for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
		j++
	}
	if p.bad || j == p.i || j >= len(p.s) || p.s[j] != 'E' {
		p.fail()
		return fastType{}
	}
	val := p.s[p.i:j]
	p.i = j + 1
	sign := ""
	if neg {
		sign = "-"
	}
	lo := p.n
	switch {
	case c == 'b':
		switch {
		case neg || len(val) != 1 || val[0] > '1':
			p.fail()
		case val == "0":
			p.put("false")
		default:
			p.put("true")
		}
	case typed:
		p.putByte('(')
		p.putSpan(t.span)
		p.putByte(')')
		p.put(sign)
		p.put(val)
	default:
		p.put(sign)
		p.put(val)
		p.put(suffix)
	}
	return fastType{span: span{int32(lo), int32(p.n)}, literal: true}
}
