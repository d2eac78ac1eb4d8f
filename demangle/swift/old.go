package swift

import (
	"strconv"
	"strings"
)

// oldDemangler parses the mangling of Swift 3 and earlier ("_T" without
// "0", and "_Tt" type names that Objective-C metadata still holds): a
// prefix grammar, read left to right by recursive descent.
type oldDemangler struct {
	*demangler
	subs []*node
}

const oldMaxDepth = 1024

// demangleOld parses an old-mangling symbol into a Global node.
func demangleOld(s string) *node {
	o := &oldDemangler{demangler: &demangler{text: s}}
	return o.topLevel()
}

func (o *oldDemangler) empty() bool { return o.pos >= len(o.text) }

// peek and next see "." past the end, as Swift's old demangler does.
func (o *oldDemangler) peek() byte {
	if o.empty() {
		return '.'
	}
	return o.text[o.pos]
}

func (o *oldDemangler) next() byte {
	c := o.peek()
	if !o.empty() {
		o.pos++
	}
	return c
}

func (o *oldDemangler) nextIf(c byte) bool {
	if o.empty() || o.text[o.pos] != c {
		return false
	}
	o.pos++
	return true
}

func (o *oldDemangler) topLevel() *node {
	if !o.nextIfStr("_T") {
		return nil
	}
	top := o.newNode(kGlobal)
	if top == nil {
		return nil
	}
	switch {
	case o.nextIfStr("TS"):
		for {
			spec := o.specializedAttribute(0)
			if spec == nil {
				return nil
			}
			top.add(spec)
			o.subs = o.subs[:0]
			if !o.nextIfStr("_TTS") {
				break
			}
		}
		if !o.nextIfStr("_T") {
			return nil
		}
	case o.nextIfStr("To"):
		top.add(o.newNode(kObjCAttribute))
	case o.nextIfStr("TO"):
		top.add(o.newNode(kNonObjCAttribute))
	case o.nextIfStr("TD"):
		top.add(o.newNode(kDynamicAttribute))
	case o.nextIfStr("Td"):
		top.add(o.newNode(kDirectMethodReferenceAttribute))
	case o.nextIfStr("TV"):
		top.add(o.newNode(kVTableAttribute))
	}
	g := o.global(0)
	if g == nil {
		return nil
	}
	top.add(g)
	if !o.empty() {
		top.add(o.textNode(kSuffix, o.text[o.pos:]))
		o.pos = len(o.text)
	}
	return top
}

// child runs f and adds its result to p; false if either is nil.
func child(p, c *node) bool {
	if p == nil || c == nil {
		return false
	}
	p.add(c)
	return true
}

func (o *oldDemangler) withType(k kind, depth int) *node {
	n := o.newNode(k)
	if !child(n, o.oldType(depth+1)) {
		return nil
	}
	return n
}

func (o *oldDemangler) withConformance(k kind, depth int) *node {
	n := o.newNode(k)
	if !child(n, o.protocolConformance(depth+1)) {
		return nil
	}
	return n
}

