package demangle

import (
	"strconv"
	"strings"
	"sync"
)

// Limits of the v0 demangler, rustc-demangle's: nesting (paths, types,
// consts and backrefs) and output size, so that hostile names end in a
// marker instead of a deep stack or a huge string.
const (
	v0MaxDepth = 500
	v0MaxSize  = 1_000_000
)

const (
	v0Invalid   = "{invalid syntax}"
	v0TooDeep   = "{recursion limit reached}"
	v0SizeLimit = "{size limit reached}"
)

// v0Inner returns what follows a v0 Rust name's prefix ("_R", "R" or
// "__R"), which starts with a capital letter and is ASCII, or ok false.
func v0Inner(s string) (inner string, ok bool) {
	switch {
	case len(s) > 2 && strings.HasPrefix(s, "_R"):
		inner = s[2:]
	case len(s) > 1 && s[0] == 'R':
		inner = s[1:]
	case len(s) > 3 && strings.HasPrefix(s, "__R"):
		inner = s[3:]
	default:
		return "", false
	}
	if inner[0] < 'A' || inner[0] > 'Z' {
		return "", false
	}
	for i := 0; i < len(inner); i++ {
		if inner[i] >= 0x80 {
			return "", false
		}
	}
	return inner, true
}

// rustV0 demangles a v0 Rust name ("_R…", RFC 2603), printed as
// rustc-demangle prints it: with crate disambiguators and const types when
// full, without them otherwise. A suffix after the name is kept when it
// starts with "." and is plain ASCII (".llvm." is dropped before).
func rustV0(s string, full bool) (string, bool) {
	inner, ok := v0Inner(s)
	if !ok {
		return "", false
	}
	// Printed into a reused buffer, then allocated once at its size
	// (a buffer on the stack would escape through p's methods).
	bp := v0Bufs.Get().(*[]byte)
	defer func() { v0PutBuf(bp) }()
	p := &v0Printer{sym: inner, full: full, out: (*bp)[:0]}
	p.run()
	*bp = p.out
	// The name must parse as the path, then an optional instantiating
	// crate, then a suffix, as a parse that prints nothing and does not
	// follow backrefs reads it (the validating pass). The printing pass
	// checks all that pass checks of the path and more (lifetimes), and
	// what it reads inside a backref does not end it: a path it read
	// whole, without reaching the size limit, the validating pass reads
	// whole too, and only the rest is left to read. Otherwise the
	// validating pass reads the whole name, as it did before every
	// printing pass (a third of a name's time).
	v := &v0Printer{sym: inner, skip: true}
	if p.err == "" && !p.sizeHit {
		v.pos = p.pos
	} else {
		v.path(false)
	}
	if v.err == "" && v.pos < len(inner) && inner[v.pos] >= 'A' && inner[v.pos] <= 'Z' {
		v.path(false)
	}
	if v.err != "" {
		return "", false
	}
	suffix := inner[v.pos:]
	if suffix != "" && (suffix[0] != '.' || !symbolLike(suffix)) {
		return "", false
	}
	return string(append(p.out, suffix...)), true
}

// v0PutBuf returns a buffer to v0Bufs, unless it grew past 64 KiB.
func v0PutBuf(bp *[]byte) {
	if cap(*bp) <= 64<<10 {
		v0Bufs.Put(bp)
	}
}

// v0Bufs holds the buffers rustV0 prints into.
var v0Bufs = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// v0Printer parses and prints at once, as rustc-demangle does: after a
// parse error it prints the error's marker, then "?" for what follows.
type v0Printer struct {
	sym   string
	pos   int
	depth int
	err   string // the first error, "" while the parse is good
	skip  bool   // parse only
	full  bool
	bound int // lifetimes bound by enclosing for<…>
	out   []byte
	// sizeHit is set when printing stopped at v0MaxSize (run).
	sizeHit bool
}

// sizeExceeded is the panic value that stops printing at v0MaxSize.
type sizeExceeded struct{}

func (p *v0Printer) run() {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(sizeExceeded); !ok {
				panic(r)
			}
			p.out = append(p.out, v0SizeLimit...)
			p.sizeHit = true
		}
	}()
	p.path(true)
}

