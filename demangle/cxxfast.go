package demangle

import "sync"

// cxxFast demangles the Itanium C++ names of the common shapes without
// building the full demangler's tree: a function's plain or nested name
// (const, ref-qualified, a constructor, destructor or operator, ABI
// tags, templates of types, packs and integer literals), its return
// type when it is a template, and parameters of builtin, class, enum and
// std:: types, template parameters and pack expansions, pointers,
// references, const, function types and pointers to them, and
// substitutions; thunks to such functions. Three quarters of the functions of a C++ binary
// (LLVM's, node's) are such names, and this prints them several times
// faster, with one allocation. ok is false for every other name (local
// names, expressions, arrays, member pointers, covariant thunks,
// conversion operators, a clone suffix in the full form, ...), which the full
// demangler then takes; for those it takes, the result is the full
// demangler's in both forms (TestCxxFastEqualsFull, FuzzCxxFast).
func cxxFast(s string, f Form) (string, bool) {
	if len(s) < 3 || s[0] != '_' || s[1] != 'Z' {
		return "", false
	}
	p := fastPool.Get().(*fastParser)
	defer fastPool.Put(p)
	p.reset(s)
	p.form = f
	thunk := p.thunk()
	name := p.functionName()
	if p.bad {
		return "", false
	}
	if p.i == len(s) {
		if p.isConst || p.hasReturn || p.refQual != "" || thunk != "" {
			return "", false
		}
		return string(p.text(name)), true
	}
	// The simplified form drops a clone suffix (".constprop.0"), as
	// the full demangler with NoClones ignores whatever follows the
	// parameters; the full form leaves the name to the full demangler.
	end := len(s)
	if f == Simplified {
		for j := p.i; j < len(s); j++ {
			if s[j] == '.' {
				end = j
				break
			}
		}
	}
	var ret span
	if p.hasReturn {
		t := p.typ()
		ret = t.span
		if p.bad || p.i >= end || t.fn || t.closed {
			return "", false
		}
	}
	if p.i >= end {
		return "", false
	}
	if s[p.i] == 'v' && p.i+1 == end {
		p.i++ // no parameters
	}
	for p.i < end {
		var t fastType
		switch {
		case s[p.i] == 'v':
			return "", false // void among other parameters
		case s[p.i] == 'D' && p.i+1 < len(s) && s[p.i+1] == 'p':
			t = p.expansion()
		default:
			t = p.typ()
		}
		if p.bad || t.fn {
			return "", false
		}
		if !t.empty {
			p.params = append(p.params, t.span)
		}
	}
	// The whole name, printed after all the parts it is made of.
	start := len(p.out)
	p.out = append(p.out, thunk...)
	if p.hasReturn {
		p.out = append(p.out, p.text(ret)...)
		p.out = append(p.out, ' ')
	}
	p.out = append(p.out, p.text(name)...)
	p.out = append(p.out, '(')
	for n, t := range p.params {
		if n > 0 {
			p.out = append(p.out, ", "...)
		}
		p.out = append(p.out, p.text(t)...)
	}
	p.out = append(p.out, ')')
	if p.isConst {
		p.out = append(p.out, " const"...)
	}
	p.out = append(p.out, p.refQual...)
	return string(p.out[start:]), true
}

// thunk parses Th <offset> _ or Tv <offset> _ <offset> _, which a
// thunk's name starts with, and returns what it prints before the
// function's name ("" for none).
func (p *fastParser) thunk() string {
	if p.i+1 >= len(p.s) || p.s[p.i] != 'T' || p.s[p.i+1] != 'h' && p.s[p.i+1] != 'v' {
		return ""
	}
	prefix, offsets := "non-virtual thunk to ", 1
	if p.s[p.i+1] == 'v' {
		prefix, offsets = "virtual thunk to ", 2
	}
	p.i += 2
	for range offsets {
		if p.peek() == 'n' {
			p.i++
		}
		j := p.i
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
		}
		if p.i == j || p.peek() != '_' {
			p.fail()
			return ""
		}
		p.i++
	}
	return prefix
}

