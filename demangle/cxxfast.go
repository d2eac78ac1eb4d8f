package demangle

import (
	"strconv"
	"strings"
	"sync"
)

// cxxFast demangles the Itanium C++ names of the common shapes without
// building the full demangler's tree: a function's plain, nested or
// local name (const, ref-qualified, a constructor, destructor or
// operator, ABI tags, lambdas and unnamed types, templates of types,
// packs, integer and null literals, addresses, qualified names and
// template parameters as arguments), its return type when it is a
// template, and parameters of builtin, class, enum and std:: types,
// template parameters and pack expansions, pointers, references, const,
// arrays, function types, pointers to them and to members, and
// substitutions; thunks to such functions. All but 0.1-0.3% of the
// functions of a C++ binary that symbolize names (LLVM's, node's) are
// such names, and this prints them several times faster, with one
// allocation. ok is false for every other name (other expressions,
// decltype, string literals and default arguments in local names,
// candidates whose meaning depends on the template in scope, covariant
// thunks, conversion operators, a clone suffix in the full form, ...),
// which the full demangler then takes; for those it takes, the result
// is the full demangler's in both forms (TestCxxFastEqualsFull,
// FuzzCxxFast).
func cxxFast(s string, f Form) (string, bool) {
	d, ok, _ := cxxFastName(s, f)
	return d, ok
}

// cxxFastName is cxxFast, also saying whether s is a function's name
// with a signature (or a thunk's): more than a name follows "_Z", which
// no legacy Rust name is (see demangleName).
func cxxFastName(s string, f Form) (d string, ok, signature bool) {
	if len(s) < 3 || s[0] != '_' || s[1] != 'Z' {
		return "", false, false
	}
	p := fastPool.Get().(*fastParser)
	defer fastPool.Put(p)
	p.reset(s)
	p.form = f
	p.limit = maxOutput(len(s))
	thunk := p.thunk()
	name := p.functionName()
	if p.bad {
		return "", false, false
	}
	if p.i == len(s) {
		if p.isConst || p.hasReturn || p.refQual != "" || thunk != "" {
			return "", false, false
		}
		return string(p.text(name)), true, false
	}
	// The simplified form drops a clone suffix (".constprop.0"), as
	// the full demangler with NoClones ignores whatever follows the
	// parameters; the full form leaves the name to the full demangler.
	end := len(s)
	if f == Simplified {
		if j := strings.IndexByte(s[p.i:], '.'); j >= 0 {
			end = p.i + j
		}
	}
	var ret span
	p.tmplInScope = p.haveFnArgs
	if p.hasReturn {
		t := p.typ()
		ret = t.span
		if p.bad || p.i >= end || t.fn || t.closed {
			return "", false, false
		}
	}
	if p.i >= end {
		return "", false, false
	}
	if s[p.i] == 'v' && p.i+1 == end {
		p.i++ // no parameters
	}
	if !p.parameters(end) {
		return "", false, false
	}
	// The whole name, printed after all the parts it is made of.
	// Written once, into the result (no copy in out first).
	n := len(thunk) + len(p.text(name)) + 2 + len(p.refQual)
	if p.hasReturn {
		n += len(p.text(ret)) + 1
	}
	for _, t := range p.params {
		n += len(p.text(t)) + 2
	}
	if p.isConst {
		n += len(" const")
	}
	if n > p.limit {
		return "", false, false
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(thunk)
	if p.hasReturn {
		b.Write(p.text(ret))
		b.WriteByte(' ')
	}
	b.Write(p.text(name))
	b.WriteByte('(')
	for n, t := range p.params {
		if n > 0 {
			b.WriteString(", ")
		}
		b.Write(p.text(t))
	}
	b.WriteByte(')')
	if p.isConst {
		b.WriteString(" const")
	}
	b.WriteString(p.refQual)
	return b.String(), true, true
}

// parameters parses the parameter types up to end, or up to an E when
// end is -1 (a local name's function), into p.params, and says whether
// they are the shapes the fast path prints.
func (p *fastParser) parameters(end int) bool {
	for !p.bad && (end < 0 || p.i < end) {
		var t fastType
		switch c := p.peek(); {
		case c == 'E' && end < 0:
			return true
		case c == 'v' || c == 0:
			return false // void among other parameters
		case c == 'D' && p.i+1 < len(p.s) && p.s[p.i+1] == 'p':
			t = p.expansion()
		default:
			t = p.typ()
		}
		if p.bad || t.fn {
			return false
		}
		if !t.empty {
			p.params = append(p.params, t.span)
		}
	}
	return !p.bad && end >= 0
}

// appendList appends the texts of list, separated by commas.
func (p *fastParser) appendList(list []span) {
	for n, t := range list {
		if n > 0 {
			p.put(", ")
		}
		p.putSpan(t)
	}
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
		// More than nine digits may not fit the full demangler's
		// number (which refuses the name), as in compactNumber.
		if p.i == j || p.i-j > 9 || p.peek() != '_' {
			p.fail()
			return ""
		}
		p.i++
	}
	return prefix
}