func (p *v0Printer) print(s string) {
	if p.skip {
		return
	}
	if len(p.out)+len(s) > v0MaxSize {
		panic(sizeExceeded{})
	}
	p.out = append(p.out, s...)
}

// print2 prints a then b as print does a+b (at the size limit, neither),
// without building a+b.
func (p *v0Printer) print2(a, b string) {
	if p.skip {
		return
	}
	if len(p.out)+len(a)+len(b) > v0MaxSize {
		panic(sizeExceeded{})
	}
	p.out = append(append(p.out, a...), b...)
}

// fail records and prints the first error.
func (p *v0Printer) fail(e string) {
	p.print(e)
	p.err = e
}

// ok is the start of every parse step: false, printing "?", when the
// parse has already failed.
func (p *v0Printer) ok() bool {
	if p.err != "" {
		p.print("?")
		return false
	}
	return true
}

func (p *v0Printer) peek() byte {
	if p.err != "" || p.pos >= len(p.sym) {
		return 0
	}
	return p.sym[p.pos]
}

func (p *v0Printer) eat(b byte) bool {
	if p.peek() == b && b != 0 {
		p.pos++
		return true
	}
	return false
}

func (p *v0Printer) next() (byte, bool) {
	if !p.ok() {
		return 0, false
	}
	if p.pos >= len(p.sym) {
		p.fail(v0Invalid)
		return 0, false
	}
	p.pos++
	return p.sym[p.pos-1], true
}

func (p *v0Printer) push() bool {
	if !p.ok() {
		return false
	}
	p.depth++
	if p.depth > v0MaxDepth {
		p.fail(v0TooDeep)
		return false
	}
	return true
}

func (p *v0Printer) pop() {
	if p.err == "" {
		p.depth--
	}
}

// base62 parses <base-62-number>: "_" is 0, else digits then "_" is
// the value plus one.
func (p *v0Printer) base62() (uint64, bool) {
	if !p.ok() {
		return 0, false
	}
	// Read from a local index (p.err is "" until the end or a bad digit).
	sym, i := p.sym, p.pos
	if i < len(sym) && sym[i] == '_' {
		p.pos = i + 1
		return 0, true
	}
	var x uint64
	for ; i < len(sym) && sym[i] != '_'; i++ {
		d := uint64(base62Digit[sym[i]])
		if d >= 62 {
			p.pos = i
			p.fail(v0Invalid)
			return 0, false
		}
		if x > (1<<64-1-d)/62 {
			p.pos = i + 1
			p.fail(v0Invalid)
			return 0, false
		}
		x = x*62 + d
	}
	if p.pos = i; i == len(sym) {
		p.fail(v0Invalid)
		return 0, false
	}
	p.pos++
	if x == 1<<64-1 {
		p.fail(v0Invalid)
		return 0, false
	}
	return x + 1, true
}

// base62Digit is the value of each base-62 digit, 0xff for other bytes.
var base62Digit = func() (t [256]byte) {
	for c := range t {
		switch {
		case c >= '0' && c <= '9':
			t[c] = byte(c - '0')
		case c >= 'a' && c <= 'z':
			t[c] = byte(c-'a') + 10
		case c >= 'A' && c <= 'Z':
			t[c] = byte(c-'A') + 36
		default:
			t[c] = 0xff
		}
	}
	return t
}()

// optBase62 parses an optional tag + <base-62-number>, 0 when absent.
func (p *v0Printer) optBase62(tag byte) (uint64, bool) {
	if !p.ok() {
		return 0, false
	}
	if !p.eat(tag) {
		return 0, true
	}
	x, ok := p.base62()
	if !ok {
		return 0, false
	}
	if x == 1<<64-1 {
		p.fail(v0Invalid)
		return 0, false
	}
	return x + 1, true
}

// backref runs f at the position a backref names (printing only; a
// validating pass does not follow backrefs, so their cost stays linear).
// An error inside the backref does not end the outer parse.
func (p *v0Printer) backref(f func()) {
	start := p.pos - 1
	i, ok := p.base62()
	if !ok {
		return
	}
	if i >= uint64(start) {
		p.fail(v0Invalid)
		return
	}
	if p.depth+1 > v0MaxDepth {
		p.fail(v0TooDeep)
		return
	}
	if p.skip {
		return
	}
	pos, depth := p.pos, p.depth
	p.pos, p.depth = int(i), depth+1
	f()
	p.pos, p.depth, p.err = pos, depth, ""
}

