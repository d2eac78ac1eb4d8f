package swift

import (
	"strconv"
	"strings"
)

// Printing entities (functions, variables, storage, contexts) and their
// types, and quoting of unmangled text.

func needSpaceBeforeType(t *node) bool {
	for t.is(kType) {
		t = t.first()
	}
	if t == nil {
		return true
	}
	switch t.kind {
	case kFunctionType, kNoEscapeFunctionType, kUncurriedFunctionType, kDependentGenericType:
		return false
	}
	return true
}

const (
	noType = iota
	withColon
	functionStyle
)

func (p *printer) abstractStorage(n *node, depth int, asPrefix bool, extra string) *node {
	switch n.kind {
	case kVariable:
		return p.entity(n, depth, asPrefix, withColon, true, extra, -1, "")
	case kSubscript:
		return p.entity(n, depth, asPrefix, withColon, false, extra, -1, "subscript")
	}
	p.invalid = true
	return nil
}

func (p *printer) entity(e *node, depth int, asPrefix bool, typePr int, hasName bool, extra string, extraIndex int, overwrite string) *node {
	var genericArgs *node
	if e.kind == kBoundGenericFunction {
		genericArgs = e.child(1)
		e = e.first()
	}
	if e == nil || e.numChildren() == 0 {
		p.invalid = true
		return nil
	}
	multiWord := strings.Contains(extra, " ")
	local := hasName && e.child(1).is(kLocalDeclName)
	if local && p.opt.displayLocalContexts {
		multiWord = true
	}
	if asPrefix && (typePr != noType || multiWord) {
		return e
	}
	var postfix *node
	ctx := e.first()
	if p.printContext(ctx) {
		if multiWord {
			postfix = ctx
		} else {
			pos := p.out.Len()
			postfix = p.print(ctx, depth+1, true)
			if p.out.Len() != pos {
				p.s(".")
			}
		}
	}
	// The name.
	if hasName || overwrite != "" {
		if extra != "" && multiWord {
			p.s(extra)
			if extraIndex >= 0 {
				p.s(strconv.Itoa(extraIndex))
			}
			p.s(" of ")
			extra, extraIndex = "", -1
		}
		pos := p.out.Len()
		if overwrite != "" {
			p.s(overwrite)
		} else {
			name := e.child(1)
			if name != nil && name.kind != kPrivateDeclName {
				p.print(name, depth+1, false)
			}
			if priv := e.childOfKind(kPrivateDeclName); priv != nil {
				p.print(priv, depth+1, false)
			}
		}
		if p.out.Len() != pos && extra != "" {
			p.s(".")
		}
	}
	if extra != "" {
		p.s(extra)
		if extraIndex >= 0 {
			p.s(strconv.Itoa(extraIndex))
		}
	}
	if typePr != noType {
		t := e.childOfKind(kType)
		if t == nil || t.first() == nil {
			p.invalid = true
			return nil
		}
		t = t.first()
		if typePr == functionStyle {
			u := t
			for u.is(kDependentGenericType) {
				u = u.child(1).first()
			}
			if u == nil || u.kind != kFunctionType && u.kind != kNoEscapeFunctionType &&
				u.kind != kUncurriedFunctionType && u.kind != kCFunctionPointer && u.kind != kThinFunctionType {
				typePr = withColon
			}
		}
		if typePr == withColon {
			if p.opt.displayEntityTypes {
				p.s(" : ")
				p.entityType(e, t, genericArgs, depth)
			}
		} else {
			if multiWord || needSpaceBeforeType(t) {
				p.s(" ")
			}
			p.entityType(e, t, genericArgs, depth)
		}
	}
	if !asPrefix && postfix != nil && (!local || p.opt.displayLocalContexts) {
		switch e.kind {
		case kDefaultArgumentInitializer, kInitializer, kPropertyWrapperBackingInitializer,
			kPropertyWrapperInitFromProjectedValue, kPropertyWrappedFieldInitAccessor:
			p.s(" of ")
		default:
			p.s(" in ")
		}
		p.print(postfix, depth+1, false)
		postfix = nil
	}
	return postfix
}

func (p *printer) entityType(e, t, genericArgs *node, depth int) {
	labels := e.childOfKind(kLabelList)
	if labels == nil && genericArgs == nil {
		p.print(t, depth+1, false)
		return
	}
	if genericArgs != nil {
		p.s("<")
		p.children(genericArgs, depth, ", ")
		p.s(">")
	}
	if t.kind == kDependentGenericType {
		if genericArgs == nil {
			p.print(t.first(), depth+1, false)
		}
		dep := t.child(1)
		if needSpaceBeforeType(dep) {
			p.s(" ")
		}
		t = dep.first()
	}
	if t == nil {
		p.invalid = true
		return
	}
	p.functionType(labels, t, depth)
}

func quoted(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			b.WriteString(`\\`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '"':
			b.WriteString(`\"`)
		case 0:
			b.WriteString(`\0`)
		default:
			if c < 0x20 || c >= 0x7f {
				const hex = "0123456789ABCDEF"
				b.WriteString(`\x`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&15])
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