func (o *oldDemangler) global(depth int) *node {
	if depth > oldMaxDepth || o.empty() {
		return nil
	}
	if o.nextIf('M') {
		switch {
		case o.nextIf('P'):
			return o.withType(kGenericTypeMetadataPattern, depth)
		case o.nextIf('a'):
			return o.withType(kTypeMetadataAccessFunction, depth)
		case o.nextIf('L'):
			return o.withType(kTypeMetadataLazyCache, depth)
		case o.nextIf('m'):
			return o.withType(kMetaclass, depth)
		case o.nextIf('n'):
			return o.withType(kNominalTypeDescriptor, depth)
		case o.nextIf('f'):
			return o.withType(kFullTypeMetadata, depth)
		case o.nextIf('p'):
			n := o.newNode(kProtocolDescriptor)
			if !child(n, o.protocolName(depth+1)) {
				return nil
			}
			return n
		}
		return o.withType(kTypeMetadata, depth)
	}
	if o.nextIfStr("PA") {
		k := kPartialApplyForwarder
		if o.nextIf('o') {
			k = kPartialApplyObjCForwarder
		}
		f := o.newNode(k)
		if o.nextIfStr("__T") && !child(f, o.global(depth+1)) {
			return nil
		}
		return f
	}
	if o.nextIf('t') {
		return o.withType(kTypeMangling, depth)
	}
	if o.nextIf('w') {
		if o.pos+2 > len(o.text) {
			return nil
		}
		k, ok := valueWitnessKinds[o.text[o.pos:o.pos+2]]
		o.pos += 2
		if !ok {
			return nil
		}
		w := o.newNode(kValueWitness)
		if w == nil {
			return nil
		}
		w.add(o.indexNode(kIndex, uint64(k)))
		if !child(w, o.oldType(depth+1)) {
			return nil
		}
		return w
	}
	if o.nextIf('W') {
		switch {
		case o.nextIf('V'):
			return o.withType(kValueWitnessTable, depth)
		case o.nextIf('v'):
			f := o.newNode(kFieldOffset)
			var dir uint64
			switch {
			case o.nextIf('d'):
			case o.nextIf('i'):
				dir = 1
			default:
				return nil
			}
			if !child(f, o.indexNode(kDirectness, dir)) || !child(f, o.entity(depth+1)) {
				return nil
			}
			return f
		case o.nextIf('P'):
			return o.withConformance(kProtocolWitnessTable, depth)
		case o.nextIf('G'):
			return o.withConformance(kGenericProtocolWitnessTable, depth)
		case o.nextIf('I'):
			return o.withConformance(kGenericProtocolWitnessTableInstantiationFunction, depth)
		case o.nextIf('l'), o.nextIf('L'):
			k := kLazyProtocolWitnessTableAccessor
			if o.text[o.pos-1] == 'L' {
				k = kLazyProtocolWitnessTableCacheVariable
			}
			n := o.newNode(k)
			if !child(n, o.oldType(depth+1)) || !child(n, o.protocolConformance(depth+1)) {
				return nil
			}
			return n
		case o.nextIf('a'):
			return o.withConformance(kProtocolWitnessTableAccessor, depth)
		case o.nextIf('t'):
			n := o.newNode(kAssociatedTypeMetadataAccessor)
			if !child(n, o.protocolConformance(depth+1)) || !child(n, o.declName(depth+1)) {
				return nil
			}
			return n
		case o.nextIf('T'):
			n := o.newNode(kAssociatedTypeWitnessTableAccessor)
			if !child(n, o.protocolConformance(depth+1)) || !child(n, o.declName(depth+1)) ||
				!child(n, o.protocolName(depth+1)) {
				return nil
			}
			return n
		}
		return nil
	}
	if o.nextIf('T') {
		switch {
		case o.nextIf('R'), o.nextIf('r'):
			k := kReabstractionThunk
			if o.text[o.pos-1] == 'R' {
				k = kReabstractionThunkHelper
			}
			t := o.newNode(k)
			if t == nil || !o.reabstractSignature(t, depth+1) {
				return nil
			}
			return t
		case o.nextIf('W'):
			t := o.newNode(kProtocolWitness)
			if !child(t, o.protocolConformance(depth+1)) || !child(t, o.entity(depth+1)) {
				return nil
			}
			return t
		}
		return nil
	}
	return o.entity(depth + 1)
}

func (o *oldDemangler) specializedAttribute(depth int) *node {
	notReAbstracted := false
	if o.nextIf('g') || func() bool { notReAbstracted = o.nextIf('r'); return notReAbstracted }() {
		k := kGenericSpecialization
		if notReAbstracted {
			k = kGenericSpecializationNotReAbstracted
		}
		spec := o.newNode(k)
		if spec == nil {
			return nil
		}
		if o.nextIf('q') {
			spec.add(o.newNode(kIsSerialized))
		}
		spec.add(o.indexNode(kSpecializationPassID, uint64(uint32(int32(o.next())-48))))
		for !o.nextIf('_') {
			param := o.newNode(kGenericSpecializationParam)
			if !child(param, o.oldType(depth+1)) {
				return nil
			}
			for !o.nextIf('_') {
				if !child(param, o.protocolConformance(depth+1)) {
					return nil
				}
			}
			spec.add(param)
		}
		return spec
	}
	if o.nextIf('f') {
		spec := o.newNode(kFunctionSignatureSpecialization)
		if spec == nil {
			return nil
		}
		if o.nextIf('q') {
			spec.add(o.newNode(kIsSerialized))
		}
		spec.add(o.indexNode(kSpecializationPassID, uint64(uint32(int32(o.next())-48))))
		return o.funcSigSpecialization(spec, depth+1)
	}
	return nil
}

func (o *oldDemangler) paramKind(v uint64) *node {
	return o.indexNode(kFunctionSignatureSpecializationParamKind, v)
}

func (o *oldDemangler) payload(s string) *node {
	return o.textNode(kFunctionSignatureSpecializationParamPayload, s)
}

