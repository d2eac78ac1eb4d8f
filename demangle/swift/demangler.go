package swift

import (
	"strconv"
	"strings"
)

// Limits that keep hostile input bounded: the name's length, the number
// of nodes one name may create, and the number of words remembered for
// word substitutions (Swift's own limit).
const (
	maxNameLen  = 16 << 10
	maxNodes    = 1 << 16
	maxWords    = 26
	maxRepeat   = 2048
	maxTypeSize = 4096
)

// demangler parses a mangled name into a tree: the grammar is postfix, so
// each operator pops its operands from a stack and pushes its result;
// substitutions refer back to earlier results.
type demangler struct {
	text     string
	pos      int
	stack    []*node
	subs     []*node
	words    []string
	oldTypes bool // "_T0": function labels inside the argument tuple
	nodes    int
	slab     []node  // nodes are cut from slabs: one allocation per 16
	kids     []*node // and child lists from a shared slice
	stackBuf [16]*node
}

func (d *demangler) peek() byte {
	if d.pos >= len(d.text) {
		return 0
	}
	return d.text[d.pos]
}

func (d *demangler) next() byte {
	if d.pos >= len(d.text) {
		return 0
	}
	d.pos++
	return d.text[d.pos-1]
}

func (d *demangler) nextIf(c byte) bool {
	if d.peek() != c || c == 0 {
		return false
	}
	d.pos++
	return true
}

func (d *demangler) nextIfStr(s string) bool {
	if !strings.HasPrefix(d.text[d.pos:], s) {
		return false
	}
	d.pos += len(s)
	return true
}

func (d *demangler) back() {
	if d.pos > 0 {
		d.pos--
	}
}

// newNode counts nodes; past maxNodes it returns nil, which fails the
// parse wherever a node is required.
func (d *demangler) newNode(k kind) *node {
	d.nodes++
	if d.nodes > maxNodes {
		return nil
	}
	if len(d.slab) == 0 {
		d.slab = make([]node, 16)
	}
	n := &d.slab[0]
	d.slab = d.slab[1:]
	n.kind = k
	return n
}

// childList returns room for n children, capped so that a later add
// copies instead of overwriting a neighbour's list.
func (d *demangler) childList(n int) []*node {
	if cap(d.kids)-len(d.kids) < n {
		d.kids = make([]*node, 0, max(32, n))
	}
	l := len(d.kids)
	d.kids = d.kids[:l+n]
	return d.kids[l : l+n : l+n]
}

func (d *demangler) textNode(k kind, s string) *node {
	n := d.newNode(k)
	if n != nil {
		n.hasText, n.text = true, s
	}
	return n
}

func (d *demangler) indexNode(k kind, i uint64) *node {
	n := d.newNode(k)
	if n != nil {
		n.hasIndex, n.index = true, i
	}
	return n
}

// with returns a node of kind k with children cs, or nil if any is nil.
func (d *demangler) with(k kind, cs ...*node) *node {
	for _, c := range cs {
		if c == nil {
			return nil
		}
	}
	n := d.newNode(k)
	if n != nil {
		n.children = d.childList(len(cs))
		copy(n.children, cs)
	}
	return n
}

func (d *demangler) typ(c *node) *node { return d.with(kType, c) }

// addChild adds c to p, and is nil if either is.
func addChild(p, c *node) *node {
	if p == nil || c == nil {
		return nil
	}
	p.add(c)
	return p
}

func (d *demangler) push(n *node) { d.stack = append(d.stack, n) }

func (d *demangler) pop() *node {
	if len(d.stack) == 0 {
		return nil
	}
	n := d.stack[len(d.stack)-1]
	d.stack = d.stack[:len(d.stack)-1]
	return n
}

func (d *demangler) popKind(k kind) *node {
	if len(d.stack) == 0 || d.stack[len(d.stack)-1].kind != k {
		return nil
	}
	return d.pop()
}

func (d *demangler) popIf(f func(kind) bool) *node {
	if len(d.stack) == 0 || !f(d.stack[len(d.stack)-1].kind) {
		return nil
	}
	return d.pop()
}

