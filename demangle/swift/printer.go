package swift

import (
	"strconv"
	"sync"
)

// options are the printing switches of Swift's DemangleOptions that
// swift demangle's two forms differ in.
type options struct {
	synthesizeSugar      bool
	displayExtensions    bool
	displaySuffix        bool
	displayModules       bool
	displaySpecs         bool
	displayConformances  bool
	displayWhere         bool
	displayEntityTypes   bool
	shortenPartialApply  bool
	shortenThunk         bool
	shortenValueWitness  bool
	showPrivateDiscrims  bool
	showArgumentTypes    bool
	showAsyncResume      bool
	displayLocalContexts bool
}

var fullOptions = options{
	synthesizeSugar:   true,
	displayExtensions: true, displaySuffix: true, displayModules: true, displaySpecs: true,
	displayConformances: true, displayWhere: true, displayEntityTypes: true,
	showPrivateDiscrims: true, showArgumentTypes: true, showAsyncResume: true, displayLocalContexts: true,
}

// defaultOptions are Swift's DemangleOptions() defaults: the full form
// without sugar. NodePrinter prints with them the names nested in a
// specialization's parameters (demangleSymbolAsString) and a macro's name
// (nodeToString), whatever the options of the outer name.
var defaultOptions = func() options {
	o := fullOptions
	o.synthesizeSugar = false
	return o
}()

// simplifiedOptions are Swift's SimplifiedUIDemangleOptions.
var simplifiedOptions = options{
	synthesizeSugar: true, shortenPartialApply: true, shortenThunk: true, shortenValueWitness: true,
	displayLocalContexts: true,
}

const (
	maxPrintDepth = 768
	maxOutput     = 1 << 20
)

type printer struct {
	opt         options
	out         outBuf
	invalid     bool
	specPrinted bool
}

// outBuf is what a printer has printed, in a buffer from outBufs.
type outBuf struct{ b []byte }

func (o *outBuf) Len() int             { return len(o.b) }
func (o *outBuf) WriteString(s string) { o.b = append(o.b, s...) }

// outBufs keeps printers' buffers for reuse: a name's text is copied out
// once, at its length, where a builder grown from 128 bytes was copied on
// each growth and kept its spare room in the result.
var outBufs = sync.Pool{New: func() any { return new([]byte) }}

// maxKeptOut bounds the buffer a printer gives back to outBufs.
const maxKeptOut = 16 << 10

func (p *printer) s(s string) {
	if p.out.Len()+len(s) > maxOutput {
		p.invalid = true
		return
	}
	p.out.WriteString(s)
}

func (p *printer) u(v uint64) { p.s(strconv.FormatUint(v, 10)) }

// nodeToString prints a tree, "" when it cannot be printed.
func nodeToString(n *node, opt options) string {
	if n == nil {
		return ""
	}
	buf := outBufs.Get().(*[]byte)
	p := &printer{opt: opt, out: outBuf{(*buf)[:0]}}
	p.print(n, 0, false)
	var s string
	if !p.invalid {
		s = string(p.out.b)
	}
	if cap(p.out.b) <= maxKeptOut {
		*buf = p.out.b
		outBufs.Put(buf)
	}
	return s
}

func (p *printer) children(n *node, depth int, sep string) {
	if n == nil {
		return
	}
	for i, c := range n.children {
		if i > 0 && sep != "" {
			p.s(sep)
		}
		p.print(c, depth+1, false)
	}
}

func genericParameterName(depth, index uint64) string {
	var b []byte
	for {
		b = append(b, byte('A'+index%26))
		index /= 26
		if index == 0 {
			break
		}
	}
	s := string(b)
	if depth != 0 {
		s += strconv.FormatUint(depth, 10)
	}
	return s
}

// printContext reports whether an entity's context is printed: with both
// option sets swift demangle uses, it always is (a module name may still
// print as nothing).
func (p *printer) printContext(*node) bool { return true }

func isSimpleType(n *node) bool {
	if n == nil {
		return false
	}
	switch n.kind {
	case kAssociatedType, kAssociatedTypeRef, kBoundGenericClass, kBoundGenericEnum,
		kBoundGenericStructure, kBoundGenericProtocol, kBoundGenericOtherNominalType,
		kBoundGenericTypeAlias, kBoundGenericFunction, kBuiltinTypeName, kBuiltinTupleType,
		kBuiltinFixedArray, kBuiltinBorrow, kClass, kDependentGenericType, kDependentMemberType,
		kDependentGenericParamType, kDynamicSelf, kEnum, kErrorType, kExistentialMetatype,
		kMetatype, kMetatypeRepresentation, kModule, kTuple, kPack, kSILPackDirect, kSILPackIndirect,
		kConstrainedExistentialRequirementList, kConstrainedExistentialSelf, kProtocol,
		kProtocolSymbolicReference, kReturnType, kSILBoxType, kSILBoxTypeWithLayout, kStructure,
		kOtherNominalType, kTupleElementName, kTypeAlias, kTypeList, kLabelList,
		kTypeSymbolicReference, kSugaredOptional, kSugaredArray, kSugaredInlineArray,
		kSugaredDictionary, kSugaredParen, kInteger, kNegativeInteger:
		return true
	case kType:
		return isSimpleType(n.first())
	case kProtocolList:
		return n.first().numChildren() <= 1
	case kProtocolListWithAnyObject:
		return n.first().first().numChildren() == 0
	}
	return false
}

func (p *printer) withParens(t *node, depth int) {
	paren := !isSimpleType(t)
	if paren {
		p.s("(")
	}
	p.print(t, depth+1, false)
	if paren {
		p.s(")")
	}
}
