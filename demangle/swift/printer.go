package swift

import (
	"strconv"
	"strings"
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
	out         strings.Builder
	invalid     bool
	specPrinted bool
}

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
	p := &printer{opt: opt}
	p.out.Grow(128)
	p.print(n, 0, false)
	if p.invalid {
		return ""
	}
	return p.out.String()
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

func isSwiftModule(n *node) bool     { return n.is(kModule) && n.text == "Swift" }
func isIdent(n *node, s string) bool { return n.is(kIdentifier) && n.text == s }

const (
	sugarNone = iota
	sugarOptional
	sugarIUO
	sugarArray
	sugarDictionary
)

func findSugar(n *node) int {
	for n.numChildren() == 1 && n.kind == kType {
		n = n.first()
	}
	if n.numChildren() != 2 || n.kind != kBoundGenericEnum && n.kind != kBoundGenericStructure {
		return sugarNone
	}
	unbound := n.first().first()
	args := n.child(1)
	if unbound == nil {
		return sugarNone
	}
	name, mod := unbound.child(1), unbound.child(0)
	if name == nil || mod == nil {
		return sugarNone
	}
	if n.kind == kBoundGenericEnum {
		if isIdent(name, "Optional") && args.numChildren() == 1 && isSwiftModule(mod) {
			return sugarOptional
		}
		if isIdent(name, "ImplicitlyUnwrappedOptional") && args.numChildren() == 1 && isSwiftModule(mod) {
			return sugarIUO
		}
		return sugarNone
	}
	if isIdent(name, "Array") && args.numChildren() == 1 && isSwiftModule(mod) {
		return sugarArray
	}
	if isIdent(name, "Dictionary") && args.numChildren() == 2 && isSwiftModule(mod) {
		return sugarDictionary
	}
	return sugarNone
}

func (p *printer) boundGenericNoSugar(n *node, depth int) {
	if n.numChildren() < 2 {
		return
	}
	p.print(n.first(), depth+1, false)
	p.s("<")
	p.children(n.child(1), depth, ", ")
	p.s(">")
}

func (p *printer) boundGeneric(n *node, depth int) {
	if n.numChildren() < 2 {
		return
	}
	if n.numChildren() != 2 || !p.opt.synthesizeSugar || n.kind == kBoundGenericClass {
		p.boundGenericNoSugar(n, depth)
		return
	}
	if n.kind == kBoundGenericProtocol {
		p.children(n.child(1), depth, "")
		p.s(" as ")
		p.print(n.first(), depth+1, false)
		return
	}
	switch sugar := findSugar(n); sugar {
	case sugarOptional, sugarIUO:
		p.withParens(n.child(1).first(), depth)
		if sugar == sugarOptional {
			p.s("?")
		} else {
			p.s("!")
		}
	case sugarArray:
		p.s("[")
		p.print(n.child(1).first(), depth+1, false)
		p.s("]")
	case sugarDictionary:
		p.s("[")
		p.print(n.child(1).child(0), depth+1, false)
		p.s(" : ")
		p.print(n.child(1).child(1), depth+1, false)
		p.s("]")
	default:
		p.boundGenericNoSugar(n, depth)
	}
}

func (p *printer) functionParameters(labels, paramType *node, depth int, showTypes bool) {
	if !paramType.is(kArgumentTuple) {
		p.invalid = true
		return
	}
	params := paramType.first().first()
	if params == nil {
		p.invalid = true
		return
	}
	if params.kind != kTuple {
		if showTypes {
			p.s("(")
			p.print(params, depth+1, false)
			p.s(")")
		} else {
			p.s("(_:)")
		}
		return
	}
	hasLabels := labels.numChildren() > 0
	p.s("(")
	for i, param := range params.children {
		if i > 0 && showTypes {
			p.s(", ")
		}
		if hasLabels {
			l := labels.child(i)
			if l.is(kIdentifier) {
				p.s(l.text + ":")
			} else {
				p.s("_:")
			}
		} else if !showTypes {
			if l := param.childOfKind(kTupleElementName); l != nil {
				p.s(l.text + ":")
			} else {
				p.s("_:")
			}
		}
		if hasLabels && showTypes {
			p.s(" ")
		}
		if showTypes {
			p.print(param, depth+1, false)
		}
	}
	p.s(")")
}

