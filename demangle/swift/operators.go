package swift

// The operator dispatch of the current mangling, and the productions it
// reads most: numbers, substitutions, identifiers, contexts, builtin types.

import (
	"strconv"
	"strings"
)

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

var stdTypes = lazy[map[byte]stdType]{build: func() map[byte]stdType {
	return map[byte]stdType{
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
}}

// concurrencyTypes are the second-level standard substitutions ("Sc").
var concurrencyTypes = lazy[map[byte]stdType]{build: func() map[byte]stdType {
	return map[byte]stdType{
		'A': {kProtocol, "Actor"}, 'C': {kStructure, "CheckedContinuation"}, 'c': {kStructure, "UnsafeContinuation"},
		'E': {kStructure, "CancellationError"}, 'e': {kStructure, "UnownedSerialExecutor"}, 'F': {kProtocol, "Executor"},
		'f': {kProtocol, "SerialExecutor"}, 'G': {kStructure, "TaskGroup"}, 'g': {kStructure, "ThrowingTaskGroup"},
		'h': {kProtocol, "TaskExecutor"}, 'I': {kProtocol, "AsyncIteratorProtocol"}, 'i': {kProtocol, "AsyncSequence"},
		'J': {kStructure, "UnownedJob"}, 'M': {kClass, "MainActor"}, 'P': {kStructure, "TaskPriority"},
		'S': {kStructure, "AsyncStream"}, 's': {kStructure, "AsyncThrowingStream"}, 'T': {kStructure, "Task"},
		't': {kStructure, "UnsafeCurrentTask"},
	}
}}

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
	table := stdTypes.get()
	if d.nextIf('c') {
		table = concurrencyTypes.get()
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
	case 'W':
		elem := d.popKind(kType)
		if elem == nil {
			return nil
		}
		t = d.with(kBuiltinBorrow, elem)
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