// fastParser is cxxFast's state: the printed text of every name and
// type lies in out[:n], which only grows while a name is parsed.
type fastParser struct {
	s   string
	i   int
	bad bool
	// out is written through n, not appended to: storing out's pointer
	// back at each append took a write barrier while the GC marks.
	out []byte
	n   int
	// limit bounds n (maxOutput): past it the parse fails.
	limit int
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
	// tmplInScope says that a function template's parameters are
	// being parsed, whose T_ a local name's function would name in
	// the full demangler (which the fast path leaves to it).
	tmplInScope bool
	// noParam counts the lambda signatures being parsed, in which a
	// T_ names a generic lambda's auto (left to the full demangler).
	noParam int
	// firstT is how many substitution candidates there were when a
	// local name's function first named its template parameter (-1:
	// not yet).
	firstT int
	// autoAt is how many candidates there were when the lambda's
	// signature being parsed first named an auto (-1: not yet).
	autoAt int
	form   Form
}

// fastPool keeps parsers and their buffers from name to name (on the
// stack they would escape: the parse is recursive).
var fastPool = sync.Pool{New: func() any {
	return &fastParser{out: make([]byte, 1024), subs: make([]fastType, 0, 32)}
}}

func (p *fastParser) reset(s string) {
	p.s, p.i, p.bad = s, 2, false
	p.n, p.subs, p.params, p.args, p.fnArgs = 0, p.subs[:0], p.params[:0], p.args[:0], p.fnArgs[:0]
	p.packElems = p.packElems[:0]
	p.haveFnArgs, p.isConst, p.hasReturn, p.refQual = false, false, false, ""
	p.tmplInScope, p.noParam, p.firstT, p.autoAt = false, 0, -1, -1
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
	// An array type (A <n> _ <type>) is a function type's kin: its
	// element type (span) and its bounds (params, "[16]").
	array bool
	// opaque marks a substitution candidate the fast path does not
	// print when it is named again: a pack expansion's, or one of an
	// inner encoding (a local name's function) that may hold its T_.
	// (Beside array: 40 bytes a fastType, not 44.)
	opaque bool
	// ins is where, in a closed type's text, a pack expansion's
	// modifiers go: after the * of void (*)(int) (0: nowhere).
	ins int32
	// A pack's elements are packElems[elemLo:elemHi].
	elemLo, elemHi int32
}

func (p *fastParser) text(sp span) []byte { return p.out[sp.lo:sp.hi] }

// put, putBytes, putByte, putSpan and putNumber append to out[:n].
func (p *fastParser) put(s string) {
	if len(s) > len(p.out)-p.n {
		p.grow(len(s))
	}
	p.n += copy(p.out[p.n:], s)
}

func (p *fastParser) putBytes(b []byte) {
	if len(b) > len(p.out)-p.n {
		p.grow(len(b)) // b, were it in out, stays readable
	}
	p.n += copy(p.out[p.n:], b)
}

func (p *fastParser) putByte(c byte) {
	if p.n == len(p.out) {
		if p.grow(1); p.n == len(p.out) {
			return // past the limit
		}
	}
	p.out[p.n] = c
	p.n++
}

// putSpan appends the text of sp, already in out.
func (p *fastParser) putSpan(sp span) {
	if int(sp.hi-sp.lo) > len(p.out)-p.n {
		p.grow(int(sp.hi - sp.lo))
	}
	p.n += copy(p.out[p.n:], p.out[sp.lo:sp.hi])
}

func (p *fastParser) putNumber(n int) {
	var b [20]byte
	p.putBytes(strconv.AppendInt(b[:0], int64(n), 10))
}

// grow makes room in out for k more bytes, or fails the parse when that
// would pass the limit (the puts then write what room is left, and the
// name is left to the full demangler, bounded alike).
func (p *fastParser) grow(k int) {
	if p.n+k > p.limit {
		p.fail()
		return
	}
	b := make([]byte, min(max(2*len(p.out), p.n+k), p.limit))
	copy(b, p.out[:p.n])
	p.out = b
}

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
	if int(cur.hi) != p.n {
		return p.emit(p.text(cur), b, c)
	}
	if len(b) == 2 && len(p.out)-p.n >= 2 {
		// "::", most often: two stores, not a copy's call.
		p.out[p.n], p.out[p.n+1] = b[0], b[1]
		p.n += 2
	} else {
		p.put(b)
	}
	if c != "" {
		p.put(c)
	}
	cur.hi = int32(p.n)
	return cur
}

// emit appends the concatenation of a, b and c to out and returns its span.
func (p *fastParser) emit(a []byte, b, c string) span {
	lo := p.n
	if len(a) > 0 {
		p.putBytes(a)
	}
	p.put(b)
	if c != "" {
		p.put(c)
	}
	return span{int32(lo), int32(p.n)}
}

// functionName parses the <name> of an <encoding>: an unscoped name
// (std:: or not, a template or not) or a nested name.
func (p *fastParser) functionName() span {
	var name span
	switch c := p.peek(); {
	case c == 'N':
		return p.nested(true, false)
	case c == 'Z':
		return p.localName(true)
	case c == 'S' && p.i+1 < len(p.s) && p.s[p.i+1] == 't':
		p.i += 2
		if c := p.peek(); c >= 'a' && c <= 'z' {
			name = p.emit([]byte("std::"), p.operator(), "")
		} else {
			name = p.emit([]byte("std::"), p.unqualified(), "")
		}
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
		if int(sp.hi) != p.n {
			sp = p.emit(p.text(sp), "", "")
		}
		p.put("[abi:")
		p.put(tag)
		p.putByte(']')
		sp.hi = int32(p.n)
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