// fastParser is cxxFast's state: the printed text of every name and
// type lies in out, which only grows while a name is parsed.
type fastParser struct {
	s   string
	i   int
	bad bool
	out []byte
	// subs are the substitution candidates, in order.
	subs []fastType
	// params are the parameters' types.
	params []span
	// args is the stack of template arguments being parsed; fnArgs are
	// the function's own (a function template's), which T_ names.
	args, fnArgs []fastType
	// packElems are the elements of the packs parsed.
	packElems  []fastType
	haveFnArgs bool
	// isConst and hasReturn say whether the function is const and
	// whether its name is a template's, with a return type.
	isConst, hasReturn bool
	refQual            string // " &" or " &&" after a nested name's K
	form               Form
}

// fastPool keeps parsers and their buffers from name to name (on the
// stack they would escape: the parse is recursive).
var fastPool = sync.Pool{New: func() any {
	return &fastParser{out: make([]byte, 0, 1024), subs: make([]fastType, 0, 32)}
}}

func (p *fastParser) reset(s string) {
	p.s, p.i, p.bad = s, 2, false
	p.out, p.subs, p.params, p.args, p.fnArgs = p.out[:0], p.subs[:0], p.params[:0], p.args[:0], p.fnArgs[:0]
	p.packElems = p.packElems[:0]
	p.haveFnArgs, p.isConst, p.hasReturn, p.refQual = false, false, false, ""
}

// span is a range of fastParser.out.
type span struct{ lo, hi int32 }

// fastType is a printed name, type or template argument and what kind
// of thing it is.
type fastType struct {
	span
	ref     bool // a reference, which no pointer or reference may take
	name    bool // a name, which may be a nested name's prefix
	literal bool // a template argument's value, not a type
	cv      bool // const, which K may not be applied to again
	// A template argument pack (J...E) prints its elements; an empty
	// one prints nothing.
	pack, empty bool
	// A function type (F...E) is its return type (span) and its
	// parameters (params, "(int, char)"); a pointer or reference to one
	// is closed: nothing more may be made of it here.
	fn, closed bool
	params     span
	// A pack's elements are packElems[elemLo:elemHi].
	elemLo, elemHi int32
}

func (p *fastParser) text(sp span) []byte { return p.out[sp.lo:sp.hi] }

func (p *fastParser) fail() { p.bad = true }

