package demangle

// The C++ fast path's types: builtin, class, function, template parameter,
// substitution, member pointer and array types (cxxfast.go has the names,
// cxxfast_args.go the template arguments, cxxfast_local.go local names).

// appendType appends t's text to out; a function type as a type of its
// own: "void (int)".
func (p *fastParser) appendType(t fastType) {
	p.putSpan(t.span)
	if t.fn {
		p.putByte(' ')
		p.putSpan(t.params)
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
	lo := p.n
	p.putByte('(')
	for n, a := range p.params[base:] {
		if n > 0 {
			p.put(", ")
		}
		p.putSpan(a)
	}
	p.putByte(')')
	p.params = p.params[:base]
	return fastType{span: ret.span, params: span{int32(lo), int32(p.n)}, fn: true}
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
	if oddIdentifier(id) {
		p.fail() // as the full demangler may print them otherwise
		return ""
	}
	const anon = "_GLOBAL_"
	if len(id) > len(anon)+2 && id[:len(anon)] == anon {
		if c1, c2 := id[len(anon)], id[len(anon)+1]; (c1 == '.' || c1 == '_' || c1 == '$') && c2 == 'N' {
			return "(anonymous namespace)"
		}
	}
	return id
}

// oddIdentifier says whether id holds a byte other than a letter, a
// digit or '_' ('.', '$', UTF-8, punctuation), which the full demangler
// may print otherwise (a space left out after a '('), eight bytes at a
// time.
func oddIdentifier(id string) bool {
	const ones, lows, highs = 0x0101010101010101, 0x7f7f7f7f7f7f7f7f, 0x8080808080808080
	// in has the high bit of each byte of x (all below 0x80) that lies
	// in [lo, hi]: x+0x80-lo reaches the high bit from lo up, x+0x7f-hi
	// from hi+1 up, neither carrying into the next byte.
	in := func(x, lo, hi uint64) uint64 {
		return (x + (0x80-lo)*ones) &^ (x + (0x7f-hi)*ones) & highs
	}
	j := 0
	for ; j+8 <= len(id); j += 8 {
		x := uint64(id[j]) | uint64(id[j+1])<<8 | uint64(id[j+2])<<16 | uint64(id[j+3])<<24 |
			uint64(id[j+4])<<32 | uint64(id[j+5])<<40 | uint64(id[j+6])<<48 | uint64(id[j+7])<<56
		if x&highs != 0 {
			return true
		}
		u := x ^ ('_' * ones) // a zero byte where x has '_'
		notUnderscore := ((u & lows) + lows | u) & highs
		ok := in(x|0x20*ones, 'a', 'z') | in(x, '0', '9') | ^notUnderscore&highs
		if ok != highs {
			return true
		}
	}
	for ; j < len(id); j++ {
		if c := id[j] | 0x20; (c < 'a' || c > 'z') && (id[j] < '0' || id[j] > '9') && id[j] != '_' {
			return true
		}
	}
	return false
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
	if idx >= len(p.subs) || p.subs[idx].opaque {
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
	if p.noParam > 0 {
		return p.lambdaAuto()
	}
	idx, ok := p.paramIndex()
	if !ok {
		p.fail()
		return fastType{}
	}
	if !p.haveFnArgs || idx >= len(p.fnArgs) || p.fnArgs[idx].literal || p.fnArgs[idx].pack {
		p.fail()
		return fastType{}
	}
	if p.firstT < 0 {
		p.firstT = len(p.subs)
	}
	return p.fnArgs[idx]
}

// lambdaAuto parses the rest of T_ or T <number> _ in a lambda's
// signature where no template's parameters are in scope: a generic
// lambda's auto parameter, printed auto:1 for T_, auto:2 for T0_.
func (p *fastParser) lambdaAuto() fastType {
	if p.tmplInScope {
		p.fail() // T_ names the template's argument, or an auto after them
		return fastType{}
	}
	n, ok := p.compactNumber()
	if !ok {
		p.fail()
		return fastType{}
	}
	if p.autoAt < 0 {
		p.autoAt = len(p.subs)
	}
	lo := p.n
	p.put("auto:")
	p.putNumber(n + 1)
	return fastType{span: span{int32(lo), int32(p.n)}}
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
		case 'a':
			b = "auto"
		case 'n':
			b = "decltype(nullptr)"
		default:
			p.fail()
			return fastType{}
		}
		p.i += 2
		return fastType{span: p.emit(nil, b, "")}
	case c == 'P' || c == 'R' || c == 'O' || c == 'K':
		p.i++
		inner := p.typ()
		if (c == 'R' || c == 'O') && inner.closed && inner.ref && inner.ins > 1 && !p.bad {
			// A reference to a reference to a function or an array
			// (through T_): & && is &, && && is &&, & & and && & are &.
			t = inner
			if txt := p.out[inner.lo:inner.ins]; c == 'R' && txt[len(txt)-2] == '&' {
				t.span = p.emit(txt[:len(txt)-1], "", "")
				t.ins = t.hi
				p.putSpan(span{inner.ins, inner.hi})
				t.hi = int32(p.n)
			}
			break
		}
		if c == 'K' && inner.array && !p.bad {
			// A const array is an array of const elements.
			if inner.cv {
				p.fail()
				return fastType{}
			}
			t = inner
			t.span, t.cv = p.extend(inner.span, " const", ""), true
			break
		}
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
		suffix := "*"
		switch c {
		case 'R':
			suffix, t.ref = "&", true
		case 'O':
			suffix, t.ref = "&&", true
		case 'K':
			suffix, t.cv = " const", true
		}
		if inner.fn {
			// A pointer or reference to a function or an array (not
			// const, refused above): void (*)(int), char (&) [16].
			t.span, t.closed = p.emit(p.text(inner.span), " (", suffix), true
			t.ins = int32(p.n)
			p.putByte(')')
			if inner.array {
				p.putByte(' ')
			}
			p.putSpan(inner.params)
			t.hi = int32(p.n)
			break
		}
		// In place where inner is the last text (its own bytes, a
		// candidate, stay as they are).
		t.span = p.extend(inner.span, suffix, "")
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
	case c == 'M':
		t = p.memberPointer()
	case c == 'A':
		t = p.arrayType()
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
		return fastType{span: p.nested(false, true), name: true} // nested added it
	case c == 'Z':
		t.span, t.name = p.localName(false), true
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

// memberPointer parses M <class type> <member type>, a pointer to a data
// member (int a::*) or to a member function (void (a::*)(int) const),
// after which nothing more may be made of it here.
func (p *fastParser) memberPointer() fastType {
	p.i++ // M
	class := p.typ()
	if p.bad || !class.name {
		p.fail()
		return fastType{}
	}
	isConst := false
	if p.peek() == 'K' && p.i+1 < len(p.s) && p.s[p.i+1] == 'F' {
		isConst = true // of a const member function
		p.i++
	}
	m := p.typ()
	if p.bad || m.literal || m.pack || m.closed || m.ref || m.array || isConst && !m.fn {
		p.fail()
		return fastType{}
	}
	if isConst {
		// The function type's candidate is the const one
		// ("void (int) const"), not printed here.
		p.subs[len(p.subs)-1].opaque = true
	}
	lo := p.n
	if m.fn {
		p.putSpan(m.span)
		p.put(" (")
		p.putSpan(class.span)
		p.put("::*")
		ins := int32(p.n)
		p.putByte(')')
		p.putSpan(m.params)
		if isConst {
			p.put(" const")
		}
		return fastType{span: span{int32(lo), int32(p.n)}, closed: true, ins: ins}
	}
	p.putSpan(m.span)
	p.putByte(' ')
	p.putSpan(class.span)
	p.put("::*")
	return fastType{span: span{int32(lo), int32(p.n)}, closed: true}
}

// arrayType parses A [<number>] _ <element type>: char [16], int [3][4],
// char [] (printed as a function type is, its bounds as parameters).
func (p *fastParser) arrayType() fastType {
	p.i++ // A
	j := p.i
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	bound := p.s[j:p.i]
	if p.peek() != '_' || len(bound) > 0 && bound[0] == '0' && len(bound) > 1 {
		p.fail() // an expression, or a bound the full demangler may print otherwise
		return fastType{}
	}
	p.i++ // _
	e := p.typ()
	if p.bad || e.literal || e.pack || e.ref || e.closed || e.fn && !e.array {
		p.fail()
		return fastType{}
	}
	lo := p.n
	p.putByte('[')
	p.put(bound)
	p.putByte(']')
	if e.array {
		p.putSpan(e.params)
	}
	return fastType{span: e.span, params: span{int32(lo), int32(p.n)}, fn: true, array: true, cv: e.cv}
}
