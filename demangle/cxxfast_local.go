package demangle

import "strings"

// The fast path's local names (Z <function> E <entity>): the function's
// encoding and signature, lambdas and unnamed types, discriminators.

// localName parses Z <encoding> E <entity> [<discriminator>], a name
// local to a function, printed as f(int)::entity. function says that it
// is the name of the function being demangled (its entity may end with
// the function's own const, operator or template arguments), not a type.
func (p *fastParser) localName(function bool) span {
	if p.tmplInScope {
		p.fail() // T_ in the local function would name the outer template's
		return span{}
	}
	p.i++ // Z
	// The local function's own state, apart from the function's.
	outer := p.enterEncoding()
	scope := p.localFunction()
	p.leaveEncoding(outer)
	if p.bad || p.peek() != 'E' {
		p.fail()
		return span{}
	}
	p.i++ // E
	var ent span
	switch c := p.peek(); {
	case c == 'N':
		ent = p.nested(function, false)
	case c == 'U':
		ent = p.closure()
	case c >= '1' && c <= '9' || c == 'L':
		ent = p.emit(nil, p.unqualified(), "")
		ent, _ = p.abiTags(ent)
		if p.peek() == 'I' {
			p.fail()
		}
	default:
		p.fail() // a string literal, a default argument, an operator, ...
	}
	p.discriminator()
	if p.bad {
		return span{}
	}
	return p.join(scope, "::", ent)
}

// encodingState is what a function's encoding sets as it is parsed,
// kept aside while another encoding inside it (a local name's function,
// a function whose address is a template argument) is parsed.
type encodingState struct {
	fnArgs                         []fastType
	haveFnArgs, isConst, hasReturn bool
	refQual                        string
	firstT                         int
}

func (p *fastParser) enterEncoding() encodingState {
	st := encodingState{p.fnArgs, p.haveFnArgs, p.isConst, p.hasReturn, p.refQual, p.firstT}
	p.fnArgs = p.fnArgs[len(p.fnArgs):]
	p.haveFnArgs, p.isConst, p.hasReturn, p.refQual, p.firstT = false, false, false, "", -1
	return st
}

func (p *fastParser) leaveEncoding(st encodingState) {
	if p.firstT >= 0 {
		// The candidates that may hold the inner encoding's T_, which
		// names another template's argument outside it (in the full
		// demangler and c++filt): left to the full demangler if named
		// again.
		for j := p.firstT; j < len(p.subs); j++ {
			p.subs[j].opaque = true
		}
	}
	p.fnArgs, p.haveFnArgs, p.isConst, p.hasReturn, p.refQual, p.firstT = st.fnArgs, st.haveFnArgs, st.isConst, st.hasReturn, st.refQual, st.firstT
	p.tmplInScope = false
}

// appendFunction appends name with its parameters (p.params[base:]) and
// the qualifiers read with them: f(int) const&.
func (p *fastParser) appendFunction(name span, base int) {
	p.putSpan(name)
	p.putByte('(')
	p.appendList(p.params[base:])
	p.putByte(')')
	if p.isConst {
		p.put(" const")
	}
	p.put(p.refQual)
}

// signature reads a function's return type, where its name has one, and
// its parameters, giving the return type and where the parameters start
// in p.params; ok is false, and p failed, where they do not read.
func (p *fastParser) signature() (ret fastType, base int, ok bool) {
	p.tmplInScope = p.haveFnArgs
	if p.hasReturn {
		if ret = p.typ(); p.bad || ret.fn || ret.closed {
			p.fail()
			return fastType{}, 0, false
		}
	}
	base = len(p.params)
	if p.peek() == 'v' && p.i+1 < len(p.s) && p.s[p.i+1] == 'E' {
		p.i++ // no parameters
	} else if p.peek() == 'E' || !p.parameters(-1) {
		p.fail()
		return fastType{}, 0, false
	}
	return ret, base, true
}