func (o *oldDemangler) readUntil(c byte) (string, bool) {
	i := strings.IndexByte(o.text[o.pos:], c)
	if i < 0 {
		o.pos = len(o.text)
		return "", false
	}
	s := o.text[o.pos : o.pos+i]
	o.pos += i
	return s, true
}

func (o *oldDemangler) funcSigSpecialization(spec *node, depth int) *node {
	for !o.nextIf('_') {
		param := o.newNode(kFunctionSignatureSpecializationParam)
		if param == nil {
			return nil
		}
		switch {
		case o.nextIfStr("n_"):
		case o.nextIfStr("cp"):
			if !o.constantProp(param, depth+1) {
				return nil
			}
		case o.nextIfStr("cl"):
			name := o.identifier(depth+1, kNone)
			if name == nil {
				return nil
			}
			param.add(o.paramKind(fsClosureProp))
			param.add(o.payload(name.text))
			for o.peek() != '_' {
				t := o.oldType(depth + 1)
				if t == nil {
					break
				}
				param.add(t)
			}
			if !o.nextIf('_') {
				return nil
			}
		case o.nextIfStr("i_"):
			param.add(o.paramKind(fsBoxToValue))
		case o.nextIfStr("k_"):
			param.add(o.paramKind(fsBoxToStack))
		case o.nextIfStr("r_"):
			param.add(o.paramKind(fsInOutToOut))
		default:
			var v uint64
			if o.nextIf('d') {
				v |= fsDead
			}
			if o.nextIf('g') {
				v |= fsOwnedToGuaranteed
			}
			if o.nextIf('o') {
				v |= fsGuaranteedToOwned
			}
			if o.nextIf('s') {
				v |= fsSROA
			}
			if !o.nextIf('_') || v == 0 {
				return nil
			}
			param.add(o.paramKind(v))
		}
		spec.add(param)
	}
	return spec
}

func (o *oldDemangler) constantProp(p *node, depth int) bool {
	switch {
	case o.nextIfStr("fr"), o.nextIf('g'):
		k := uint64(fsConstantPropFunction)
		if o.text[o.pos-1] == 'g' {
			k = fsConstantPropGlobal
		}
		name := o.identifier(depth+1, kNone)
		if name == nil || !o.nextIf('_') {
			return false
		}
		p.add(o.paramKind(k))
		p.add(o.payload(name.text))
		return true
	case o.nextIf('i'), o.nextIfStr("fl"):
		k := uint64(fsConstantPropInteger)
		if o.text[o.pos-1] == 'l' {
			k = fsConstantPropFloat
		}
		s, ok := o.readUntil('_')
		if !ok || !o.nextIf('_') {
			return false
		}
		p.add(o.paramKind(k))
		p.add(o.payload(s))
		return true
	case o.nextIf('s'):
		if !o.nextIf('e') {
			return false
		}
		enc := o.peek()
		if enc != '0' && enc != '1' {
			return false
		}
		encStr := "u8"
		if enc == '1' {
			encStr = "u16"
		}
		o.pos++
		if !o.nextIf('v') {
			return false
		}
		str := o.identifier(depth+1, kNone)
		if str == nil || !o.nextIf('_') {
			return false
		}
		p.add(o.paramKind(fsConstantPropString))
		p.add(o.payload(encStr))
		p.add(o.payload(str.text))
		return true
	}
	return false
}

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