var v0BasicTypes = [256]string{
	'b': "bool", 'c': "char", 'e': "str", 'u': "()", 'a': "i8", 's': "i16", 'l': "i32",
	'x': "i64", 'n': "i128", 'i': "isize", 'h': "u8", 't': "u16", 'm': "u32", 'y': "u64",
	'o': "u128", 'j': "usize", 'f': "f32", 'd': "f64", 'z': "!", 'p': "_", 'v': "...",
}

func (p *v0Printer) path(inValue bool) {
	if !p.push() {
		return
	}
	tag, ok := p.next()
	if !ok {
		return
	}
	switch tag {
	case 'C':
		dis, ok := p.optBase62('s')
		if !ok {
			return
		}
		name, ok := p.ident()
		if !ok {
			return
		}
		p.print(name.String())
		if p.full && dis != 0 {
			p.print("[" + strconv.FormatUint(dis, 16) + "]")
		}
	case 'N':
		c, ok := p.next()
		if !ok {
			return
		}
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			p.fail(v0Invalid)
			return
		}
		p.path(inValue)
		if p.err != "" {
			p.print("::")
		}
		dis, ok := p.optBase62('s')
		if !ok {
			return
		}
		name, ok := p.ident()
		if !ok {
			return
		}
		if c >= 'A' && c <= 'Z' {
			p.print("::{")
			switch c {
			case 'C':
				p.print("closure")
			case 'S':
				p.print("shim")
			default:
				p.print(string(rune(c)))
			}
			if !name.empty() {
				p.print2(":", name.String())
			}
			p.print("#" + strconv.FormatUint(dis, 10) + "}")
		} else if !name.empty() {
			p.print2("::", name.String())
		}
	case 'M', 'X', 'Y':
		if tag != 'Y' {
			if _, ok := p.optBase62('s'); !ok {
				return
			}
			skip := p.skip
			p.skip = true
			p.path(false)
			p.skip = skip
		}
		p.print("<")
		p.typ()
		if tag != 'M' {
			p.print(" as ")
			p.path(false)
		}
		p.print(">")
	case 'I':
		p.path(inValue)
		if inValue {
			p.print("::")
		}
		p.print("<")
		p.list(p.genericArg, ", ")
		p.print(">")
	case 'B':
		p.backref(func() { p.path(inValue) })
	default:
		p.fail(v0Invalid)
		return
	}
	p.pop()
}

// list prints items up to an "E", separated by sep, and counts them.
func (p *v0Printer) list(f func(), sep string) int {
	n := 0
	for p.err == "" && !p.eat('E') {
		if n > 0 {
			p.print(sep)
		}
		f()
		n++
	}
	return n
}

func (p *v0Printer) genericArg() {
	switch {
	case p.eat('L'):
		if lt, ok := p.base62(); ok {
			p.lifetime(lt)
		}
	case p.eat('K'):
		p.constant(false)
	default:
		p.typ()
	}
}

func (p *v0Printer) lifetime(lt uint64) {
	if p.skip {
		return
	}
	p.print("'")
	if lt == 0 {
		p.print("_")
		return
	}
	if lt > uint64(p.bound) {
		p.fail(v0Invalid)
		return
	}
	if d := uint64(p.bound) - lt; d < 26 {
		p.print(string(rune('a' + d)))
	} else {
		p.print("_" + strconv.FormatUint(d, 10))
	}
}

// binder prints an optional for<'a, …> and runs f with those lifetimes
// bound.
func (p *v0Printer) binder(f func()) {
	n, ok := p.optBase62('G')
	if !ok {
		return
	}
	if p.skip {
		f()
		return
	}
	if n > 0 {
		p.print("for<")
		for i := uint64(0); i < n; i++ {
			if i > 0 {
				p.print(", ")
			}
			p.bound++
			p.lifetime(1)
		}
		p.print("> ")
	}
	f()
	p.bound -= int(n)
}