func (p *fastParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

// extend returns the span of cur's text followed by b and c: cur itself
// extended in place when it is the last thing in out (its bytes, which a
// substitution candidate may span, stay as they are), else a copy.
func (p *fastParser) extend(cur span, b, c string) span {
	if int(cur.hi) != len(p.out) {
		return p.emit(p.text(cur), b, c)
	}
	p.out = append(p.out, b...)
	p.out = append(p.out, c...)
	cur.hi = int32(len(p.out))
	return cur
}

// emit appends the concatenation of a, b and c to out and returns its span.
func (p *fastParser) emit(a []byte, b, c string) span {
	lo := len(p.out)
	p.out = append(p.out, a...)
	p.out = append(p.out, b...)
	p.out = append(p.out, c...)
	return span{int32(lo), int32(len(p.out))}
}

// functionName parses the <name> of an <encoding>: an unscoped name
// (std:: or not, a template or not) or a nested name.
func (p *fastParser) functionName() span {
	var name span
	switch c := p.peek(); {
	case c == 'N':
		return p.nested(true)
	case c == 'S' && p.i+1 < len(p.s) && p.s[p.i+1] == 't':
		p.i += 2
		name = p.emit([]byte("std::"), p.unqualified(), "")
	case c >= '1' && c <= '9' || c == 'L':
		name = p.emit(nil, p.unqualified(), "")
	case c >= 'a' && c <= 'z':
		name = p.emit(nil, p.operator(), "")
	default:
		p.fail()
		return span{}
	}
	name, _ = p.abiTags(name)
	if p.peek() == 'I' {
		p.subs = append(p.subs, fastType{span: name, name: true})
		var base int
		name, base = p.templateArgs(name)
		p.fnArgs = append(p.fnArgs[:0], p.args[base:]...)
		p.args = p.args[:base]
		p.haveFnArgs, p.hasReturn = true, true
	}
	return name
}

// unqualified parses a <source-name>, or L <source-name> (internal
// linkage, printed as the name alone).
func (p *fastParser) unqualified() string {
	if p.peek() != 'L' {
		return p.sourceName()
	}
	p.i++
	id := p.sourceName()
	// A discriminator may follow, which the full demangler drops.
	if c := p.peek(); c == '_' || c >= '0' && c <= '9' && allDigits(p.s[p.i:]) {
		p.fail()
	}
	return id
}

// abiTags appends the ABI tags (B <source-name>, "[abi:cxx11]") that
// follow to sp, the last span emitted, and says whether there were any.
func (p *fastParser) abiTags(sp span) (span, bool) {
	tagged := false
	for !p.bad && p.peek() == 'B' {
		p.i++
		tag := p.sourceName()
		if int(sp.hi) != len(p.out) {
			sp = p.emit(p.text(sp), "", "")
		}
		p.out = append(p.out, "[abi:"...)
		p.out = append(p.out, tag...)
		p.out = append(p.out, ']')
		sp.hi = int32(len(p.out))
		tagged = true
	}
	return sp, tagged
}

// operator parses an operator's name (two letters) and returns how it
// prints ("operator<<", "operator new").
func (p *fastParser) operator() string {
	if p.i+1 < len(p.s) {
		code := p.s[p.i : p.i+2]
		for _, o := range fastOperators {
			if o[0] == code {
				p.i += 2
				return o[1]
			}
		}
	}
	p.fail()
	return ""
}

// fastOperators are the operators the fast path names, by their code.
var fastOperators = [...][2]string{
	{"aN", "operator&="}, {"aS", "operator="}, {"aa", "operator&&"}, {"ad", "operator&"},
	{"an", "operator&"}, {"cl", "operator()"}, {"cm", "operator,"}, {"co", "operator~"},
	{"dV", "operator/="}, {"da", "operator delete[]"}, {"de", "operator*"}, {"dl", "operator delete"},
	{"dv", "operator/"}, {"eO", "operator^="}, {"eo", "operator^"}, {"eq", "operator=="},
	{"ge", "operator>="}, {"gt", "operator>"}, {"ix", "operator[]"}, {"lS", "operator<<="},
	{"le", "operator<="}, {"ls", "operator<<"}, {"lt", "operator<"}, {"mI", "operator-="},
	{"mL", "operator*="}, {"mi", "operator-"}, {"ml", "operator*"}, {"mm", "operator--"},
	{"na", "operator new[]"}, {"ne", "operator!="}, {"ng", "operator-"}, {"nt", "operator!"},
	{"nw", "operator new"}, {"oR", "operator|="}, {"oo", "operator||"}, {"or", "operator|"},
	{"pL", "operator+="}, {"pl", "operator+"}, {"pm", "operator->*"}, {"pp", "operator++"},
	{"ps", "operator+"}, {"pt", "operator->"}, {"qu", "operator?"}, {"rM", "operator%="},
	{"rS", "operator>>="}, {"rm", "operator%"}, {"rs", "operator>>"}, {"ss", "operator<=>"},
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// nested parses N [K] <prefix> <unqualified-name> E, of a function's name
// when function is set (which may end with a constructor or destructor,
// and whose last template arguments are the function's). Each prefix is
// a substitution candidate, and so is the whole name of a type.
func (p *fastParser) nested(function bool) span {
	p.i++ // N
	if p.peek() == 'K' {
		if !function {
			p.fail()
			return span{}
		}
		p.isConst = true
		p.i++
	}
	if c := p.peek(); function && (c == 'R' || c == 'O') {
		p.refQual = " &"
		if c == 'O' {
			p.refQual = " &&"
		}
		p.i++
	}
	var cur span
	have := false
	last := ""     // the last identifier, which a constructor repeats
	named := false // the name so far ends with an identifier (or its template)
	ctor := false  // the name so far ends with a constructor or destructor
	std := false   // the name so far is std alone
	for !p.bad {
		c := p.peek()
		if c == 'E' {
			p.i++
			if !named {
				p.fail() // ends with a substitution or std
			}
			if !function {
				p.subs = append(p.subs, fastType{span: cur, name: true})
			}
			return cur
		}
		if ctor && c != 'I' {
			p.fail()
			break
		}
		candidate := true
		switch {
		case c >= '1' && c <= '9' || c == 'L':
			id := p.unqualified()
			if have {
				cur = p.extend(cur, "::", id)
			} else {
				cur = p.emit(nil, id, "")
			}
			var tagged bool
			if cur, tagged = p.abiTags(cur); tagged {
				id = "" // no constructor of it here
			}
			last, named, std = id, true, false
		case c >= 'a' && c <= 'z' && function && have:
			op := p.operator()
			cur = p.extend(cur, "::", op)
			cur, _ = p.abiTags(cur)
			last, named, std = "", true, false
		case c == 'S' && !have && p.i+1 < len(p.s) && p.s[p.i+1] == 't':
			p.i += 2
			cur, std, candidate = p.emit(nil, "std", ""), true, false
		case c == 'S' && !have && p.i+1 < len(p.s) && (p.s[p.i+1] == 'a' || p.s[p.i+1] == 'b'):
			cur, last = p.emit(nil, "std::allocator", ""), "allocator"
			if p.s[p.i+1] == 'b' {
				cur, last = p.emit(nil, "std::basic_string", ""), "basic_string"
			}
			p.i += 2
			named, candidate = true, false
		case c == 'S' && !have:
			t := p.substitution()
			if !t.name {
				p.fail()
			}
			cur, candidate = t.span, false
		case c == 'I' && have && !std:
			var base int
			cur, base = p.templateArgs(cur)
			if function && p.peek() == 'E' {
				// The function's own template arguments, which
				// T_ names; a template (not a constructor's)
				// has a return type.
				p.fnArgs = append(p.fnArgs[:0], p.args[base:]...)
				p.haveFnArgs = true
				p.hasReturn = !ctor
			}
			p.args = p.args[:base]
			named = true
		case (c == 'C' || c == 'D') && function && last != "" && p.i+1 < len(p.s):
			// A constructor or destructor: last, as the name ends.
			k := p.s[p.i+1]
			p.i += 2
			switch {
			case c == 'C' && (k == '1' || k == '2' || k == '3'):
				cur = p.extend(cur, "::", last)
			case c == 'D' && (k == '0' || k == '1' || k == '2'):
				cur = p.extend(cur, "::~", last)
			default:
				p.fail()
			}
			last, ctor = "", true
		default:
			p.fail()
		}
		have = true
		if candidate && p.i < len(p.s) && p.s[p.i] != 'E' {
			p.subs = append(p.subs, fastType{span: cur, name: true})
		}
	}
	return span{}
}

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
		case 0, 'X':
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
	lo := len(p.out)
	p.out = append(p.out, p.text(cur)...)
	if len(p.out) > lo && p.out[len(p.out)-1] == '<' {
		p.out = append(p.out, ' ') // as after operator<
	}
	p.out = append(p.out, '<')
	args := p.args[base:]
	first := true
	for _, a := range args {
		if a.empty {
			continue // an empty pack prints nothing
		}
		if !first {
			p.out = append(p.out, ", "...)
		}
		p.appendType(a)
		first = false
	}
	// No space before the '>' after a trailing empty pack (as c++filt).
	if p.out[len(p.out)-1] == '>' && !(len(args) > 1 && args[len(args)-1].empty) {
		p.out = append(p.out, ' ')
	}
	p.out = append(p.out, '>')
	return span{int32(lo), int32(len(p.out))}, base
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
	if !p.haveFnArgs || idx >= len(p.fnArgs) || !p.fnArgs[idx].pack || p.peek() == 'I' {
		p.fail()
		return fastType{}
	}
	// Candidates: the pack, each modified type, the expansion; none
	// of which may be named again here.
	for range mods2 - mods + 2 {
		p.subs = append(p.subs, fastType{pack: true, literal: true, closed: true})
	}
	pk := p.fnArgs[idx]
	elems := p.packElems[pk.elemLo:pk.elemHi]
	lo := len(p.out)
	for n, e := range elems {
		if e.fn || e.closed || e.literal || e.pack {
			p.fail()
			return fastType{}
		}
		if n > 0 {
			p.out = append(p.out, ", "...)
		}
		p.out = append(p.out, p.text(e.span)...)
		ref, rref, cv := e.ref, e.ref && len(p.out) >= 2 && p.out[len(p.out)-1] == '&' && p.out[len(p.out)-2] == '&', e.cv
		for j := mods2 - 1; j >= mods; j-- {
			switch c := p.s[j]; {
			case c == 'K':
				if ref || cv {
					p.fail()
					return fastType{}
				}
				p.out, cv = append(p.out, " const"...), true
			case c == 'P':
				if ref {
					p.fail()
					return fastType{}
				}
				p.out, cv = append(p.out, '*'), false
			case c == 'R' && rref:
				p.out, rref = p.out[:len(p.out)-1], false // && & is &
			case c == 'R' && !ref:
				p.out, ref = append(p.out, '&'), true
			case c == 'O' && !ref:
				p.out, ref, rref = append(p.out, "&&"...), true, true
			}
		}
	}
	return fastType{span: span{int32(lo), int32(len(p.out))}, pack: true, empty: len(elems) == 0}
}

// appendType appends t's text to out; a function type as a type of its
// own: "void (int)".
func (p *fastParser) appendType(t fastType) {
	p.out = append(p.out, p.text(t.span)...)
	if t.fn {
		p.out = append(p.out, ' ')
		p.out = append(p.out, p.text(t.params)...)
	}
}

// function parses F <return type> <parameters> E, a function type.
func (p *fastParser) function() fastType {
	p.i++ // F
	ret := p.typ()
	if p.bad || ret.fn || ret.closed || ret.literal || ret.pack {
		p.fail()
		return fastType{}
	}
	base := len(p.params)
	if p.peek() == 'v' && p.i+1 < len(p.s) && p.s[p.i+1] == 'E' {
		p.i++ // no parameters
	} else if p.peek() == 'E' {
		p.fail() // a function type names at least one parameter type (v for none)
		return fastType{}
	}
	for !p.bad && p.peek() != 'E' {
		c := p.peek()
		if c == 0 || c == 'v' || (c == 'R' || c == 'O') && p.i+1 < len(p.s) && p.s[p.i+1] == 'E' {
			p.fail() // void among parameters, or a ref-qualifier
			break
		}
		a := p.typ()
		if a.fn {
			p.fail()
		}
		p.params = append(p.params, a.span)
	}
	if p.bad {
		return fastType{}
	}
	p.i++ // E
	lo := len(p.out)
	p.out = append(p.out, '(')
	for n, a := range p.params[base:] {
		if n > 0 {
			p.out = append(p.out, ", "...)
		}
		p.out = append(p.out, p.text(a)...)
	}
	p.out = append(p.out, ')')
	p.params = p.params[:base]
	return fastType{span: ret.span, params: span{int32(lo), int32(len(p.out))}, fn: true}
}

// pack parses J <template-arg>* E, an argument pack of types and
// literals, printed as its elements.
func (p *fastParser) pack() fastType {
	p.i++ // J
	base := len(p.args)
	for !p.bad && p.peek() != 'E' {
		var a fastType
		switch p.peek() {
		case 'L':
			a = p.literal()
		case 0, 'X', 'J':
			p.fail()
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
	lo := len(p.out)
	for n, a := range elems {
		if n > 0 {
			p.out = append(p.out, ", "...)
		}
		p.appendType(a)
	}
	t := fastType{span: span{int32(lo), int32(len(p.out))}, pack: true, empty: len(elems) == 0}
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
	case 'a', 'c', 'h', 's', 't', 'w':
		typed = true
	default:
		if c == 'N' || c >= '1' && c <= '9' || c == 'S' && p.i+1 < len(p.s) && p.s[p.i+1] != 't' {
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
	lo := len(p.out)
	switch {
	case c == 'b':
		switch {
		case neg || len(val) != 1 || val[0] > '1':
			p.fail()
		case val == "0":
			p.out = append(p.out, "false"...)
		default:
			p.out = append(p.out, "true"...)
		}
	case typed:
		p.out = append(p.out, '(')
		p.out = append(p.out, p.text(t.span)...)
		p.out = append(p.out, ')')
		p.out = append(p.out, sign...)
		p.out = append(p.out, val...)
	default:
		p.out = append(p.out, sign...)
		p.out = append(p.out, val...)
		p.out = append(p.out, suffix...)
	}
	return fastType{span: span{int32(lo), int32(len(p.out))}, literal: true}
}

// sourceName parses <length> <identifier>.
func (p *fastParser) sourceName() string {
	n := 0
	if c := p.peek(); c < '1' || c > '9' {
		p.fail()
		return ""
	}
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		n = n*10 + int(p.s[p.i]-'0')
		p.i++
		if n > len(p.s) {
			p.fail()
			return ""
		}
	}
	if n > len(p.s)-p.i {
		p.fail()
		return ""
	}
	id := p.s[p.i : p.i+n]
	p.i += n
	for j := 0; j < len(id); j++ {
		if c := id[j]; c == '.' || c == '$' || c >= 0x80 {
			p.fail() // as the full demangler may print them otherwise
			return ""
		}
	}
	const anon = "_GLOBAL_"
	if len(id) > len(anon)+2 && id[:len(anon)] == anon {
		if c1, c2 := id[len(anon)], id[len(anon)+1]; (c1 == '.' || c1 == '_' || c1 == '$') && c2 == 'N' {
			return "(anonymous namespace)"
		}
	}
	return id
}

// substitution parses S_ or S <seq-id> _ and returns what it stands for.
func (p *fastParser) substitution() fastType {
	p.i++ // S
	idx := 0
	if p.peek() == '_' {
		p.i++
	} else {
		n, digits := 0, 0
	scan:
		for ; p.i < len(p.s); p.i++ {
			c := p.s[p.i]
			switch {
			case c >= '0' && c <= '9':
				n = n*36 + int(c-'0')
			case c >= 'A' && c <= 'Z':
				n = n*36 + int(c-'A') + 10
			default:
				break scan
			}
			if digits++; n > len(p.subs) {
				p.fail()
				return fastType{}
			}
		}
		if digits == 0 || p.peek() != '_' {
			p.fail() // Ss, Si, ...: abbreviations
			return fastType{}
		}
		p.i++
		idx = n + 1
	}
	if idx >= len(p.subs) {
		p.fail()
		return fastType{}
	}
	return p.subs[idx]
}

// paramIndex parses the index of a template parameter after its T: _ is
// 0, <number> _ is number+1. An index past the function's arguments, or no
// closing _, is refused before more digits are read.
func (p *fastParser) paramIndex() (int, bool) {
	if p.peek() == '_' {
		p.i++
		return 0, true
	}
	n, digits := 0, 0
	for ; p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9'; p.i++ {
		n = n*10 + int(p.s[p.i]-'0')
		if digits++; n > len(p.fnArgs) {
			return 0, false
		}
	}
	if digits == 0 || p.peek() != '_' {
		return 0, false
	}
	p.i++
	return n + 1, true
}

// templateParam parses T_ or T <number> _, a function template's
// argument.
func (p *fastParser) templateParam() fastType {
	p.i++ // T
	idx, ok := p.paramIndex()
	if !ok {
		p.fail()
		return fastType{}
	}
	if !p.haveFnArgs || idx >= len(p.fnArgs) || p.fnArgs[idx].literal || p.fnArgs[idx].pack {
		p.fail()
		return fastType{}
	}
	return p.fnArgs[idx]
}

// fastBuiltin are the builtin types' names by their letter (void, which
// only a pointer may point to here, included).
var fastBuiltin = [256]string{
	'a': "signed char", 'b': "bool", 'c': "char", 'd': "double",
	'e': "long double", 'f': "float", 'g': "__float128", 'h': "unsigned char",
	'i': "int", 'j': "unsigned int", 'l': "long", 'm': "unsigned long",
	'n': "__int128", 'o': "unsigned __int128", 's': "short", 't': "unsigned short",
	'v': "void", 'w': "wchar_t", 'x': "long long", 'y': "unsigned long long",
	'z': "...",
}

// typ parses a <type>: builtin, class (plain, std:: or nested, a
// template's or not), template parameter, pointer, reference, const or a
// substitution.
func (p *fastParser) typ() fastType {
	c := p.peek()
	if b := fastBuiltin[c]; b != "" {
		p.i++
		return fastType{span: p.emit(nil, b, "")}
	}
	var t fastType
	switch {
	case c == 'D' && p.i+1 < len(p.s):
		var b string
		switch p.s[p.i+1] {
		case 's':
			b = "char16_t"
		case 'i':
			b = "char32_t"
		case 'u':
			b = "char8_t"
		default:
			p.fail()
			return fastType{}
		}
		p.i += 2
		return fastType{span: p.emit(nil, b, "")}
	case c == 'P' || c == 'R' || c == 'O' || c == 'K':
		p.i++
		inner := p.typ()
		if p.bad || inner.literal || inner.pack || inner.closed || c == 'K' && (inner.cv || inner.fn) {
			p.fail()
			return fastType{}
		}
		if inner.ref {
			// A reference to a reference (through T_): & && is &,
			// && && is &&, & & and && & are &.
			if c != 'R' && c != 'O' {
				p.fail()
				return fastType{}
			}
			t.span, t.ref = inner.span, true
			if txt := p.text(inner.span); c == 'R' && len(txt) >= 2 && txt[len(txt)-2] == '&' {
				t.span = p.emit(txt[:len(txt)-1], "", "")
			}
			break
		}
		if inner.fn {
			// A pointer or reference to a function: void (*)(int).
			ptr := " (*)"
			switch c {
			case 'R':
				ptr, t.ref = " (&)", true
			case 'O':
				ptr, t.ref = " (&&)", true
			}
			t.span, t.closed = p.emit(p.text(inner.span), ptr, ""), true
			p.out = append(p.out, p.text(inner.params)...)
			t.hi = int32(len(p.out))
			break
		}
		suffix := "*"
		switch c {
		case 'R':
			suffix, t.ref = "&", true
		case 'O':
			suffix, t.ref = "&&", true
		case 'K':
			suffix, t.cv = " const", true
		}
		t.span = p.emit(p.text(inner.span), suffix, "")
	case c == 'S' && p.i+1 < len(p.s) && p.s[p.i+1] == 't':
		p.i += 2
		t.span, t.name = p.emit([]byte("std::"), p.unqualified(), ""), true
		t = p.maybeTemplate(t, true)
	case c == 'S' && p.i+1 < len(p.s) && (p.s[p.i+1] == 's' || p.s[p.i+1] == 'i' || p.s[p.i+1] == 'o' || p.s[p.i+1] == 'd'):
		// std::string and the streams: not candidates.
		n := fastStdTypes[p.s[p.i+1]][p.form]
		p.i += 2
		if p.peek() == 'I' {
			p.fail()
			return fastType{}
		}
		return fastType{span: p.emit(nil, n, ""), name: true}
	case c == 'F':
		t = p.function()
	case c == 'S' && p.i+1 < len(p.s) && (p.s[p.i+1] == 'a' || p.s[p.i+1] == 'b'):
		n := "std::allocator"
		if p.s[p.i+1] == 'b' {
			n = "std::basic_string"
		}
		p.i += 2
		t.span, t.name = p.emit(nil, n, ""), true
		if p.peek() != 'I' {
			return t // not a candidate
		}
		t = p.maybeTemplate(t, false)
	case c == 'S':
		t = p.substitution()
		if p.peek() != 'I' {
			return t // not a new candidate
		}
		if !t.name {
			p.fail()
			return fastType{}
		}
		t = p.maybeTemplate(t, false)
	case c == 'T':
		t = p.templateParam()
		if p.peek() == 'I' {
			p.fail()
			return fastType{}
		}
	case c == 'N':
		return fastType{span: p.nested(false), name: true} // nested added it
	case c >= '1' && c <= '9':
		t.span, t.name = p.emit(nil, p.sourceName(), ""), true
		t = p.maybeTemplate(t, true)
	default:
		p.fail()
		return fastType{}
	}
	if p.bad {
		return fastType{}
	}
	p.subs = append(p.subs, t)
	return t
}

// fastStdTypes are the abbreviations Ss, Si, So and Sd as each form
// prints them.
var fastStdTypes = [256][2]string{
	's': {Simplified: "std::string", Full: "std::basic_string<char, std::char_traits<char>, std::allocator<char> >"},
	'i': {Simplified: "std::istream", Full: "std::basic_istream<char, std::char_traits<char> >"},
	'o': {Simplified: "std::ostream", Full: "std::basic_ostream<char, std::char_traits<char> >"},
	'd': {Simplified: "std::iostream", Full: "std::basic_iostream<char, std::char_traits<char> >"},
}

// maybeTemplate returns the name t, or the template t<args> when
// template arguments follow, the name then a candidate when nameSubst.
func (p *fastParser) maybeTemplate(t fastType, nameSubst bool) fastType {
	if p.bad || p.peek() != 'I' {
		return t
	}
	if nameSubst {
		p.subs = append(p.subs, t)
	}
	var base int
	t.span, base = p.templateArgs(t.span)
	p.args = p.args[:base]
	return t
}