func (p *printer) functionType(labels, n *node, depth int) {
	if n.numChildren() < 2 {
		p.invalid = true
		return
	}
	convention := func(c string) {
		p.s("@convention(" + c)
		if n.first().is(kClangType) {
			p.s(", mangledCType: \"")
			p.print(n.first(), depth+1, false)
			p.s("\"")
		}
		p.s(") ")
	}
	switch n.kind {
	case kAutoClosureType, kEscapingAutoClosureType:
		p.s("@autoclosure ")
	case kCalledOnceFunctionType:
		p.s("@called(once) ")
	case kThinFunctionType:
		p.s("@convention(thin) ")
	case kCFunctionPointer:
		convention("c")
	case kEscapingObjCBlock:
		p.s("@escaping ")
		convention("block")
	case kObjCBlock:
		convention("block")
	}
	argIndex := n.numChildren() - 2
	i := 0
	if n.child(i).is(kClangType) {
		i++
	}
	sending, sendable, async := false, false, false
	var diff uint64
	if n.child(i).is(kSendingResultFunctionType) {
		i++
		sending = true
	}
	if n.child(i).is(kIsolatedAnyFunctionType) {
		p.print(n.child(i), depth+1, false)
		i++
	}
	var nonIsolated *node
	if n.child(i).is(kNonIsolatedCallerFunctionType) {
		nonIsolated = n.child(i)
		i++
	}
	if n.child(i).is(kGlobalActorFunctionType) {
		p.print(n.child(i), depth+1, false)
		i++
	}
	if n.child(i).is(kDifferentiableFunctionType) {
		diff = n.child(i).index
		i++
	}
	var thrown *node
	if n.child(i).is(kThrowsAnnotation) || n.child(i).is(kTypedThrowsAnnotation) {
		thrown = n.child(i)
		i++
	}
	if n.child(i).is(kConcurrentFunctionType) {
		i++
		sendable = true
	}
	if n.child(i).is(kAsyncAnnotation) {
		async = true
	}
	switch diff {
	case 'f':
		p.s("@differentiable(_forward) ")
	case 'r':
		p.s("@differentiable(reverse) ")
	case 'l':
		p.s("@differentiable(_linear) ")
	case 'd':
		p.s("@differentiable ")
	}
	if nonIsolated != nil {
		p.print(nonIsolated, depth+1, false)
	}
	if sendable {
		p.s("@Sendable ")
	}
	p.functionParameters(labels, n.child(argIndex), depth, p.opt.showArgumentTypes)
	if !p.opt.showArgumentTypes {
		return
	}
	if async {
		p.s(" async")
	}
	if thrown != nil {
		p.print(thrown, depth+1, false)
	}
	p.s(" -> ")
	if sending {
		p.s("sending ")
	}
	p.print(n.child(argIndex+1), depth+1, false)
}

func (p *printer) implFunctionType(fn *node, depth int) {
	var patternSubs, invocationSubs, sendingResult *node
	const (
		attrs = iota
		inputs
		results
	)
	state := attrs
	transition := func(to int) {
		for ; state < to; state++ {
			switch state {
			case attrs:
				if patternSubs != nil {
					p.s("@substituted ")
					p.print(patternSubs.first(), depth+1, false)
					p.s(" ")
				}
				p.s("(")
			case inputs:
				p.s(") -> ")
				if sendingResult != nil {
					p.print(sendingResult, depth+1, false)
					p.s(" ")
				}
				p.s("(")
			}
		}
	}
	for _, c := range fn.children {
		switch c.kind {
		case kImplParameter:
			if state == inputs {
				p.s(", ")
			}
			transition(inputs)
			p.print(c, depth+1, false)
		case kImplResult, kImplYield, kImplErrorResult:
			if state == results {
				p.s(", ")
			}
			transition(results)
			p.print(c, depth+1, false)
		case kImplPatternSubstitutions:
			patternSubs = c
		case kImplInvocationSubstitutions:
			invocationSubs = c
		case kImplSendingResult:
			sendingResult = c
		default:
			p.print(c, depth+1, false)
			p.s(" ")
		}
	}
	transition(results)
	p.s(")")
	if patternSubs != nil {
		p.s(" for <")
		p.children(patternSubs.child(1), depth, "")
		p.s(">")
	}
	if invocationSubs != nil {
		p.s(" for <")
		p.children(invocationSubs.first(), depth, "")
		p.s(">")
	}
}