var oldStdTypes = map[byte]stdType{
	'a': {kStructure, "Array"}, 'b': {kStructure, "Bool"}, 'c': {kStructure, "UnicodeScalar"},
	'd': {kStructure, "Double"}, 'f': {kStructure, "Float"}, 'i': {kStructure, "Int"},
	'V': {kStructure, "UnsafeRawPointer"}, 'v': {kStructure, "UnsafeMutableRawPointer"},
	'P': {kStructure, "UnsafePointer"}, 'p': {kStructure, "UnsafeMutablePointer"},
	'q': {kEnum, "Optional"}, 'Q': {kEnum, "ImplicitlyUnwrappedOptional"},
	'R': {kStructure, "UnsafeBufferPointer"}, 'r': {kStructure, "UnsafeMutableBufferPointer"},
	'S': {kStructure, "String"}, 'u': {kStructure, "UInt"},
}

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
	if t, ok := oldStdTypes[o.peek()]; ok {
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

var oldAccessors = map[byte]kind{
	'g': kGetter, 'G': kGlobalGetter, 's': kSetter, 'm': kMaterializeForSet, 'w': kWillSet,
	'W': kDidSet, 'r': kReadAccessor, 'M': kModifyAccessor,
}

func (o *oldDemangler) entity(depth int) *node {
	if depth > oldMaxDepth {
		return nil
	}
	static := o.nextIf('Z')
	var basic kind
	switch {
	case o.nextIf('F'):
		basic = kFunction
	case o.nextIf('v'):
		basic = kVariable
	case o.nextIf('I'):
		basic = kInitializer
	case o.nextIf('i'):
		basic = kSubscript
	default:
		return o.nominalType(depth + 1)
	}
	ctx := o.context(depth + 1)
	if ctx == nil {
		return nil
	}
	var k kind
	hasType, wrap := true, false
	var name *node
	switch c := o.peek(); {
	case c == 'D':
		o.pos++
		k, hasType = kDeallocator, false
	case c == 'Z':
		o.pos++
		k, hasType = kIsolatedDeallocator, false
	case c == 'd':
		o.pos++
		k, hasType = kDestructor, false
	case c == 'e':
		o.pos++
		k, hasType = kIVarInitializer, false
	case c == 'E':
		o.pos++
		k, hasType = kIVarDestroyer, false
	case c == 'C':
		o.pos++
		k = kAllocator
	case c == 'c':
		o.pos++
		k = kConstructor
	case c == 'a' || c == 'l':
		o.pos++
		wrap = true
		mut := c == 'a'
		switch o.next() {
		case 'O':
			k = map[bool]kind{true: kOwningMutableAddressor, false: kOwningAddressor}[mut]
		case 'o':
			k = map[bool]kind{true: kNativeOwningMutableAddressor, false: kNativeOwningAddressor}[mut]
		case 'p':
			k = map[bool]kind{true: kNativePinningMutableAddressor, false: kNativePinningAddressor}[mut]
		case 'u':
			k = map[bool]kind{true: kUnsafeMutableAddressor, false: kUnsafeAddressor}[mut]
		default:
			return nil
		}
		if name = o.declName(depth + 1); name == nil {
			return nil
		}
	case oldAccessors[c] != kNone:
		o.pos++
		wrap = true
		k = oldAccessors[c]
		if name = o.declName(depth + 1); name == nil {
			return nil
		}
	case c == 'U' || c == 'u':
		o.pos++
		k = kExplicitClosure
		if c == 'u' {
			k = kImplicitClosure
		}
		if name = o.indexAsNodeOld(depth + 1); name == nil {
			return nil
		}
	case basic == kInitializer:
		switch {
		case o.nextIf('A'):
			k = kDefaultArgumentInitializer
			if name = o.indexAsNodeOld(depth + 1); name == nil {
				return nil
			}
		case o.nextIf('i'):
			k = kInitializer
		default:
			return nil
		}
		hasType = false
	default:
		k = basic
		if name = o.declName(depth + 1); name == nil {
			return nil
		}
	}
	e := o.newNode(k)
	if e == nil {
		return nil
	}
	if wrap {
		sub := false
		switch name.kind {
		case kIdentifier:
			if name.text == "subscript" {
				sub, name = true, nil
			}
		case kPrivateDeclName:
			if name.numChildren() > 1 && name.child(1).text == "subscript" {
				sub = true
				name = o.with(kPrivateDeclName, name.first())
			}
		}
		wk := kVariable
		if sub {
			wk = kSubscript
		}
		w := o.newNode(wk)
		if w == nil {
			return nil
		}
		w.add(ctx)
		if !sub {
			w.add(name)
		}
		if hasType && !child(w, o.oldType(depth+1)) {
			return nil
		}
		if sub && name != nil {
			w.add(name)
		}
		e.add(w)
	} else {
		e.add(ctx)
		e.add(name)
		if hasType && !child(e, o.oldType(depth+1)) {
			return nil
		}
	}
	if static {
		return o.with(kStatic, e)
	}
	return e
}

func (o *oldDemangler) genericParamIndexOld(depth int) *node {
	var d, i uint64
	switch {
	case o.nextIf('d'):
		var ok bool
		if d, ok = o.indexOld(); !ok {
			return nil
		}
		d++
		if i, ok = o.indexOld(); !ok {
			return nil
		}
	case o.nextIf('x'):
	default:
		var ok bool
		if i, ok = o.indexOld(); !ok {
			return nil
		}
		i++
	}
	return o.with(kDependentGenericParamType, o.indexNode(kIndex, d), o.indexNode(kIndex, i))
}

func (o *oldDemangler) dependentMemberTypeName(base *node, depth int) *node {
	var assoc *node
	if o.nextIf('S') {
		assoc = o.substitutionIndex(depth + 1)
		if !assoc.is(kDependentAssociatedTypeRef) {
			return nil
		}
	} else {
		var proto *node
		if o.nextIf('P') {
			if proto = o.protocolName(depth + 1); proto == nil {
				return nil
			}
		}
		assoc = o.with(kDependentAssociatedTypeRef, o.identifier(depth+1, kNone))
		if assoc == nil {
			return nil
		}
		assoc.add(proto)
		o.subs = append(o.subs, assoc)
	}
	return o.with(kDependentMemberType, base, assoc)
}

func (o *oldDemangler) assocTypeSimpleOld(depth int) *node {
	base := o.genericParamIndexOld(depth + 1)
	if base == nil {
		return nil
	}
	return o.dependentMemberTypeName(o.typ(base), depth+1)
}

func (o *oldDemangler) assocTypeCompoundOld(depth int) *node {
	base := o.genericParamIndexOld(depth + 1)
	if base == nil {
		return nil
	}
	for !o.nextIf('_') {
		if base = o.dependentMemberTypeName(o.typ(base), depth+1); base == nil {
			return nil
		}
	}
	return base
}

func (o *oldDemangler) dependentType(depth int) *node {
	if o.empty() {
		return nil
	}
	if c := o.peek(); c != 'd' && c != '_' && !isDigit(c) {
		base := o.oldType(depth + 1)
		if base == nil {
			return nil
		}
		return o.dependentMemberTypeName(base, depth+1)
	}
	return o.genericParamIndexOld(depth + 1)
}

func (o *oldDemangler) constrainedType(depth int) *node {
	var t *node
	switch {
	case o.nextIf('w'):
		t = o.assocTypeSimpleOld(depth + 1)
	case o.nextIf('W'):
		t = o.assocTypeCompoundOld(depth + 1)
	default:
		t = o.genericParamIndexOld(depth + 1)
	}
	return o.typ(t)
}

func (o *oldDemangler) genericSignatureOld(depth int, pseudo bool) *node {
	k := kDependentGenericSignature
	if pseudo {
		k = kDependentPseudogenericSignature
	}
	sig := o.newNode(k)
	if sig == nil {
		return nil
	}
	count, any := uint64(0), false
	for o.peek() != 'R' && o.peek() != 'r' {
		if o.nextIf('z') {
			count = 0
		} else if i, ok := o.indexOld(); ok {
			count = i + 1
		} else {
			return nil
		}
		any = true
		sig.add(o.indexNode(kDependentGenericParamCount, count))
	}
	if !any {
		sig.add(o.indexNode(kDependentGenericParamCount, 1))
	}
	if o.nextIf('r') {
		return sig
	}
	if !o.nextIf('R') {
		return nil
	}
	for !o.nextIf('r') {
		if !child(sig, o.genericRequirementOld(depth+1)) {
			return nil
		}
	}
	return sig
}

func (o *oldDemangler) genericRequirementOld(depth int) *node {
	ct := o.constrainedType(depth + 1)
	if ct == nil {
		return nil
	}
	if o.nextIf('z') {
		return o.with(kDependentGenericSameTypeRequirement, ct, o.oldType(depth+1))
	}
	if o.nextIf('l') {
		c := o.next()
		var size, align uint64
		hasSize, hasAlign := false, false
		switch c {
		case 'U', 'R', 'N', 'T', 'B':
		case 'E', 'M':
			var ok bool
			if size, ok = o.naturalOld(); !ok || !o.nextIf('_') {
				return nil
			}
			if align, ok = o.naturalOld(); !ok {
				return nil
			}
			hasSize, hasAlign = true, true
		case 'e', 'm', 'S':
			var ok bool
			if size, ok = o.naturalOld(); !ok {
				return nil
			}
			hasSize = true
		default:
			return nil
		}
		r := o.with(kDependentGenericLayoutRequirement, ct, o.textNode(kIdentifier, string(c)))
		if r != nil && hasSize {
			r.add(o.indexNode(kNumber, size))
			if hasAlign {
				r.add(o.indexNode(kNumber, align))
			}
		}
		return r
	}
	if o.empty() {
		return nil
	}
	var constraint *node
	switch o.peek() {
	case 'C':
		constraint = o.oldType(depth + 1)
	case 'S':
		o.pos++
		sub := o.substitutionIndex(depth + 1)
		var tn *node
		switch {
		case sub == nil:
			return nil
		case sub.kind == kProtocol || sub.kind == kClass:
			tn = sub
		case sub.kind == kModule:
			tn = o.protocolGivenContext(sub, depth+1)
		}
		constraint = o.typ(tn)
	default:
		constraint = o.protocolName(depth + 1)
	}
	return o.with(kDependentGenericConformanceRequirement, ct, constraint)
}

func (o *oldDemangler) archetypeType(depth int) *node {
	assoc := func(root *node) *node {
		r := o.with(kAssociatedTypeRef, root, o.identifier(depth+1, kNone))
		if r != nil {
			o.subs = append(o.subs, r)
		}
		return r
	}
	switch {
	case o.nextIf('Q'):
		root := o.archetypeType(depth + 1)
		if root == nil {
			return nil
		}
		return assoc(root)
	case o.nextIf('S'):
		sub := o.substitutionIndex(depth + 1)
		if sub == nil {
			return nil
		}
		return assoc(sub)
	case o.nextIf('s'):
		return assoc(o.textNode(kModule, "Swift"))
	}
	return nil
}

func (o *oldDemangler) tuple(variadic bool, depth int) *node {
	t := o.newNode(kTuple)
	if t == nil {
		return nil
	}
	var elt *node
	for !o.nextIf('_') {
		if o.empty() {
			return nil
		}
		elt = o.newNode(kTupleElement)
		if elt == nil {
			return nil
		}
		if c := o.peek(); isDigit(c) || c == 'o' {
			if !child(elt, o.identifier(depth+1, kTupleElementName)) {
				return nil
			}
		}
		if !child(elt, o.oldType(depth+1)) {
			return nil
		}
		t.add(elt)
	}
	if variadic && elt != nil {
		elt.children = append([]*node{o.newNode(kVariadicMarker)}, elt.children...)
		if elt.children[0] == nil {
			return nil
		}
	}
	return t
}

func (o *oldDemangler) oldType(depth int) *node {
	return o.typ(o.typeImpl(depth))
}

func (o *oldDemangler) functionTypeOld(k kind, depth int) *node {
	throws, concurrent, async := false, false, false
	var diff byte
	var actor *node
	if !o.empty() {
		throws = o.nextIf('z')
		concurrent = o.nextIf('y')
		async = o.nextIf('Z')
		if o.nextIf('D') {
			switch c := o.next(); c {
			case 'f', 'r', 'd', 'l':
				diff = c
			}
		}
		if o.nextIf('Y') {
			if actor = o.oldType(depth + 1); actor == nil {
				return nil
			}
		}
	}
	in := o.oldType(depth + 1)
	if in == nil {
		return nil
	}
	out := o.oldType(depth + 1)
	if out == nil {
		return nil
	}
	b := o.newNode(k)
	if b == nil {
		return nil
	}
	if throws {
		b.add(o.newNode(kThrowsAnnotation))
	}
	if async {
		b.add(o.newNode(kAsyncAnnotation))
	}
	if concurrent {
		b.add(o.newNode(kConcurrentFunctionType))
	}
	if diff != 0 {
		b.add(o.indexNode(kDifferentiableFunctionType, uint64(diff)))
	}
	if actor != nil {
		b.add(o.with(kGlobalActorFunctionType, actor))
	}
	if !child(b, o.with(kArgumentTuple, in)) || !child(b, o.with(kReturnType, out)) {
		return nil
	}
	return b
}

func (o *oldDemangler) builtinSize() (uint64, bool) {
	n, ok := o.naturalOld()
	return n, ok && o.nextIf('_')
}

func (o *oldDemangler) typeImpl(depth int) *node {
	if depth > oldMaxDepth || o.empty() {
		return nil
	}
	c := o.next()
	builtin := func(s string) *node { return o.textNode(kBuiltinTypeName, s) }
	switch c {
	case 'B':
		if o.empty() {
			return nil
		}
		switch o.next() {
		case 'b':
			return builtin("Builtin.BridgeObject")
		case 'B':
			return builtin("Builtin.UnsafeValueBuffer")
		case 'f':
			if n, ok := o.builtinSize(); ok {
				return builtin("Builtin.FPIEEE" + strconv.FormatUint(n, 10))
			}
		case 'i':
			if n, ok := o.builtinSize(); ok {
				return builtin("Builtin.Int" + strconv.FormatUint(n, 10))
			}
		case 'v':
			elts, ok := o.naturalOld()
			if !ok {
				return nil
			}
			if !o.nextIf('B') {
				return nil
			}
			pre := "Builtin.Vec" + strconv.FormatUint(elts, 10)
			switch {
			case o.nextIf('i'):
				n, ok := o.builtinSize()
				if !ok {
					return nil
				}
				return builtin(pre + "xInt" + strconv.FormatUint(n, 10))
			case o.nextIf('f'):
				n, ok := o.builtinSize()
				if !ok {
					return nil
				}
				return builtin(pre + "xFPIEEE" + strconv.FormatUint(n, 10))
			case o.nextIf('p'):
				return builtin(pre + "xRawPointer")
			}
		case 'O':
			return builtin("Builtin.UnknownObject")
		case 'o':
			return builtin("Builtin.NativeObject")
		case 'p':
			return builtin("Builtin.RawPointer")
		case 't':
			return builtin("Builtin.SILToken")
		case 'w':
			return builtin("Builtin.Word")
		}
		return nil
	case 'a':
		return o.declarationName(kTypeAlias, depth+1)
	case 'b':
		return o.functionTypeOld(kObjCBlock, depth+1)
	case 'c':
		return o.functionTypeOld(kCFunctionPointer, depth+1)
	case 'D':
		return o.with(kDynamicSelf, o.oldType(depth+1))
	case 'E':
		if !o.nextIfStr("RR") {
			return nil
		}
		return o.textNode(kErrorType, "")
	case 'F':
		return o.functionTypeOld(kFunctionType, depth+1)
	case 'f':
		return o.functionTypeOld(kUncurriedFunctionType, depth+1)
	case 'G':
		return o.boundGenericType(depth + 1)
	case 'K':
		return o.functionTypeOld(kAutoClosureType, depth+1)
	case 'M':
		return o.with(kMetatype, o.oldType(depth+1))
	case 'P':
		if o.nextIf('M') {
			return o.with(kExistentialMetatype, o.oldType(depth+1))
		}
		return o.protocolList(depth + 1)
	case 'Q':
		if o.nextIf('u') {
			return o.newNode(kOpaqueReturnType)
		}
		if o.nextIf('U') {
			i, ok := o.indexOld()
			if !ok {
				return nil
			}
			return o.with(kOpaqueReturnType, o.indexNode(kOpaqueReturnTypeIndex, i))
		}
		return o.archetypeType(depth + 1)
	case 'q':
		return o.dependentType(depth + 1)
	case 'x':
		return o.with(kDependentGenericParamType, o.indexNode(kIndex, 0), o.indexNode(kIndex, 0))
	case 'w':
		return o.assocTypeSimpleOld(depth + 1)
	case 'W':
		return o.assocTypeCompoundOld(depth + 1)
	case 'R':
		return o.with(kInOut, o.typeImpl(depth+1))
	case 'k':
		return o.with(kNoDerivative, o.typeImpl(depth+1))
	case 'S':
		return o.substitutionIndex(depth + 1)
	case 'T':
		return o.tuple(false, depth+1)
	case 't':
		return o.tuple(true, depth+1)
	case 'u':
		sig := o.genericSignatureOld(depth+1, false)
		if sig == nil {
			return nil
		}
		return o.with(kDependentGenericType, sig, o.oldType(depth+1))
	case 'X':
		return o.specialTypeOld(depth)
	case 'C', 'V', 'O':
		k := map[byte]kind{'C': kClass, 'V': kStructure, 'O': kEnum}[c]
		return o.declarationName(k, depth+1)
	}
	return nil
}

func (o *oldDemangler) specialTypeOld(depth int) *node {
	switch {
	case o.nextIf('b'):
		return o.with(kSILBoxType, o.oldType(depth+1))
	case o.nextIf('B'):
		var sig *node
		if o.nextIf('G') {
			if sig = o.genericSignatureOld(depth, false); sig == nil {
				return nil
			}
		}
		layout := o.newNode(kSILBoxLayout)
		if layout == nil {
			return nil
		}
		for !o.nextIf('_') {
			var k kind
			switch {
			case o.nextIf('m'):
				k = kSILBoxMutableField
			case o.nextIf('i'):
				k = kSILBoxImmutableField
			default:
				return nil
			}
			if !child(layout, o.with(k, o.oldType(depth+1))) {
				return nil
			}
		}
		var args *node
		if sig != nil {
			if args = o.newNode(kTypeList); args == nil {
				return nil
			}
			for !o.nextIf('_') {
				if !child(args, o.oldType(depth+1)) {
					return nil
				}
			}
		}
		box := o.with(kSILBoxTypeWithLayout, layout)
		if box != nil && sig != nil {
			box.add(sig)
			box.add(args)
		}
		return box
	case o.nextIf('M'):
		r := o.metatypeReprOld()
		if r == nil {
			return nil
		}
		return o.with(kMetatype, r, o.oldType(depth+1))
	case o.nextIf('P'):
		if o.nextIf('M') {
			r := o.metatypeReprOld()
			if r == nil {
				return nil
			}
			return o.with(kExistentialMetatype, r, o.oldType(depth+1))
		}
		return o.protocolList(depth + 1)
	case o.nextIf('f'):
		return o.functionTypeOld(kThinFunctionType, depth+1)
	case o.nextIf('o'):
		return o.with(kUnowned, o.oldType(depth+1))
	case o.nextIf('u'):
		return o.with(kUnmanaged, o.oldType(depth+1))
	case o.nextIf('w'):
		return o.with(kWeak, o.oldType(depth+1))
	case o.nextIf('F'):
		return o.implFunctionTypeOld(depth + 1)
	}
	return nil
}

func (o *oldDemangler) metatypeReprOld() *node {
	switch {
	case o.nextIf('t'):
		return o.textNode(kMetatypeRepresentation, "@thin")
	case o.nextIf('T'):
		return o.textNode(kMetatypeRepresentation, "@thick")
	case o.nextIf('o'):
		return o.textNode(kMetatypeRepresentation, "@objc_metatype")
	}
	return nil
}

func (o *oldDemangler) reabstractSignature(sig *node, depth int) bool {
	if o.nextIf('G') {
		if !child(sig, o.genericSignatureOld(depth+1, false)) {
			return false
		}
	}
	if !child(sig, o.oldType(depth+1)) { // source type
		return false
	}
	return child(sig, o.oldType(depth+1)) // destination type
}

const (
	convCallee = iota
	convParam
	convResult
)

func (o *oldDemangler) implConvention(ctx int) string {
	table := map[byte][3]string{
		'a': {"", "", "@autoreleased"},
		'd': {"@callee_unowned", "@unowned", "@unowned"},
		'D': {"", "", "@unowned_inner_pointer"},
		'g': {"@callee_guaranteed", "@guaranteed", ""},
		'e': {"", "@deallocating", ""},
		'i': {"", "@in", "@out"},
		'l': {"", "@inout", ""},
		'o': {"@callee_owned", "@owned", "@owned"},
	}
	if e, ok := table[o.peek()]; ok && !o.empty() {
		o.pos++
		return e[ctx]
	}
	return ""
}

func (o *oldDemangler) implFunctionTypeOld(depth int) *node {
	t := o.newNode(kImplFunctionType)
	if t == nil {
		return nil
	}
	var callee string
	if o.nextIf('t') {
		callee = "@convention(thin)"
	} else {
		callee = o.implConvention(convCallee)
	}
	if callee == "" {
		return nil
	}
	t.add(o.textNode(kImplConvention, callee))
	if o.nextIf('C') {
		var conv string
		switch {
		case o.nextIf('b'):
			conv = "block"
		case o.nextIf('c'):
			conv = "c"
		case o.nextIf('m'):
			conv = "method"
		case o.nextIf('O'):
			conv = "objc_method"
		case o.nextIf('w'):
			conv = "witness_method"
		default:
			return nil
		}
		t.add(o.with(kImplFunctionConvention, o.textNode(kImplFunctionConventionName, conv)))
	}
	if o.nextIf('h') {
		t.add(o.textNode(kImplFunctionAttribute, "@Sendable"))
	}
	if o.nextIf('H') {
		t.add(o.textNode(kImplFunctionAttribute, "@async"))
	}
	pseudo := false
	if o.nextIf('G') || func() bool { pseudo = o.nextIf('g'); return pseudo }() {
		if !child(t, o.genericSignatureOld(depth+1, pseudo)) {
			return nil
		}
	}
	if !o.nextIf('_') {
		return nil
	}
	for _, k := range []kind{kImplParameter, kImplResult} {
		for !o.nextIf('_') {
			kk := k
			if o.nextIf('z') {
				if k != kImplResult {
					return nil
				}
				kk = kImplErrorResult
			}
			ctx := convParam
			if k == kImplResult {
				ctx = convResult
			}
			conv := o.implConvention(ctx)
			if conv == "" {
				return nil
			}
			ty := o.oldType(depth + 1)
			if ty == nil {
				return nil
			}
			if !child(t, o.with(kk, o.textNode(kImplConvention, conv), ty)) {
				return nil
			}
		}
	}
	return t
}