// localFunction parses the <encoding> of a local name's function and
// returns how the full demangler prints it there: without a return
// type, f(int) const.
func (p *fastParser) localFunction() span {
	if c := p.peek(); c != 'N' && c != 'Z' && c != 'L' && (c < '1' || c > '9') && (c != 'S' || p.i+1 >= len(p.s) || p.s[p.i+1] != 't') {
		p.fail() // a special name (T, G) or an operator, left to the full demangler
		return span{}
	}
	name := p.functionName()
	if p.bad {
		return span{}
	}
	if p.peek() == 'E' {
		// A variable's name, no function's.
		if p.isConst || p.hasReturn || p.refQual != "" {
			p.fail()
		}
		return name
	}
	_, base, ok := p.signature()
	if !ok {
		return span{}
	}
	lo := p.n
	p.appendFunction(name, base)
	p.params = p.params[:base]
	return span{int32(lo), int32(p.n)}
}

// closure parses Ul <parameter types> E [<number>] _, a lambda
// ("{lambda(int)#1}"), or Ut [<number>] _, an unnamed type ("{unnamed
// type#1}", a substitution candidate of its own).
func (p *fastParser) closure() span {
	if p.i+1 >= len(p.s) || p.s[p.i+1] != 'l' && p.s[p.i+1] != 't' {
		p.fail()
		return span{}
	}
	lambda := p.s[p.i+1] == 'l'
	p.i += 2
	lo := p.n
	if !lambda {
		n, ok := p.compactNumber()
		if !ok {
			p.fail()
			return span{}
		}
		p.put("{unnamed type#")
		p.putNumber(n + 1)
		p.putByte('}')
		sp := span{int32(lo), int32(p.n)}
		p.subs = append(p.subs, fastType{span: sp, name: true})
		return sp
	}
	if c := p.peek(); c == 'Q' || c == 'T' && p.i+1 < len(p.s) && strings.IndexByte("yknpt", p.s[p.i+1]) >= 0 {
		p.fail() // a lambda's template parameters, a constraint
		return span{}
	}
	base := len(p.params)
	p.noParam++
	autoAt := p.autoAt
	p.autoAt = -1
	if p.peek() == 'v' && p.i+1 < len(p.s) && p.s[p.i+1] == 'E' {
		p.i++ // no parameters
	} else if p.peek() == 'E' || !p.parameters(-1) {
		p.fail()
	}
	if p.autoAt >= 0 {
		// Named again in a template's scope, an auto stands for
		// its argument (as the full demangler and c++filt print it).
		for j := p.autoAt; j < len(p.subs); j++ {
			p.subs[j].opaque = true
		}
	}
	p.noParam--
	p.autoAt = autoAt
	p.i++ // E
	n, ok := p.compactNumber()
	if p.bad || !ok {
		p.fail()
		return span{}
	}
	lo = p.n
	p.put("{lambda(")
	p.appendList(p.params[base:])
	p.put(")#")
	p.putNumber(n + 1)
	p.putByte('}')
	p.params = p.params[:base]
	return span{int32(lo), int32(p.n)}
}

// compactNumber parses _ (0) or <number> _ (number+1).
func (p *fastParser) compactNumber() (int, bool) {
	if p.peek() == '_' {
		p.i++
		return 0, true
	}
	n, digits := 0, 0
	for ; p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9'; p.i++ {
		if digits++; digits > 9 {
			return 0, false
		}
		n = n*10 + int(p.s[p.i]-'0')
	}
	if digits == 0 || p.peek() != '_' {
		return 0, false
	}
	p.i++
	return n + 1, true
}

// discriminator skips _ <digit> or __ <number> _ after a local name's
// entity, which the full demangler does not print. Digits that end the
// name without an underscore, which it skips too, are refused.
func (p *fastParser) discriminator() {
	if p.peek() != '_' {
		if p.i < len(p.s) && allDigits(p.s[p.i:]) {
			p.fail()
		}
		return
	}
	p.i++
	trailing := p.peek() == '_'
	if trailing {
		p.i++
	}
	n, digits := 0, 0
	for ; p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9'; p.i++ {
		if digits++; digits > 9 {
			p.fail()
			return
		}
		n = n*10 + int(p.s[p.i]-'0')
	}
	if digits == 0 {
		p.fail()
		return
	}
	if trailing && n >= 10 {
		if p.peek() != '_' {
			p.fail()
			return
		}
		p.i++
	}
}
