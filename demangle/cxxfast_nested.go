package demangle

// nested parses N [K] <prefix> <unqualified-name> E, of a function's name
// when function is set (which may end with a constructor or destructor,
// and whose last template arguments are the function's). Each prefix is
// a substitution candidate, and so is the whole name when whole is set
// (a type's, not a local name's entity).
func (p *fastParser) nested(function, whole bool) span {
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
			if whole {
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
		case c == 'U':
			// A lambda or an unnamed type, which no template
			// arguments follow here.
			u := p.closure()
			if have {
				cur = p.join(cur, "::", u)
			} else {
				cur = u
			}
			if p.peek() == 'I' {
				p.fail()
			}
			last, named, std = "", true, false
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
