package swift

import "strings"

// Names and contexts of the Swift 3 mangling: identifiers, substitutions,
// modules, protocols, bound generic arguments and conformances.

func (o *oldDemangler) declName(depth int) *node {
	switch {
	case o.nextIf('L'):
		disc := o.indexAsNodeOld(depth + 1)
		if disc == nil {
			return nil
		}
		name := o.identifier(depth+1, kNone)
		return o.with(kLocalDeclName, disc, name)
	case o.nextIf('P'):
		disc := o.identifier(depth+1, kNone)
		if disc == nil {
			return nil
		}
		name := o.identifier(depth+1, kNone)
		return o.with(kPrivateDeclName, disc, name)
	}
	return o.identifier(depth+1, kNone)
}

// identifier reads [X]<length><text> or o<p|P|i><length><text>; k is
// the node kind (kNone: Identifier, or the operator's kind).
func (o *oldDemangler) identifier(depth int, k kind) *node {
	if o.empty() {
		return nil
	}
	puny := o.nextIf('X')
	op := false
	if o.nextIf('o') {
		op = true
		if k != kNone {
			return nil
		}
		switch o.next() {
		case 'p':
			k = kPrefixOperator
		case 'P':
			k = kPostfixOperator
		case 'i':
			k = kInfixOperator
		default:
			return nil
		}
	}
	if k == kNone {
		k = kIdentifier
	}
	n, ok := o.naturalOld()
	if !ok || n > uint64(len(o.text)-o.pos) {
		return nil
	}
	id := o.text[o.pos : o.pos+int(n)]
	o.pos += int(n)
	if puny {
		var ok bool
		if id, ok = punycode(id); !ok {
			return nil
		}
	}
	if id == "" {
		return nil
	}
	if op {
		const table = "& @/= >    <*!|+?%-~   ^ ."
		var b strings.Builder
		for i := 0; i < len(id); i++ {
			c := id[i]
			if c >= 0x80 {
				b.WriteByte(c)
				continue
			}
			if c < 'a' || c > 'z' || table[c-'a'] == ' ' {
				return nil
			}
			b.WriteByte(table[c-'a'])
		}
		id = b.String()
	}
	return o.textNode(k, id)
}

func (o *oldDemangler) naturalOld() (uint64, bool) {
	if o.empty() {
		return 0, false
	}
	c := o.next()
	if c < '0' || c > '9' {
		return 0, false
	}
	n := uint64(c - '0')
	for !o.empty() && isDigit(o.text[o.pos]) {
		n = n*10 + uint64(o.text[o.pos]-'0') // wraps as Swift's does
		o.pos++
	}
	return n, true
}

func (o *oldDemangler) indexOld() (uint64, bool) {
	if o.nextIf('_') {
		return 0, true
	}
	n, ok := o.naturalOld()
	if !ok || !o.nextIf('_') {
		return 0, false
	}
	return n + 1, true
}

func (o *oldDemangler) indexAsNodeOld(int) *node {
	i, ok := o.indexOld()
	if !ok {
		return nil
	}
	return o.indexNode(kNumber, i)
}

func (o *oldDemangler) swiftTypeOld(k kind, name string) *node {
	return o.with(k, o.textNode(kModule, "Swift"), o.textNode(kIdentifier, name))
}

var oldStdTypes = lazy[map[byte]stdType]{build: func() map[byte]stdType {
	return map[byte]stdType{
		'a': {kStructure, "Array"}, 'b': {kStructure, "Bool"}, 'c': {kStructure, "UnicodeScalar"},
		'd': {kStructure, "Double"}, 'f': {kStructure, "Float"}, 'i': {kStructure, "Int"},
		'V': {kStructure, "UnsafeRawPointer"}, 'v': {kStructure, "UnsafeMutableRawPointer"},
		'P': {kStructure, "UnsafePointer"}, 'p': {kStructure, "UnsafeMutablePointer"},
		'q': {kEnum, "Optional"}, 'Q': {kEnum, "ImplicitlyUnwrappedOptional"},
		'R': {kStructure, "UnsafeBufferPointer"}, 'r': {kStructure, "UnsafeMutableBufferPointer"},
		'S': {kStructure, "String"}, 'u': {kStructure, "UInt"},
	}
}}

func (o *oldDemangler) substitutionIndex(depth int) *node {
	if o.empty() {
		return nil
	}
	if o.nextIf('o') {
		return o.textNode(kModule, "__C")
	}
	if o.nextIf('C') {
		return o.textNode(kModule, "__C_Synthesized")
	}
	if t, ok := oldStdTypes.get()[o.peek()]; ok {
		o.pos++
		return o.swiftTypeOld(t.k, t.name)
	}
	i, ok := o.indexOld()
	if !ok || i >= uint64(len(o.subs)) {
		return nil
	}
	return o.subs[i]
}

func (o *oldDemangler) module(depth int) *node {
	if o.nextIf('s') {
		return o.textNode(kModule, "Swift")
	}
	if o.nextIf('S') {
		m := o.substitutionIndex(depth + 1)
		if !m.is(kModule) {
			return nil
		}
		return m
	}
	m := o.identifier(depth+1, kModule)
	if m == nil {
		return nil
	}
	o.subs = append(o.subs, m)
	return m
}

