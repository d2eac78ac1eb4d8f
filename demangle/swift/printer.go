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
		kBuiltinFixedArray, kClass, kDependentGenericType, kDependentMemberType,
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

func (p *printer) genericSignature(n *node, depth int) {
	p.s("<")
	num := n.numChildren()
	params := 0
	for params < num && n.child(params).kind == kDependentGenericParamCount {
		params++
	}
	firstReq := params
	for ; firstReq < num; firstReq++ {
		c := n.child(firstReq)
		if c.kind == kType {
			c = c.first()
		}
		if c == nil || c.kind != kDependentGenericParamPackMarker && c.kind != kDependentGenericParamValueMarker {
			break
		}
	}
	matches := func(gp *node, depth, index uint64) bool {
		return gp.is(kDependentGenericParamType) && gp.child(0).index == index && gp.child(1).index == depth
	}
	isPack := func(depth, index uint64) bool {
		for i := params; i < firstReq; i++ {
			c := n.child(i)
			if c.kind != kDependentGenericParamPackMarker {
				continue
			}
			c = c.first()
			if !c.is(kType) {
				continue
			}
			if matches(c.first(), depth, index) {
				return true
			}
		}
		return false
	}
	value := func(depth, index uint64) (bool, *node) {
		for i := params; i < firstReq; i++ {
			c := n.child(i)
			if c.kind != kDependentGenericParamValueMarker {
				continue
			}
			c = c.first()
			if !c.is(kType) {
				continue
			}
			if matches(c.first(), depth, index) {
				return true, c.child(1)
			}
		}
		return false, nil
	}
	for gd := 0; gd < params; gd++ {
		if gd != 0 {
			p.s("><")
		}
		count := n.child(gd).index
		for idx := uint64(0); idx < count; idx++ {
			if idx != 0 {
				p.s(", ")
			}
			if idx >= 128 {
				p.s("...")
				break
			}
			if isPack(uint64(gd), idx) {
				p.s("each ")
			}
			isValue, vt := value(uint64(gd), idx)
			if isValue {
				p.s("let ")
			}
			p.s(genericParameterName(uint64(gd), idx))
			if vt != nil {
				p.s(": ")
				p.print(vt, depth+1, false)
			}
		}
	}
	if firstReq != num && p.opt.displayWhere {
		p.s(" where ")
		for i := firstReq; i < num; i++ {
			if i > firstReq {
				p.s(", ")
			}
			p.print(n.child(i), depth+1, false)
		}
	}
	p.s(">")
}

func (p *printer) funcSigSpecParams(n *node, depth int) {
	i, end := 0, n.numChildren()
	for i < end {
		v := n.child(i).index
		switch v {
		case fsBoxToValue, fsBoxToStack, fsInOutToOut:
			p.print(n.child(i), depth+1, false)
			i++
		case fsConstantPropFunction, fsConstantPropGlobal:
			if i+2 > end {
				return
			}
			p.s("[")
			p.print(n.child(i), depth+1, false)
			p.s(" : ")
			text := n.child(i + 1).text
			if dm := demangleAsString(text, fullOptions); dm != "" {
				p.s(dm)
			} else {
				p.s(text)
			}
			p.s("]")
			i += 2
		case fsConstantPropInteger, fsConstantPropFloat:
			if i+2 > end {
				return
			}
			p.s("[")
			p.print(n.child(i), depth+1, false)
			p.s(" : ")
			p.print(n.child(i+1), depth+1, false)
			p.s("]")
			i += 2
		case fsConstantPropString:
			if i+3 > end {
				return
			}
			p.s("[")
			p.print(n.child(i), depth+1, false)
			p.s(" : ")
			p.print(n.child(i+1), depth+1, false)
			p.s("'")
			p.print(n.child(i+2), depth+1, false)
			p.s("']")
			i += 3
		case fsConstantPropKeyPath:
			if i+4 > end {
				return
			}
			p.s("[")
			p.print(n.child(i), depth+1, false)
			p.s(" : ")
			p.print(n.child(i+1), depth+1, false)
			p.s("<")
			p.print(n.child(i+2), depth+1, false)
			p.s(",")
			p.print(n.child(i+3), depth+1, false)
			p.s(">]")
			i += 4
		case fsClosureProp:
			if i+2 > end {
				return
			}
			p.s("[")
			p.print(n.child(i), depth+1, false)
			p.s(" : ")
			p.print(n.child(i+1), depth+1, false)
			p.s(", Argument Types : [")
			i += 2
			for i < end {
				c := n.child(i)
				if c.kind != kType {
					break
				}
				p.print(c, depth+1, false)
				i++
				if i < end && n.child(i).hasText {
					p.s(", ")
				}
			}
			p.s("]")
		default:
			p.print(n.child(i), depth+1, false)
			i++
		}
	}
}

func (p *printer) specializationPrefix(n *node, desc string, depth int, paramPrefix string) {
	if !p.opt.displaySpecs {
		if !p.specPrinted {
			p.s("specialized ")
			p.specPrinted = true
		}
		return
	}
	p.s(desc + " <")
	sep := ""
	arg := 0
	for _, c := range n.children {
		switch c.kind {
		case kSpecializationPassID, kDroppedArgument:
		case kIsSerialized:
			p.s(sep)
			sep = ", "
			p.print(c, depth+1, false)
		default:
			if c.numChildren() > 0 {
				p.s(sep + paramPrefix)
				sep = ", "
				switch c.kind {
				case kFunctionSignatureSpecializationParam:
					p.s("Arg[" + strconv.Itoa(arg) + "] = ")
					p.funcSigSpecParams(c, depth)
				case kFunctionSignatureSpecializationReturn:
					p.s("Return = ")
					p.funcSigSpecParams(c, depth)
				default:
					p.print(c, depth+1, false)
				}
			}
			arg++
		}
	}
	p.s("> of ")
}

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
			kPropertyWrapperInitFromProjectedValue:
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
