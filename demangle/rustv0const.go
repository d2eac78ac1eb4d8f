package demangle

// Rust v0 patterns and constants (integers, chars, strings, structs).

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

func (p *v0Printer) pattern() {
	tag, ok := p.next()
	if !ok {
		return
	}
	switch tag {
	case 'R':
		p.constant(false)
		p.print("..=")
		p.constant(false)
	case 'O':
		if !p.push() {
			return
		}
		p.pattern()
		for !p.eat('E') {
			if p.err != "" {
				p.fail(v0Invalid)
				return
			}
			p.print(" | ")
			p.pattern()
		}
		p.pop()
	case 'N':
		p.print("!null")
	default:
		p.fail(v0Invalid)
	}
}

// hex parses hex nibbles up to "_".
func (p *v0Printer) hex() (string, bool) {
	if !p.ok() {
		return "", false
	}
	start := p.pos
	for {
		if p.pos >= len(p.sym) {
			p.fail(v0Invalid)
			return "", false
		}
		c := p.sym[p.pos]
		p.pos++
		switch {
		case c >= '0' && c <= '9' || c >= 'a' && c <= 'f':
		case c == '_':
			return p.sym[start : p.pos-1], true
		default:
			p.fail(v0Invalid)
			return "", false
		}
	}
}

// hexUint parses hex nibbles as a number; ok is false beyond 64 bits.
func hexUint(h string) (uint64, bool) {
	h = strings.TrimLeft(h, "0")
	if len(h) > 16 {
		return 0, false
	}
	if h == "" {
		return 0, true
	}
	v, err := strconv.ParseUint(h, 16, 64)
	return v, err == nil
}

// hexString decodes hex nibbles as UTF-8, one character at a time.
func hexString(h string) ([]rune, bool) {
	if len(h)%2 != 0 {
		return nil, false
	}
	b := make([]byte, len(h)/2)
	for i := range b {
		v, _ := strconv.ParseUint(h[2*i:2*i+2], 16, 8)
		b[i] = byte(v)
	}
	var out []rune
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n <= 1 {
			return nil, false
		}
		out = append(out, r)
		b = b[n:]
	}
	return out, true
}

// quoted prints chars between quotes, escaped as Rust's escape_debug
// does, the other quote kind left as it is.
func (p *v0Printer) quoted(q rune, chars []rune) {
	var b strings.Builder
	b.WriteRune(q)
	for _, c := range chars {
		switch {
		case q == '\'' && c == '"' || q == '"' && c == '\'':
			b.WriteRune(c)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\\' || c == '\'' || c == '"':
			b.WriteByte('\\')
			b.WriteRune(c)
		case c == 0:
			b.WriteString(`\0`)
		case c != ' ' && (!unicode.IsPrint(c) || unicode.In(c, unicode.Mn, unicode.Me)):
			b.WriteString(`\u{` + strconv.FormatInt(int64(c), 16) + `}`)
		default:
			b.WriteRune(c)
		}
	}
	b.WriteRune(q)
	p.print(b.String())
}

func (p *v0Printer) constant(inValue bool) {
	tag, ok := p.next()
	if !ok {
		return
	}
	if !p.push() {
		return
	}
	braced := false
	open := func() {
		if !inValue {
			braced = true
			p.print("{")
		}
	}
	switch tag {
	case 'p':
		p.print("_")
	case 'h', 't', 'm', 'y', 'o', 'j':
		if !p.constUint(tag) {
			return
		}
	case 'a', 's', 'l', 'x', 'n', 'i':
		if p.eat('n') {
			p.print("-")
		}
		if !p.constUint(tag) {
			return
		}
	case 'b':
		h, ok := p.hex()
		if !ok {
			return
		}
		switch v, ok := hexUint(h); {
		case ok && v == 0:
			p.print("false")
		case ok && v == 1:
			p.print("true")
		default:
			p.fail(v0Invalid)
			return
		}
	case 'c':
		h, ok := p.hex()
		if !ok {
			return
		}
		v, ok := hexUint(h)
		if !ok || v > unicode.MaxRune || !utf8.ValidRune(rune(v)) {
			p.fail(v0Invalid)
			return
		}
		p.quoted('\'', []rune{rune(v)})
	case 'e':
		open()
		p.print("*")
		if !p.constStr() {
			return
		}
	case 'R', 'Q':
		if tag == 'R' && p.eat('e') {
			if !p.constStr() {
				return
			}
		} else {
			open()
			p.print("&")
			if tag == 'Q' {
				p.print("mut ")
			}
			p.constant(true)
		}
	case 'A':
		open()
		p.print("[")
		p.list(func() { p.constant(true) }, ", ")
		p.print("]")
	case 'T':
		open()
		p.print("(")
		if p.list(func() { p.constant(true) }, ", ") == 1 {
			p.print(",")
		}
		p.print(")")
	case 'V':
		open()
		p.path(true)
		kind, ok := p.next()
		if !ok {
			return
		}
		switch kind {
		case 'U':
		case 'T':
			p.print("(")
			p.list(func() { p.constant(true) }, ", ")
			p.print(")")
		case 'S':
			p.print(" { ")
			p.list(func() {
				if _, ok := p.optBase62('s'); !ok {
					return
				}
				name, ok := p.ident()
				if !ok {
					return
				}
				p.print(name.String() + ": ")
				p.constant(true)
			}, ", ")
			p.print(" }")
		default:
			p.fail(v0Invalid)
			return
		}
	case 'B':
		p.backref(func() { p.constant(inValue) })
	default:
		p.fail(v0Invalid)
		return
	}
	if braced {
		p.print("}")
	}
	p.pop()
}

func (p *v0Printer) constUint(tag byte) bool {
	h, ok := p.hex()
	if !ok {
		return false
	}
	if v, ok := hexUint(h); ok {
		p.print(strconv.FormatUint(v, 10))
	} else {
		p.print("0x" + h)
	}
	if p.full {
		p.print(v0BasicTypes[tag])
	}
	return true
}

func (p *v0Printer) constStr() bool {
	h, ok := p.hex()
	if !ok {
		return false
	}
	chars, ok := hexString(h)
	if !ok {
		p.fail(v0Invalid)
		return false
	}
	p.quoted('"', chars)
	return true
}
