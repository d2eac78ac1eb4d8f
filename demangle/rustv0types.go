package demangle

// Rust v0 types and function signatures.

import (
	"strings"
)

func (p *v0Printer) typ() {
	tag, ok := p.next()
	if !ok {
		return
	}
	if s := v0BasicTypes[tag]; s != "" {
		p.print(s)
		return
	}
	if !p.push() {
		return
	}
	switch tag {
	case 'R', 'Q':
		p.print("&")
		if p.eat('L') {
			lt, ok := p.base62()
			if !ok {
				return
			}
			if lt != 0 {
				p.lifetime(lt)
				p.print(" ")
			}
		}
		if tag == 'Q' {
			p.print("mut ")
		}
		p.typ()
	case 'P', 'O':
		if tag == 'P' {
			p.print("*const ")
		} else {
			p.print("*mut ")
		}
		p.typ()
	case 'A', 'S':
		p.print("[")
		p.typ()
		if tag == 'A' {
			p.print("; ")
			p.constant(true)
		}
		p.print("]")
	case 'T':
		p.print("(")
		if p.list(p.typ, ", ") == 1 {
			p.print(",")
		}
		p.print(")")
	case 'F':
		p.binder(p.fnSig)
	case 'D':
		p.print("dyn ")
		p.binder(func() { p.list(p.dynTrait, " + ") })
		if !p.eat('L') {
			if p.ok() {
				p.fail(v0Invalid)
			}
			return
		}
		lt, ok := p.base62()
		if !ok {
			return
		}
		if lt != 0 {
			p.print(" + ")
			p.lifetime(lt)
		}
	case 'B':
		p.backref(p.typ)
	case 'W':
		p.typ()
		p.print(" is ")
		p.pattern()
	default:
		p.pos--
		p.path(false)
	}
	p.pop()
}

func (p *v0Printer) fnSig() {
	unsafe := p.eat('U')
	abi := ""
	if p.eat('K') {
		if p.eat('C') {
			abi = "C"
		} else {
			id, ok := p.ident()
			if !ok {
				return
			}
			if id.ascii == "" || id.puny != "" {
				p.fail(v0Invalid)
				return
			}
			abi = strings.ReplaceAll(id.ascii, "_", "-")
		}
	}
	if unsafe {
		p.print("unsafe ")
	}
	if abi != "" {
		p.print(`extern "` + abi + `" `)
	}
	p.print("fn(")
	p.list(p.typ, ", ")
	p.print(")")
	if !p.eat('u') {
		p.print(" -> ")
		p.typ()
	}
}

// pathOpenGenerics prints a path whose generic arguments may be left open
// for a dyn trait's associated-type bindings.
func (p *v0Printer) pathOpenGenerics() bool {
	switch {
	case p.eat('B'):
		open := false
		p.backref(func() { open = p.pathOpenGenerics() })
		return open
	case p.eat('I'):
		p.path(false)
		p.print("<")
		p.list(p.genericArg, ", ")
		return true
	}
	p.path(false)
	return false
}

func (p *v0Printer) dynTrait() {
	open := p.pathOpenGenerics()
	for p.eat('p') {
		if open {
			p.print(", ")
		} else {
			p.print("<")
			open = true
		}
		name, ok := p.ident()
		if !ok {
			return
		}
		p.print(name.String() + " = ")
		if p.eat('K') {
			p.constant(false)
		} else {
			p.typ()
		}
	}
	if open {
		p.print(">")
	}
}
