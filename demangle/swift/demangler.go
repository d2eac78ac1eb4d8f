package swift

import (
	"strings"
	"sync"
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
	slab     []node  // nodes are cut from slabs of slabNodes
	kids     []*node // and child lists from a shared slice
	stackBuf [16]*node
	// A parser taken from demanglers reuses the slabs and child lists of
	// the names it parsed before (reset): slabs[slabAt-1] is slab's, and
	// kidBufs[kidAt-1] kids'.
	slabs   [][]node
	slabAt  int
	kidBufs [][]*node
	kidAt   int
	idBuf   []byte // where identifier puts words together
}

// slabNodes is how many nodes a slab holds.
const slabNodes = 64

// demanglers keeps parsers for reuse: a name's tree is dropped once it is
// printed, and its nodes and child lists serve the next name, where
// cutting them afresh was most of a name's cost (allocations, and first
// touches of fresh memory in a command whose collector is off).
var demanglers = sync.Pool{New: func() any { return new(demangler) }}

// maxKeptNodes bounds the nodes a parser goes back to demanglers with: a
// hostile name's maxNodes would otherwise stay in the pool.
const maxKeptNodes = 4096

// reset readies a parser for the name s from pos, reusing what it cut for
// earlier names.
func (d *demangler) reset(s string, pos int, oldTypes bool) {
	d.text, d.pos, d.oldTypes, d.nodes = s, pos, oldTypes, 0
	d.stack = d.stackBuf[:0]
	clear(d.subs)
	d.subs, d.words = d.subs[:0], d.words[:0]
	d.slab, d.slabAt, d.kids, d.kidAt = nil, 0, nil, 0
}

// release gives a parser back to demanglers once the tree it made is no
// longer used, unless it grew past maxKeptNodes.
func (d *demangler) release() {
	if len(d.slabs)*slabNodes > maxKeptNodes {
		return
	}
	clear(d.stackBuf[:])
	clear(d.subs)
	d.text = ""
	demanglers.Put(d)
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
		if d.slabAt == len(d.slabs) {
			d.slabs = append(d.slabs, make([]node, slabNodes))
		}
		d.slab = d.slabs[d.slabAt]
		d.slabAt++
	}
	n := &d.slab[0]
	d.slab = d.slab[1:]
	*n = node{kind: k, children: d.childList(spareChildren)[:0]}
	return n
}

// spareChildren is the room for children a node has from the parser's
// lists when it is made: most that add children add one or two, which
// then take no allocation. (Each node's room is its own: a third child
// is appended elsewhere.)
const spareChildren = 2

// childList returns room for n children, capped so that a later add
// copies instead of overwriting a neighbour's list.
func (d *demangler) childList(n int) []*node {
	if cap(d.kids)-len(d.kids) < n {
		if d.kidAt == len(d.kidBufs) {
			d.kidBufs = append(d.kidBufs, nil)
		}
		if cap(d.kidBufs[d.kidAt]) < n {
			d.kidBufs[d.kidAt] = make([]*node, 0, max(64, n))
		}
		d.kids = d.kidBufs[d.kidAt][:0]
		d.kidAt++
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
	// "_T0", "$S", "_$S", "$s", "_$s", "$e", "_$e" or "@__swiftmacro_",
	// by their bytes: every symbol a profile or a batch names is asked.
	switch {
	case len(s) >= 2 && s[0] == '$' && (s[1] == 'S' || s[1] == 's' || s[1] == 'e'):
		return 2
	case len(s) >= 3 && s[0] == '_' && s[1] == '$' && (s[2] == 'S' || s[2] == 's' || s[2] == 'e'):
		return 3
	case len(s) >= 3 && s[0] == '_' && s[1] == 'T' && s[2] == '0':
		return 3
	case strings.HasPrefix(s, "@__swiftmacro_"):
		return len("@__swiftmacro_")
	}
	return 0
}

// demangleSymbol parses a whole symbol name into a Global node.
func demangleSymbol(s string) *node { return new(demangler).parse(s) }

// parse is demangleSymbol with d, whose earlier trees it may reuse.
func (d *demangler) parse(s string) *node {
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
	d.reset(s, n, strings.HasPrefix(s, "_T"))
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
	top.children = d.childList(len(d.stack) + 1)[:0] // room for all it may take
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