func (o *oldDemangler) declarationName(k kind, depth int) *node {
	ctx := o.context(depth + 1)
	if ctx == nil {
		return nil
	}
	name := o.declName(depth + 1)
	d := o.with(k, ctx, name)
	if d != nil {
		o.subs = append(o.subs, d)
	}
	return d
}

func (o *oldDemangler) protocolName(depth int) *node {
	return o.typ(o.protocolNameImpl(depth))
}

func (o *oldDemangler) protocolGivenContext(ctx *node, depth int) *node {
	name := o.declName(depth + 1)
	p := o.with(kProtocol, ctx, name)
	if p != nil {
		o.subs = append(o.subs, p)
	}
	return p
}

func (o *oldDemangler) protocolNameImpl(depth int) *node {
	if depth > oldMaxDepth {
		return nil
	}
	if o.nextIf('S') {
		sub := o.substitutionIndex(depth + 1)
		switch {
		case sub == nil:
			return nil
		case sub.kind == kProtocol:
			return sub
		case sub.kind != kModule:
			return nil
		}
		return o.protocolGivenContext(sub, depth+1)
	}
	if o.nextIf('s') {
		return o.protocolGivenContext(o.textNode(kModule, "Swift"), depth+1)
	}
	return o.declarationName(kProtocol, depth+1)
}

func (o *oldDemangler) nominalType(depth int) *node {
	switch {
	case o.nextIf('S'):
		return o.substitutionIndex(depth + 1)
	case o.nextIf('V'):
		return o.declarationName(kStructure, depth+1)
	case o.nextIf('O'):
		return o.declarationName(kEnum, depth+1)
	case o.nextIf('C'):
		return o.declarationName(kClass, depth+1)
	case o.nextIf('P'):
		return o.declarationName(kProtocol, depth+1)
	}
	return nil
}

func (o *oldDemangler) boundGenericArgs(nom *node, depth int) *node {
	if nom.numChildren() == 0 || depth > oldMaxDepth {
		return nil
	}
	parent := nom.first()
	if parent.kind != kModule && parent.kind != kFunction && parent.kind != kExtension {
		parent = o.boundGenericArgs(parent, depth+1)
		if parent == nil {
			return nil
		}
		r := o.with(nom.kind, parent)
		if r == nil {
			return nil
		}
		r.children = append(r.children, nom.children[1:]...)
		nom = r
	}
	args := o.newNode(kTypeList)
	if args == nil {
		return nil
	}
	for !o.nextIf('_') {
		if !child(args, o.oldType(depth+1)) || o.empty() {
			return nil
		}
	}
	if args.numChildren() == 0 {
		return nom
	}
	var k kind
	switch nom.kind {
	case kClass:
		k = kBoundGenericClass
	case kStructure:
		k = kBoundGenericStructure
	case kEnum:
		k = kBoundGenericEnum
	default:
		return nil
	}
	return o.with(k, o.typ(nom), args)
}

func (o *oldDemangler) boundGenericType(depth int) *node {
	nom := o.nominalType(depth + 1)
	if nom == nil {
		return nil
	}
	return o.boundGenericArgs(nom, depth+1)
}

func isStartOfEntity(c byte) bool {
	switch c {
	case 'F', 'I', 'v', 'P', 's', 'Z', 'C', 'V', 'O':
		return true
	}
	return false
}

func (o *oldDemangler) context(depth int) *node {
	if o.empty() || depth > oldMaxDepth {
		return nil
	}
	switch {
	case o.nextIf('E'):
		mod := o.module(depth + 1)
		if mod == nil {
			return nil
		}
		t := o.context(depth + 1)
		return o.with(kExtension, mod, t)
	case o.nextIf('e'):
		mod := o.module(depth + 1)
		if mod == nil {
			return nil
		}
		sig := o.genericSignatureOld(depth+1, false)
		if sig == nil {
			return nil
		}
		t := o.context(depth + 1)
		return o.with(kExtension, mod, t, sig)
	case o.nextIf('S'):
		return o.substitutionIndex(depth + 1)
	case o.nextIf('s'):
		return o.textNode(kModule, "Swift")
	case o.nextIf('G'):
		return o.boundGenericType(depth + 1)
	case isStartOfEntity(o.peek()):
		return o.entity(depth + 1)
	}
	return o.module(depth + 1)
}

func (o *oldDemangler) protocolList(depth int) *node {
	tl := o.newNode(kTypeList)
	pl := o.with(kProtocolList, tl)
	if pl == nil {
		return nil
	}
	for !o.nextIf('_') {
		if !child(tl, o.protocolName(depth+1)) {
			return nil
		}
	}
	return pl
}

func (o *oldDemangler) protocolConformance(depth int) *node {
	t := o.oldType(depth + 1)
	if t == nil {
		return nil
	}
	p := o.protocolName(depth + 1)
	if p == nil {
		return nil
	}
	ctx := o.context(depth + 1)
	return o.with(kProtocolConformance, t, p, ctx)
}
