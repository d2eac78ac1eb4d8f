package demangle

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// v0Ident is an identifier: ASCII, or ASCII and Punycode parts.
type v0Ident struct{ ascii, puny string }

func (id v0Ident) empty() bool { return id.ascii == "" && id.puny == "" }

func (id v0Ident) String() string {
	if id.puny == "" {
		return id.ascii
	}
	if r, ok := punycode(id.ascii, id.puny); ok {
		return string(r)
	}
	s := "punycode{"
	if id.ascii != "" {
		s += id.ascii + "-"
	}
	return s + id.puny + "}"
}

func (p *v0Printer) ident() (v0Ident, bool) {
	if !p.ok() {
		return v0Ident{}, false
	}
	puny := p.eat('u')
	c := p.peek()
	if c < '0' || c > '9' {
		p.fail(v0Invalid)
		return v0Ident{}, false
	}
	n := 0
	p.pos++
	n = int(c - '0')
	if n != 0 {
		for c := p.peek(); c >= '0' && c <= '9'; c = p.peek() {
			if n > (len(p.sym)+9)/10 {
				p.fail(v0Invalid)
				return v0Ident{}, false
			}
			n = n*10 + int(c-'0')
			p.pos++
		}
	}
	p.eat('_')
	if n > len(p.sym)-p.pos {
		p.fail(v0Invalid)
		return v0Ident{}, false
	}
	s := p.sym[p.pos : p.pos+n]
	p.pos += n
	if !puny {
		return v0Ident{ascii: s}, true
	}
	id := v0Ident{puny: s}
	if i := strings.LastIndexByte(s, '_'); i >= 0 {
		id = v0Ident{ascii: s[:i], puny: s[i+1:]}
	}
	if id.puny == "" {
		p.fail(v0Invalid)
		return v0Ident{}, false
	}
	return id, true
}

// punycode decodes RFC 3492 Punycode (Rust's variant: "_" separates the
// ASCII part), giving up beyond 128 characters as rustc-demangle does.
func punycode(ascii, puny string) ([]rune, bool) {
	const (
		base, tmin, tmax, skew = 36, 1, 26, 38
		maxLen                 = 128
	)
	out := []rune(ascii)
	if len(out) > maxLen {
		return nil, false
	}
	damp, bias, i, n := 700, 72, 0, 0x80
	for len(puny) > 0 {
		delta, w := 0, 1
		for k := base; ; k += base {
			t := min(max(k-bias, tmin), tmax)
			if len(puny) == 0 {
				return nil, false
			}
			c := puny[0]
			puny = puny[1:]
			var d int
			switch {
			case c >= 'a' && c <= 'z':
				d = int(c - 'a')
			case c >= '0' && c <= '9':
				d = 26 + int(c-'0')
			default:
				return nil, false
			}
			if d > (1<<31)/w {
				return nil, false
			}
			delta += d * w
			if delta > 1<<31 {
				return nil, false
			}
			if d < t {
				break
			}
			w *= base - t
		}
		l := len(out) + 1
		i += delta
		n += i / l
		i %= l
		if n > unicode.MaxRune || !utf8.ValidRune(rune(n)) || len(out) >= maxLen {
			return nil, false
		}
		out = append(out, 0)
		copy(out[i+1:], out[i:])
		out[i] = rune(n)
		i++
		delta /= damp
		damp = 2
		delta += delta / l
		k := 0
		for delta > ((base-tmin)*tmax)/2 {
			delta /= base - tmin
			k += base
		}
		bias = k + ((base-tmin+1)*delta)/(delta+skew)
	}
	return out, true
}