func (d *demangler) addSubst(n *node) {
	if n != nil {
		d.subs = append(d.subs, n)
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

// prefixLen is the length of the mangling prefix of s, 0 if none.
func prefixLen(s string) int {
	for _, p := range []string{"_T0", "$S", "_$S", "$s", "_$s", "$e", "_$e", "@__swiftmacro_"} {
		if strings.HasPrefix(s, p) {
			return len(p)
		}
	}
	return 0
}

// demangleSymbol parses a whole symbol name into a Global node.
func demangleSymbol(s string) *node {
	if len(s) > maxNameLen {
		return nil
	}
	if strings.HasPrefix(s, "_Tt") || (strings.HasPrefix(s, "_T") && prefixLen(s) == 0) {
		return demangleOld(s)
	}
	n := prefixLen(s)
	if n == 0 {
		return nil
	}
	d := &demangler{text: s, pos: n, oldTypes: strings.HasPrefix(s, "_T")}
	d.stack = d.stackBuf[:0]
	for d.pos < len(d.text) {
		if d.peek() == 0 {
			break
		}
		nd := d.operator()
		if nd == nil {
			return nil
		}
		d.push(nd)
	}
	top := d.newNode(kGlobal)
	if top == nil {
		return nil
	}
	suffix := d.popKind(kSuffix)
	parent := top
	for {
		attr := d.popIf(isFunctionAttr)
		if attr == nil {
			break
		}
		parent.add(attr)
		if attr.kind == kPartialApplyForwarder || attr.kind == kPartialApplyObjCForwarder {
			parent = attr
		}
	}
	for _, nd := range d.stack {
		if nd.kind == kType {
			parent.add(nd.first())
		} else {
			parent.add(nd)
		}
	}
	if suffix != nil {
		top.add(suffix)
	}
	if len(top.children) == 0 {
		return nil
	}
	return top
}

func isFunctionAttr(k kind) bool {
	switch k {
	case kFunctionSignatureSpecialization, kGenericSpecialization, kGenericSpecializationPrespecialized,
		kInlinedGenericFunction, kGenericSpecializationNotReAbstracted, kGenericPartialSpecialization,
		kGenericPartialSpecializationNotReAbstracted, kGenericSpecializationInResilienceDomain,
		kObjCAttribute, kNonObjCAttribute, kDynamicAttribute, kDirectMethodReferenceAttribute,
		kVTableAttribute, kPartialApplyForwarder, kPartialApplyObjCForwarder, kOutlinedVariable,
		kOutlinedReadOnlyObject, kOutlinedBridgedMethod, kMergedFunction, kDistributedThunk,
		kDistributedAccessor, kDynamicallyReplaceableFunctionImpl, kDynamicallyReplaceableFunctionKey,
		kDynamicallyReplaceableFunctionVar, kAsyncFunctionPointer, kAsyncAwaitResumePartialFunction,
		kAsyncSuspendResumePartialFunction, kAccessibleFunctionRecord, kBackDeploymentThunk,
		kBackDeploymentFallback, kHasSymbolQuery, kCoroFunctionPointer, kDefaultOverride:
		return true
	}
	return false
}

func isDeclName(k kind) bool {
	switch k {
	case kIdentifier, kLocalDeclName, kPrivateDeclName, kRelatedEntityDeclName, kPrefixOperator,
		kPostfixOperator, kInfixOperator, kTypeSymbolicReference, kProtocolSymbolicReference,
		kObjectiveCProtocolSymbolicReference:
		return true
	}
	return false
}

func isAnyGeneric(k kind) bool {
	switch k {
	case kStructure, kClass, kEnum, kProtocol, kProtocolSymbolicReference,
		kObjectiveCProtocolSymbolicReference, kOtherNominalType, kTypeAlias,
		kTypeSymbolicReference, kBuiltinTupleType:
		return true
	}
	return false
}

func isEntity(k kind) bool { return k == kType || isContext(k) }

func isRequirement(k kind) bool {
	switch k {
	case kDependentGenericParamPackMarker, kDependentGenericParamValueMarker,
		kDependentGenericSameTypeRequirement, kDependentGenericSameShapeRequirement,
		kDependentGenericLayoutRequirement, kDependentGenericConformanceRequirement,
		kDependentGenericInverseConformanceRequirement:
		return true
	}
	return false
}

func isProtocolNode(n *node) bool {
	for n != nil {
		switch n.kind {
		case kType:
			n = n.first()
			continue
		case kProtocol, kProtocolSymbolicReference, kObjectiveCProtocolSymbolicReference:
			return true
		}
		return false
	}
	return false
}

func (d *demangler) operator() *node {
	for {
		c := d.next()
		switch c {
		case 0xff:
			continue
		case 1, 2, 3, 4, 5, 6, 7, 8, 9, 0xa, 0xb, 0xc:
			// Symbolic references point into a binary; without it
			// they cannot be resolved (swift demangle fails too).
			return nil
		case 'A':
			return d.multiSubstitutions()
		case 'B':
			return d.builtinType()
		case 'C':
			return d.anyGenericType(kClass)
		case 'D':
			return d.typeMangling()
		case 'E':
			return d.extensionContext()
		case 'F':
			return d.plainFunction()
		case 'G':
			return d.boundGenericType()
		case 'H':
			switch d.next() {
			case 'A':
				return d.dependentConformanceAssociated()
			case 'C':
				return d.concreteConformance()
			case 'D':
				return d.dependentConformanceRoot()
			case 'I':
				return d.dependentConformanceInherited()
			case 'O':
				return d.dependentConformanceOpaque()
			case 'P':
				return d.with(kProtocolConformanceRefInTypeModule, d.popProtocol())
			case 'p':
				return d.with(kProtocolConformanceRefInProtocolModule, d.popProtocol())
			case 'X':
				return d.with(kPackProtocolConformance, d.popAnyConformanceList())
			case 'c':
				return d.with(kProtocolConformanceDescriptorRecord, d.popProtocolConformance())
			case 'n':
				return d.with(kNominalTypeDescriptorRecord, d.popKind(kType))
			case 'o':
				return d.with(kOpaqueTypeDescriptorRecord, d.pop())
			case 'r':
				return d.with(kProtocolDescriptorRecord, d.popProtocol())
			case 'F':
				return d.newNode(kAccessibleFunctionRecord)
			default:
				d.back()
				d.back()
				return d.identifier()
			}
		case 'I':
			return d.implFunctionType()
		case 'K':
			return d.newNode(kThrowsAnnotation)
		case 'L':
			return d.localIdentifier()
		case 'M':
			return d.metatype()
		case 'N':
			return d.with(kTypeMetadata, d.popKind(kType))
		case 'O':
			return d.anyGenericType(kEnum)
		case 'P':
			return d.anyGenericType(kProtocol)
		case 'Q':
			return d.archetype()
		case 'R':
			return d.genericRequirement()
		case 'S':
			return d.standardSubstitution()
		case 'T':
			return d.thunkOrSpecialization()
		case 'V':
			return d.anyGenericType(kStructure)
		case 'W':
			return d.witness()
		case 'X':
			return d.specialType()
		case 'Y':
			return d.typeAnnotation()
		case 'Z':
			return d.with(kStatic, d.popIf(isEntity))
		case 'a':
			return d.anyGenericType(kTypeAlias)
		case 'c':
			return d.popFunctionType(kFunctionType, false)
		case 'd':
			return d.newNode(kVariadicMarker)
		case 'f':
			return d.functionEntity()
		case 'g':
			idx := d.indexAsNode()
			return d.with(kRetroactiveConformance, idx, d.popAnyConformance())
		case 'h':
			return d.typ(d.with(kShared, d.popTypeChild()))
		case 'i':
			return d.subscript()
		case 'l':
			return d.genericSignature(false)
		case 'm':
			return d.typ(d.with(kMetatype, d.popKind(kType)))
		case 'n':
			return d.typ(d.with(kOwned, d.popTypeChild()))
		case 'o':
			return d.operatorIdentifier()
		case 'p':
			return d.typ(d.protocolList())
		case 'q':
			return d.typ(d.genericParamIndex())
		case 'r':
			return d.genericSignature(true)
		case 's':
			return d.textNode(kModule, "Swift")
		case 't':
			return d.popTuple()
		case 'u':
			sig := d.popKind(kDependentGenericSignature)
			return d.typ(d.with(kDependentGenericType, sig, d.popKind(kType)))
		case 'v':
			return d.accessor(d.entity(kVariable))
		case 'w':
			return d.valueWitness()
		case 'x':
			return d.typ(d.genericParam(0, 0))
		case 'y':
			return d.newNode(kEmptyList)
		case 'z':
			return d.typ(d.with(kInOut, d.popTypeChild()))
		case '_':
			return d.newNode(kFirstElementMarker)
		case '.':
			d.back()
			s := d.text[d.pos:]
			d.pos = len(d.text)
			return d.textNode(kSuffix, s)
		case '$':
			return d.integerType()
		default:
			d.back()
			return d.identifier()
		}
	}
}

func (d *demangler) natural() int {
	if !isDigit(d.peek()) {
		return -1000
	}
	n := 0
	for isDigit(d.peek()) {
		m := n*10 + int(d.next()-'0')
		if m < n || m > 1<<31-1 {
			return -1000
		}
		n = m
	}
	return n
}

func (d *demangler) index() int {
	if d.nextIf('_') {
		return 0
	}
	n := d.natural()
	if n >= 0 && d.nextIf('_') {
		return n + 1
	}
	return -1000
}

func (d *demangler) indexAsNode() *node {
	i := d.index()
	if i < 0 {
		return nil
	}
	return d.indexNode(kNumber, uint64(i))
}

func (d *demangler) multiSubstitutions() *node {
	repeat := -1
	for {
		c := d.next()
		switch {
		case c == 0:
			return nil
		case isLower(c):
			n := d.pushMultiSubst(repeat, int(c-'a'))
			if n == nil {
				return nil
			}
			d.push(n)
			repeat = -1
			continue
		case isUpper(c):
			return d.pushMultiSubst(repeat, int(c-'A'))
		case c == '_':
			i := repeat + 27
			if i < 0 || i >= len(d.subs) {
				return nil
			}
			return d.subs[i]
		}
		d.back()
		repeat = d.natural()
		if repeat < 0 {
			return nil
		}
	}
}

func (d *demangler) pushMultiSubst(repeat, i int) *node {
	if i >= len(d.subs) || repeat > maxRepeat {
		return nil
	}
	n := d.subs[i]
	for ; repeat > 1; repeat-- {
		d.push(n)
	}
	return n
}

func (d *demangler) swiftType(k kind, name string) *node {
	return d.typ(d.with(k, d.textNode(kModule, "Swift"), d.textNode(kIdentifier, name)))
}

type stdType struct {
	k    kind
	name string
}

var stdTypes = map[byte]stdType{
	'A': {kStructure, "AutoreleasingUnsafeMutablePointer"}, 'a': {kStructure, "Array"},
	'b': {kStructure, "Bool"}, 'D': {kStructure, "Dictionary"}, 'd': {kStructure, "Double"},
	'f': {kStructure, "Float"}, 'h': {kStructure, "Set"}, 'I': {kStructure, "DefaultIndices"},
	'i': {kStructure, "Int"}, 'J': {kStructure, "Character"}, 'N': {kStructure, "ClosedRange"},
	'n': {kStructure, "Range"}, 'O': {kStructure, "ObjectIdentifier"}, 'P': {kStructure, "UnsafePointer"},
	'p': {kStructure, "UnsafeMutablePointer"}, 'R': {kStructure, "UnsafeBufferPointer"},
	'r': {kStructure, "UnsafeMutableBufferPointer"}, 'S': {kStructure, "String"},
	's': {kStructure, "Substring"}, 'u': {kStructure, "UInt"}, 'V': {kStructure, "UnsafeRawPointer"},
	'v': {kStructure, "UnsafeMutableRawPointer"}, 'W': {kStructure, "UnsafeRawBufferPointer"},
	'w': {kStructure, "UnsafeMutableRawBufferPointer"}, 'q': {kEnum, "Optional"},
	'B': {kProtocol, "BinaryFloatingPoint"}, 'E': {kProtocol, "Encodable"}, 'e': {kProtocol, "Decodable"},
	'F': {kProtocol, "FloatingPoint"}, 'G': {kProtocol, "RandomNumberGenerator"}, 'H': {kProtocol, "Hashable"},
	'j': {kProtocol, "Numeric"}, 'K': {kProtocol, "BidirectionalCollection"},
	'k': {kProtocol, "RandomAccessCollection"}, 'L': {kProtocol, "Comparable"}, 'l': {kProtocol, "Collection"},
	'M': {kProtocol, "MutableCollection"}, 'm': {kProtocol, "RangeReplaceableCollection"},
	'Q': {kProtocol, "Equatable"}, 'T': {kProtocol, "Sequence"}, 't': {kProtocol, "IteratorProtocol"},
	'U': {kProtocol, "UnsignedInteger"}, 'X': {kProtocol, "RangeExpression"}, 'x': {kProtocol, "Strideable"},
	'Y': {kProtocol, "RawRepresentable"}, 'y': {kProtocol, "StringProtocol"}, 'Z': {kProtocol, "SignedInteger"},
	'z': {kProtocol, "BinaryInteger"},
}

// concurrencyTypes are the second-level standard substitutions ("Sc").
var concurrencyTypes = map[byte]stdType{
	'A': {kProtocol, "Actor"}, 'C': {kStructure, "CheckedContinuation"}, 'c': {kStructure, "UnsafeContinuation"},
	'E': {kStructure, "CancellationError"}, 'e': {kStructure, "UnownedSerialExecutor"}, 'F': {kProtocol, "Executor"},
	'f': {kProtocol, "SerialExecutor"}, 'G': {kStructure, "TaskGroup"}, 'g': {kStructure, "ThrowingTaskGroup"},
	'h': {kProtocol, "TaskExecutor"}, 'I': {kProtocol, "AsyncIteratorProtocol"}, 'i': {kProtocol, "AsyncSequence"},
	'J': {kStructure, "UnownedJob"}, 'M': {kClass, "MainActor"}, 'P': {kStructure, "TaskPriority"},
	'S': {kStructure, "AsyncStream"}, 's': {kStructure, "AsyncThrowingStream"}, 'T': {kStructure, "Task"},
	't': {kStructure, "UnsafeCurrentTask"},
}

func (d *demangler) standardSubstitution() *node {
	switch d.next() {
	case 'o':
		return d.textNode(kModule, "__C")
	case 'C':
		return d.textNode(kModule, "__C_Synthesized")
	case 'g':
		opt := d.typ(d.with(kBoundGenericEnum, d.swiftType(kEnum, "Optional"),
			d.with(kTypeList, d.popKind(kType))))
		d.addSubst(opt)
		return opt
	}
	d.back()
	repeat := d.natural()
	if repeat > maxRepeat {
		return nil
	}
	table := stdTypes
	if d.nextIf('c') {
		table = concurrencyTypes
	}
	t, ok := table[d.next()]
	if !ok {
		return nil
	}
	n := d.swiftType(t.k, t.name)
	for ; repeat > 1; repeat-- {
		d.push(n)
	}
	return n
}

func isWordStart(c byte) bool { return !isDigit(c) && c != '_' && c != 0 }
func isWordEnd(c, prev byte) bool {
	return c == '_' || c == 0 || !isUpper(prev) && isUpper(c)
}

func (d *demangler) identifier() *node {
	words, puny := false, false
	c := d.peek()
	if !isDigit(c) {
		return nil
	}
	if c == '0' {
		d.next()
		if d.peek() == '0' {
			d.next()
			puny = true
		} else {
			words = true
		}
	}
	var id strings.Builder
	for {
		for words && (isLower(d.peek()) || isUpper(d.peek())) {
			c := d.next()
			var w int
			if isLower(c) {
				w = int(c - 'a')
			} else {
				w = int(c - 'A')
				words = false
			}
			if w >= len(d.words) {
				return nil
			}
			id.WriteString(d.words[w])
		}
		if d.nextIf('0') {
			break
		}
		n := d.natural()
		if n <= 0 {
			return nil
		}
		if puny {
			d.nextIf('_')
		}
		if n > len(d.text)-d.pos {
			return nil
		}
		s := d.text[d.pos : d.pos+n]
		if puny {
			u, ok := punycode(s)
			if !ok {
				return nil
			}
			id.WriteString(u)
		} else {
			id.WriteString(s)
			start := -1
			for i := 0; i <= len(s); i++ {
				var c byte
				if i < len(s) {
					c = s[i]
				}
				if start >= 0 && isWordEnd(c, s[i-1]) {
					if i-start >= 2 && len(d.words) < maxWords {
						d.words = append(d.words, s[start:i])
					}
					start = -1
				}
				if start < 0 && isWordStart(c) {
					start = i
				}
			}
		}
		d.pos += n
		if !words {
			break
		}
	}
	if id.Len() == 0 {
		return nil
	}
	n := d.textNode(kIdentifier, id.String())
	d.addSubst(n)
	return n
}

func (d *demangler) operatorIdentifier() *node {
	id := d.popKind(kIdentifier)
	if id == nil {
		return nil
	}
	const table = "& @/= >    <*!|+?%-~   ^ ."
	var op strings.Builder
	for i := 0; i < len(id.text); i++ {
		c := id.text[i]
		if c >= 0x80 {
			op.WriteByte(c)
			continue
		}
		if !isLower(c) || table[c-'a'] == ' ' {
			return nil
		}
		op.WriteByte(table[c-'a'])
	}
	switch d.next() {
	case 'i':
		return d.textNode(kInfixOperator, op.String())
	case 'p':
		return d.textNode(kPrefixOperator, op.String())
	case 'P':
		return d.textNode(kPostfixOperator, op.String())
	}
	return nil
}

func (d *demangler) localIdentifier() *node {
	if d.nextIf('L') {
		disc := d.popKind(kIdentifier)
		return d.with(kPrivateDeclName, disc, d.popIf(isDeclName))
	}
	if d.nextIf('l') {
		return d.with(kPrivateDeclName, d.popKind(kIdentifier))
	}
	if c := d.peek(); c >= 'a' && c <= 'j' || c >= 'A' && c <= 'J' {
		d.next()
		kindNd := d.textNode(kIdentifier, string(c))
		r := d.newNode(kRelatedEntityDeclName)
		r = addChild(r, kindNd)
		return addChild(r, d.pop())
	}
	disc := d.indexAsNode()
	return d.with(kLocalDeclName, disc, d.popIf(isDeclName))
}

func (d *demangler) popModule() *node {
	if id := d.popKind(kIdentifier); id != nil {
		return d.changeKind(id, kModule)
	}
	return d.popKind(kModule)
}

func (d *demangler) changeKind(n *node, k kind) *node {
	if n == nil {
		return nil
	}
	m := d.newNode(k)
	if m == nil {
		return nil
	}
	m.hasText, m.text, m.hasIndex, m.index = n.hasText, n.text, n.hasIndex, n.index
	m.children = append(m.children, n.children...)
	return m
}

func (d *demangler) popContext() *node {
	if m := d.popModule(); m != nil {
		return m
	}
	if t := d.popKind(kType); t != nil {
		if t.numChildren() != 1 || !isContext(t.first().kind) {
			return nil
		}
		return t.first()
	}
	return d.popIf(isContext)
}

func (d *demangler) popTypeChild() *node {
	t := d.popKind(kType)
	if t == nil || t.numChildren() != 1 {
		return nil
	}
	return t.first()
}

func (d *demangler) builtinType() *node {
	var t *node
	named := func(s string) { t = d.textNode(kBuiltinTypeName, s) }
	switch d.next() {
	case 'A':
		named("Builtin.ImplicitActor")
	case 'b':
		named("Builtin.BridgeObject")
	case 'B':
		named("Builtin.UnsafeValueBuffer")
	case 'e':
		named("Builtin.Executor")
	case 'f':
		size := d.index() - 1
		if size <= 0 || size > maxTypeSize {
			return nil
		}
		named("Builtin.FPIEEE" + strconv.Itoa(size))
	case 'i':
		size := d.index() - 1
		if size <= 0 || size > maxTypeSize {
			return nil
		}
		named("Builtin.Int" + strconv.Itoa(size))
	case 'I':
		named("Builtin.IntLiteral")
	case 'v':
		elts := d.index() - 1
		if elts <= 0 || elts > maxTypeSize {
			return nil
		}
		e := d.popTypeChild()
		if e == nil || e.kind != kBuiltinTypeName || !strings.HasPrefix(e.text, "Builtin.") {
			return nil
		}
		named("Builtin.Vec" + strconv.Itoa(elts) + "x" + e.text[len("Builtin."):])
	case 'V':
		elem := d.popKind(kType)
		if elem == nil {
			return nil
		}
		size := d.popKind(kType)
		if size == nil {
			return nil
		}
		t = d.with(kBuiltinFixedArray, size, elem)
	case 'O':
		named("Builtin.UnknownObject")
	case 'o':
		named("Builtin.NativeObject")
	case 'p':
		named("Builtin.RawPointer")
	case 'j':
		named("Builtin.Job")
	case 'D':
		named("Builtin.DefaultActorStorage")
	case 'd':
		named("Builtin.NonDefaultDistributedActorStorage")
	case 'c':
		named("Builtin.RawUnsafeContinuation")
	case 't':
		named("Builtin.SILToken")
	case 'w':
		named("Builtin.Word")
	case 'P':
		named("Builtin.PackIndex")
	case 'T':
		t = d.newNode(kBuiltinTupleType)
	default:
		return nil
	}
	return d.typ(t)
}

func (d *demangler) anyGenericType(k kind) *node {
	name := d.popIf(isDeclName)
	ctx := d.popContext()
	t := d.typ(d.with(k, ctx, name))
	d.addSubst(t)
	return t
}

func (d *demangler) extensionContext() *node {
	sig := d.popKind(kDependentGenericSignature)
	mod := d.popModule()
	t := d.popTypeChild()
	if t == nil || !isAnyGeneric(t.kind) {
		t = nil
	}
	ext := d.with(kExtension, mod, t)
	if sig != nil {
		ext = addChild(ext, sig)
	}
	return ext
}

func (d *demangler) typeMangling() *node {
	t := d.popKind(kType)
	labels := d.popFunctionParamLabels(t)
	tm := d.newNode(kTypeMangling)
	if tm != nil && labels != nil {
		tm.add(labels)
	}
	return addChild(tm, t)
}

func (d *demangler) plainFunction() *node {
	sig := d.popKind(kDependentGenericSignature)
	t := d.popFunctionType(kFunctionType, false)
	labels := d.popFunctionParamLabels(t)
	if sig != nil {
		t = d.typ(d.with(kDependentGenericType, sig, t))
	}
	name := d.popIf(isDeclName)
	ctx := d.popContext()
	if labels != nil {
		return d.with(kFunction, ctx, name, labels, t)
	}
	return d.with(kFunction, ctx, name, t)
}

func (d *demangler) popFunctionType(k kind, clang bool) *node {
	f := d.newNode(k)
	if f == nil {
		return nil
	}
	if clang {
		ct := d.clangType()
		if ct == nil {
			return nil
		}
		f.add(ct)
	}
	f.add(d.popKind(kSendingResultFunctionType))
	f.add(d.popIf(func(k kind) bool {
		return k == kGlobalActorFunctionType || k == kIsolatedAnyFunctionType || k == kNonIsolatedCallerFunctionType
	}))
	f.add(d.popKind(kDifferentiableFunctionType))
	f.add(d.popIf(func(k kind) bool { return k == kThrowsAnnotation || k == kTypedThrowsAnnotation }))
	f.add(d.popKind(kConcurrentFunctionType))
	f.add(d.popKind(kAsyncAnnotation))
	f = addChild(f, d.popFunctionParams(kArgumentTuple))
	f = addChild(f, d.popFunctionParams(kReturnType))
	return d.typ(f)
}

func (d *demangler) popFunctionParams(k kind) *node {
	var p *node
	if d.popKind(kEmptyList) != nil {
		p = d.typ(d.newNode(kTuple))
	} else {
		p = d.popKind(kType)
	}
	return d.with(k, p)
}

func (d *demangler) popFunctionParamLabels(t *node) *node {
	if !d.oldTypes && d.popKind(kEmptyList) != nil {
		return d.newNode(kLabelList)
	}
	if t == nil || t.kind != kType {
		return nil
	}
	f := t.first()
	if f.is(kDependentGenericType) {
		f = f.child(1).first()
	}
	if f == nil || f.kind != kFunctionType && f.kind != kNoEscapeFunctionType {
		return nil
	}
	i := 0
	for _, k := range []kind{kSendingResultFunctionType, kGlobalActorFunctionType, kIsolatedAnyFunctionType,
		kNonIsolatedCallerFunctionType, kDifferentiableFunctionType} {
		if f.child(i).is(k) {
			i++
		}
	}
	if f.child(i).is(kThrowsAnnotation) || f.child(i).is(kTypedThrowsAnnotation) {
		i++
	}
	if f.child(i).is(kConcurrentFunctionType) {
		i++
	}
	if f.child(i).is(kAsyncAnnotation) {
		i++
	}
	argTuple := f.child(i)
	if !argTuple.is(kArgumentTuple) {
		return nil
	}
	params := argTuple.first().first()
	if params == nil {
		return nil
	}
	num := 1
	if params.kind == kTuple {
		num = params.numChildren()
	}
	if num == 0 {
		return nil
	}
	labels := d.newNode(kLabelList)
	if labels == nil {
		return nil
	}
	tuple := params
	if d.oldTypes && tuple.kind != kTuple {
		return labels
	}
	hasLabels := false
	for i := 0; i < num; i++ {
		var l *node
		if d.oldTypes {
			p := tuple.child(i)
			if p == nil {
				return nil
			}
			l = d.newNode(kFirstElementMarker)
			for j, c := range p.children {
				if c.kind == kTupleElementName {
					p.children = append(p.children[:j:j], p.children[j+1:]...)
					l = d.textNode(kIdentifier, c.text)
					break
				}
			}
		} else {
			l = d.pop()
		}
		if l == nil || l.kind != kIdentifier && l.kind != kFirstElementMarker {
			return nil
		}
		labels.add(l)
		hasLabels = hasLabels || l.kind != kFirstElementMarker
	}
	if !hasLabels {
		return d.newNode(kLabelList)
	}
	if !d.oldTypes {
		labels.reverseFrom(0)
	}
	return labels
}

// popList pops a list of items up to an EmptyList or FirstElementMarker
// (the grammar's "list ::= item '_' item*" or "y"), in order.
func (d *demangler) popList(k kind, item func() *node) *node {
	root := d.newNode(k)
	if root == nil {
		return nil
	}
	if d.popKind(kEmptyList) != nil {
		return root
	}
	for {
		first := d.popKind(kFirstElementMarker) != nil
		it := item()
		if it == nil {
			return nil
		}
		root.add(it)
		if first {
			break
		}
	}
	root.reverseFrom(0)
	return root
}

func (d *demangler) popTuple() *node {
	root := d.popList(kTuple, func() *node {
		e := d.newNode(kTupleElement)
		if e == nil {
			return nil
		}
		e.add(d.popKind(kVariadicMarker))
		if id := d.popKind(kIdentifier); id != nil {
			e.add(d.textNode(kTupleElementName, id.text))
		}
		t := d.popKind(kType)
		if t == nil {
			return nil
		}
		e.add(t)
		return e
	})
	return d.typ(root)
}

func (d *demangler) popTypeList() *node {
	return d.popList(kTypeList, func() *node { return d.popKind(kType) })
}

func (d *demangler) popProtocol() *node {
	if t := d.popKind(kType); t != nil {
		if t.numChildren() < 1 || !isProtocolNode(t) {
			return nil
		}
		return t
	}
	if r := d.popKind(kProtocolSymbolicReference); r != nil {
		return r
	}
	if r := d.popKind(kObjectiveCProtocolSymbolicReference); r != nil {
		return r
	}
	name := d.popIf(isDeclName)
	ctx := d.popContext()
	return d.typ(d.with(kProtocol, ctx, name))
}

func isAnyConformance(k kind) bool {
	switch k {
	case kConcreteProtocolConformance, kPackProtocolConformance, kDependentProtocolConformanceRoot,
		kDependentProtocolConformanceInherited, kDependentProtocolConformanceAssociated,
		kDependentProtocolConformanceOpaque:
		return true
	}
	return false
}

func (d *demangler) popAnyConformance() *node { return d.popIf(isAnyConformance) }

func (d *demangler) popAnyConformanceList() *node {
	return d.popList(kAnyProtocolConformanceList, d.popAnyConformance)
}

func (d *demangler) concreteConformance() *node {
	cond := d.popAnyConformanceList()
	ref := d.popKind(kProtocolConformanceRefInTypeModule)
	if ref == nil {
		ref = d.popKind(kProtocolConformanceRefInProtocolModule)
	}
	if ref == nil {
		mod := d.popModule()
		proto := d.popProtocol()
		ref = d.with(kProtocolConformanceRefInOtherModule, proto, mod)
	}
	t := d.popKind(kType)
	return d.with(kConcreteProtocolConformance, t, ref, cond)
}

func (d *demangler) popDependentConformance() *node {
	return d.popIf(func(k kind) bool {
		return k == kDependentProtocolConformanceRoot || k == kDependentProtocolConformanceInherited ||
			k == kDependentProtocolConformanceAssociated
	})
}

func (d *demangler) conformanceIndex() *node {
	i := d.index()
	if i <= 0 {
		return nil
	}
	if i == 1 {
		return d.newNode(kUnknownIndex)
	}
	return d.indexNode(kIndex, uint64(i-2))
}

func (d *demangler) dependentConformanceRoot() *node {
	idx := d.conformanceIndex()
	proto := d.popProtocol()
	t := d.popKind(kType)
	return d.with(kDependentProtocolConformanceRoot, t, proto, idx)
}

func (d *demangler) dependentConformanceInherited() *node {
	idx := d.conformanceIndex()
	proto := d.popProtocol()
	nested := d.popDependentConformance()
	return d.with(kDependentProtocolConformanceInherited, nested, proto, idx)
}

func (d *demangler) dependentConformanceAssociated() *node {
	idx := d.conformanceIndex()
	proto := d.popProtocol()
	t := d.popKind(kType)
	assoc := d.with(kDependentAssociatedConformance, t, proto)
	nested := d.popDependentConformance()
	return d.with(kDependentProtocolConformanceAssociated, nested, assoc, idx)
}

func (d *demangler) dependentConformanceOpaque() *node {
	t := d.popKind(kType)
	c := d.popDependentConformance()
	return d.with(kDependentProtocolConformanceOpaque, c, t)
}

func (d *demangler) popRetroactiveConformances() *node {
	var list *node
	for {
		c := d.popKind(kRetroactiveConformance)
		if c == nil {
			break
		}
		if list == nil {
			list = d.newNode(kTypeList)
			if list == nil {
				return nil
			}
		}
		list.add(c)
	}
	if list != nil {
		list.reverseFrom(0)
	}
	return list
}

// boundGenerics pops the type lists of a bound generic type, innermost
// first in the stack, outermost first in the result.
func (d *demangler) boundGenerics() (lists []*node, retro *node, ok bool) {
	retro = d.popRetroactiveConformances()
	for {
		l := d.newNode(kTypeList)
		if l == nil {
			return nil, nil, false
		}
		lists = append(lists, l)
		for t := d.popKind(kType); t != nil; t = d.popKind(kType) {
			l.add(t)
		}
		l.reverseFrom(0)
		if d.popKind(kEmptyList) != nil {
			break
		}
		if d.popKind(kFirstElementMarker) == nil {
			return nil, nil, false
		}
	}
	return lists, retro, true
}

func (d *demangler) boundGenericType() *node {
	lists, retro, ok := d.boundGenerics()
	if !ok {
		return nil
	}
	nom := d.popTypeChild()
	if nom == nil || !isAnyGeneric(nom.kind) {
		return nil
	}
	b := d.boundGenericArgs(nom, lists, 0, 0)
	if b == nil {
		return nil
	}
	if retro != nil {
		b.add(retro)
	}
	t := d.typ(b)
	d.addSubst(t)
	return t
}

func consumesGenericArgs(n *node) bool {
	switch n.kind {
	case kVariable, kSubscript, kImplicitClosure, kExplicitClosure, kDefaultArgumentInitializer,
		kInitializer, kPropertyWrapperBackingInitializer, kPropertyWrapperInitFromProjectedValue, kStatic:
		return false
	}
	return true
}

func (d *demangler) boundGenericArgs(nom *node, lists []*node, i, depth int) *node {
	if nom == nil || i >= len(lists) || depth > 256 {
		return nil
	}
	if nom.kind == kTypeSymbolicReference || nom.kind == kProtocolSymbolicReference {
		rest := d.newNode(kTypeList)
		if rest == nil {
			return nil
		}
		for j := len(lists) - 1; j >= i; j-- {
			rest.children = append(rest.children, lists[j].children...)
		}
		return d.with(kBoundGenericOtherNominalType, d.typ(nom), rest)
	}
	if nom.numChildren() == 0 {
		return nil
	}
	ctx := nom.first()
	consumes := consumesGenericArgs(nom)
	args := lists[i]
	if consumes {
		i++
	}
	if i < len(lists) {
		var parent *node
		if ctx.kind == kExtension {
			parent = d.boundGenericArgs(ctx.child(1), lists, i, depth+1)
			parent = d.with(kExtension, ctx.first(), parent)
			if ctx.numChildren() == 3 {
				parent = addChild(parent, ctx.child(2))
			}
		} else {
			parent = d.boundGenericArgs(ctx, lists, i, depth+1)
		}
		nn := d.with(nom.kind, parent)
		if nn == nil {
			return nil
		}
		nn.children = append(nn.children, nom.children[1:]...)
		nom = nn
	}
	if !consumes || args.numChildren() == 0 {
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
	case kProtocol:
		k = kBoundGenericProtocol
	case kOtherNominalType:
		k = kBoundGenericOtherNominalType
	case kTypeAlias:
		k = kBoundGenericTypeAlias
	case kFunction, kConstructor:
		return d.with(kBoundGenericFunction, nom, args)
	default:
		return nil
	}
	return d.with(k, d.typ(nom), args)
}
