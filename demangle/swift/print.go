package swift

import "strconv"

// simplePrefix are the kinds printed as a fixed text and their first child.
var simplePrefix = map[kind]string{
	kStatic: "static ", kAsyncRemoved: "async demotion of ", kCurryThunk: "curry thunk of ",
	kSILThunkIdentity: "identity thunk of ", kDispatchThunk: "dispatch thunk of ",
	kMethodDescriptor: "method descriptor for ", kMethodLookupFunction: "method lookup function for ",
	kObjCMetadataUpdateFunction: "ObjC metadata update function for ",
	kObjCResilientClassStub:     "ObjC resilient class stub for ", kFullObjCResilientClassStub: "full ObjC resilient class stub for ",
	kOutlinedRetain: "outlined retain of ", kOutlinedRelease: "outlined release of ",
	kOutlinedInitializeWithTake: "outlined init with take of ", kOutlinedInitializeWithTakeNoValueWitness: "outlined init with take of ",
	kOutlinedInitializeWithCopy: "outlined init with copy of ", kOutlinedInitializeWithCopyNoValueWitness: "outlined init with copy of ",
	kOutlinedAssignWithTake: "outlined assign with take of ", kOutlinedAssignWithTakeNoValueWitness: "outlined assign with take of ",
	kOutlinedAssignWithCopy: "outlined assign with copy of ", kOutlinedAssignWithCopyNoValueWitness: "outlined assign with copy of ",
	kOutlinedDestroy: "outlined destroy of ", kOutlinedDestroyNoValueWitness: "outlined destroy of ",
	kOutlinedEnumProjectDataForLoad: "outlined enum project data for load of ", kOutlinedEnumTagStore: "outlined enum tag store of ",
	kOutlinedEnumGetTag: "outlined enum get tag of ", kDeclContext: "", kType: "",
	kPackExpansion: "repeat ", kInOut: "inout ", kIsolated: "isolated ", kSending: "sending ",
	kCompileTimeLiteral: "_const ", kConstValue: "@const ", kShared: "__shared ", kOwned: "__owned ",
	kNoDerivative: "@noDerivative ", kWeak: "weak ", kUnowned: "unowned ", kUnmanaged: "unowned(unsafe) ",
	kProtocolSelfConformanceWitnessTable: "protocol self-conformance witness table for ",
	kProtocolWitnessTableAccessor:        "protocol witness table accessor for ", kProtocolWitnessTable: "protocol witness table for ",
	kProtocolWitnessTablePattern: "protocol witness table pattern for ", kGenericProtocolWitnessTable: "generic protocol witness table for ",
	kGenericProtocolWitnessTableInstantiationFunction: "instantiation function for generic protocol witness table for ",
	kResilientProtocolWitnessTable:                    "resilient protocol witness table for ",
	kProtocolSelfConformanceWitness:                   "protocol self-conformance witness for ",
	kGenericTypeMetadataPattern:                       "generic type metadata pattern for ", kMetaclass: "metaclass for ",
	kProtocolSelfConformanceDescriptor:   "protocol self-conformance descriptor for ",
	kProtocolConformanceDescriptor:       "protocol conformance descriptor for ",
	kProtocolConformanceDescriptorRecord: "protocol conformance descriptor runtime record for ",
	kProtocolDescriptor:                  "protocol descriptor for ", kProtocolDescriptorRecord: "protocol descriptor runtime record for ",
	kProtocolRequirementsBaseDescriptor: "protocol requirements base descriptor for ",
	kFullTypeMetadata:                   "full type metadata for ", kTypeMetadata: "type metadata for ",
	kTypeMetadataAccessFunction: "type metadata accessor for ", kTypeMetadataInstantiationCache: "type metadata instantiation cache for ",
	kTypeMetadataInstantiationFunction:        "type metadata instantiation function for ",
	kTypeMetadataSingletonInitializationCache: "type metadata singleton initialization cache for ",
	kTypeMetadataCompletionFunction:           "type metadata completion function for ",
	kTypeMetadataDemanglingCache:              "demangling cache variable for type metadata for ",
	kTypeMetadataLazyCache:                    "lazy cache variable for type metadata for ",
	kAssociatedTypeDescriptor:                 "associated type descriptor for ",
	kDefaultAssociatedTypeMetadataAccessor:    "default associated type metadata accessor for ",
	kClassMetadataBaseOffset:                  "class metadata base offset for ", kPropertyDescriptor: "property descriptor for ",
	kNominalTypeDescriptor: "nominal type descriptor for ", kNominalTypeDescriptorRecord: "nominal type descriptor runtime record for ",
	kOpaqueTypeDescriptor: "opaque type descriptor for ", kOpaqueTypeDescriptorRecord: "opaque type descriptor runtime record for ",
	kOpaqueTypeDescriptorAccessor:     "opaque type descriptor accessor for ",
	kOpaqueTypeDescriptorAccessorImpl: "opaque type descriptor accessor impl for ",
	kOpaqueTypeDescriptorAccessorKey:  "opaque type descriptor accessor key for ",
	kOpaqueTypeDescriptorAccessorVar:  "opaque type descriptor accessor var for ",
	kCoroutineContinuationPrototype:   "coroutine continuation prototype for ",
	kValueWitnessTable:                "value witness table for ", kSILBoxType: "@box ",
	kReflectionMetadataBuiltinDescriptor:    "reflection metadata builtin descriptor ",
	kReflectionMetadataFieldDescriptor:      "reflection metadata field descriptor ",
	kReflectionMetadataAssocTypeDescriptor:  "reflection metadata associated type descriptor ",
	kReflectionMetadataSuperclassDescriptor: "reflection metadata superclass descriptor ",
	kModuleDescriptor:                       "module descriptor ", kAnonymousDescriptor: "anonymous descriptor ",
	kExtensionDescriptor:                                   "extension descriptor ",
	kCanonicalSpecializedGenericMetaclass:                  "specialized generic metaclass for ",
	kCanonicalSpecializedGenericTypeMetadataAccessFunction: "canonical specialized generic type metadata accessor for ",
	kMetadataInstantiationCache:                            "metadata instantiation cache for ",
	kNoncanonicalSpecializedGenericTypeMetadata:            "noncanonical specialized generic type metadata for ",
	kNoncanonicalSpecializedGenericTypeMetadataCache:       "cache variable for noncanonical specialized generic type metadata for ",
	kCanonicalPrespecializedGenericTypeCachingOnceToken:    "flag for loading of canonical specialized generic type metadata for ",
	kUniquable: "uniquable ",
}

// fixedText are the kinds printed as a fixed text alone.
var fixedText = map[kind]string{
	kUnknownIndex: "unknown index", kNonObjCAttribute: "@nonobjc ", kObjCAttribute: "@objc ",
	kDirectMethodReferenceAttribute: "super ", kDynamicAttribute: "dynamic ", kVTableAttribute: "override ",
	kIsSerialized: "serialized", kBuiltinTupleType: "Builtin.TheTupleType", kDynamicSelf: "Self",
	kConstrainedExistentialSelf: "Self", kImplEscaping: "@escaping", kImplErasedIsolation: "@isolated(any)",
	kImplSendingResult: "sending", kErrorType: "<ERROR TYPE>", kConcurrentFunctionType: "@Sendable ",
	kIsolatedAnyFunctionType: "@isolated(any) ", kNonIsolatedCallerFunctionType: "nonisolated(nonsending) ",
	kSendingResultFunctionType: "sending ", kAsyncAnnotation: " async", kThrowsAnnotation: " throws",
	kEmptyList: " empty-list ", kFirstElementMarker: " first-element-marker ", kVariadicMarker: " variadic-marker ",
	kOpaqueReturnType: "some", kAsyncFunctionPointer: "async function pointer to ",
	kBackDeploymentFallback: "back deployment fallback for ", kHasSymbolQuery: "#_hasSymbol query for ",
	kCoroFunctionPointer: "coro function pointer to ", kDefaultOverride: "default override of ",
	kAssociatedType: "", kOpaqueReturnTypeIndex: "", kOpaqueReturnTypeParent: "", kLabelList: "",
}

// thunkText are fixed texts that the simplified form leaves out.
var thunkText = map[kind]string{
	kMergedFunction: "merged ", kDistributedThunk: "distributed thunk ",
	kDistributedAccessor: "distributed accessor for ", kAccessibleFunctionRecord: "accessible function runtime record for ",
	kDynamicallyReplaceableFunctionKey:  "dynamically replaceable key for ",
	kDynamicallyReplaceableFunctionImpl: "dynamically replaceable thunk for ",
	kDynamicallyReplaceableFunctionVar:  "dynamically replaceable variable for ",
	kBackDeploymentThunk:                "back deployment thunk for ",
}

var storageNames = map[kind]string{
	kOwningAddressor: "owningAddressor", kOwningMutableAddressor: "owningMutableAddressor",
	kNativeOwningAddressor: "nativeOwningAddressor", kNativeOwningMutableAddressor: "nativeOwningMutableAddressor",
	kNativePinningAddressor: "nativePinningAddressor", kNativePinningMutableAddressor: "nativePinningMutableAddressor",
	kUnsafeAddressor: "unsafeAddressor", kUnsafeMutableAddressor: "unsafeMutableAddressor",
	kGlobalGetter: "getter", kGetter: "getter", kSetter: "setter", kMaterializeForSet: "materializeForSet",
	kWillSet: "willset", kDidSet: "didset", kReadAccessor: "read", kRead2Accessor: "read2",
	kModifyAccessor: "modify", kModify2Accessor: "modify2", kInitAccessor: "init",
}

var attachedMacroDescriptions = map[kind]string{
	kAccessorAttachedMacroExpansion: "accessor", kMemberAttributeAttachedMacroExpansion: "memberAttribute",
	kMemberAttachedMacroExpansion: "member", kPeerAttachedMacroExpansion: "peer",
	kConformanceAttachedMacroExpansion: "conformance", kExtensionAttachedMacroExpansion: "extension",
	kPreambleAttachedMacroExpansion: "preamble", kBodyAttachedMacroExpansion: "body",
}

func (p *printer) print(n *node, depth int, asPrefix bool) *node {
	if depth > maxPrintDepth {
		p.s("<<too complex>>")
		return nil
	}
	if p.invalid {
		return nil
	}
	if n == nil {
		p.s("<null node pointer>")
		return nil
	}
	c0 := func() { p.print(n.child(0), depth+1, false) }
	c := func(i int) { p.print(n.child(i), depth+1, false) }
	if s, ok := simplePrefix[n.kind]; ok {
		p.s(s)
		c0()
		return nil
	}
	if s, ok := fixedText[n.kind]; ok {
		p.s(s)
		return nil
	}
	if s, ok := thunkText[n.kind]; ok {
		if !p.opt.shortenThunk {
			p.s(s)
		}
		return nil
	}
	if s, ok := storageNames[n.kind]; ok {
		if n.first() == nil {
			p.invalid = true
			return nil
		}
		return p.abstractStorage(n.first(), depth, asPrefix, s)
	}
	if desc, ok := attachedMacroDescriptions[n.kind]; ok {
		if n.numChildren() < 4 {
			p.invalid = true
			return nil
		}
		return p.entity(n, depth, asPrefix, noType, true,
			desc+" macro @"+nodeToString(n.child(2), p.opt)+" expansion #", int(n.child(3).index)+1, "")
	}
	switch n.kind {
	case kOutlinedBridgedMethod:
		p.s("outlined bridged method (" + n.text + ") of ")
	case kOutlinedCopy, kOutlinedConsume:
		if n.kind == kOutlinedCopy {
			p.s("outlined copy of ")
		} else {
			p.s("outlined consume of ")
		}
		c0()
		if n.numChildren() > 1 {
			c(1)
		}
	case kOutlinedVariable:
		p.s("outlined variable #" + strconv.FormatUint(n.index, 10) + " of ")
	case kOutlinedReadOnlyObject:
		p.s("outlined read-only object #" + strconv.FormatUint(n.index, 10) + " of ")
	case kDirectness:
		if n.index == 0 {
			p.s("direct ")
		} else {
			p.s("indirect ")
		}
	case kAnonymousContext:
		if p.opt.displayExtensions {
			c(1)
			p.s(".(unknown context at ")
			c0()
			p.s(")")
			if n.numChildren() >= 3 && n.child(2).numChildren() > 0 {
				p.s("<")
				c(2)
				p.s(">")
			}
		}
	case kExtension:
		if p.opt.displayExtensions {
			p.s("(extension in ")
			p.print(n.child(0), depth+1, true)
			p.s("):")
		}
		c(1)
		if n.numChildren() == 3 {
			c(2)
		}
	case kVariable:
		return p.entity(n, depth, asPrefix, withColon, true, "", -1, "")
	case kFunction, kBoundGenericFunction:
		return p.entity(n, depth, asPrefix, functionStyle, true, "", -1, "")
	case kSubscript:
		return p.entity(n, depth, asPrefix, functionStyle, false, "", -1, "subscript")
	case kMacro:
		tp := functionStyle
		if n.numChildren() == 3 {
			tp = withColon
		}
		return p.entity(n, depth, asPrefix, tp, true, "", -1, "")
	case kFreestandingMacroExpansion:
		return p.entity(n, depth, asPrefix, noType, true, "freestanding macro expansion #", int(n.child(2).index)+1, "")
	case kMacroExpansionLoc:
		if n.numChildren() > 0 {
			p.s("module ")
			c0()
		}
		if n.numChildren() > 1 {
			p.s(" file ")
			c(1)
		}
		if n.numChildren() > 2 {
			p.s(" line ")
			c(2)
		}
		if n.numChildren() > 3 {
			p.s(" column ")
			c(3)
		}
	case kMacroExpansionUniqueName:
		return p.entity(n, depth, asPrefix, noType, true, "unique name #", int(n.child(2).index)+1, "")
	case kGenericTypeParamDecl:
		return p.entity(n, depth, asPrefix, noType, true, "", -1, "")
	case kExplicitClosure, kImplicitClosure:
		tp := noType
		if p.opt.showArgumentTypes {
			tp = functionStyle
		}
		name := "closure #"
		if n.kind == kImplicitClosure {
			name = "implicit closure #"
		}
		return p.entity(n, depth, asPrefix, tp, false, name, int(n.child(1).index)+1, "")
	case kGlobal:
		p.children(n, depth, "")
	case kSuffix:
		if p.opt.displaySuffix {
			p.s(" with unmangled suffix " + quoted(n.text))
		}
	case kInitializer:
		return p.entity(n, depth, asPrefix, noType, false, "variable initialization expression", -1, "")
	case kPropertyWrapperBackingInitializer:
		return p.entity(n, depth, asPrefix, noType, false, "property wrapper backing initializer", -1, "")
	case kPropertyWrapperInitFromProjectedValue:
		return p.entity(n, depth, asPrefix, noType, false, "property wrapper init from projected value", -1, "")
	case kDefaultArgumentInitializer:
		return p.entity(n, depth, asPrefix, noType, false, "default argument ", int(n.child(1).index), "")
	case kTypeMangling:
		if n.first().is(kLabelList) {
			p.functionType(n.first(), n.child(1).first(), depth)
		} else {
			c0()
		}
	case kClass, kStructure, kEnum, kProtocol, kTypeAlias, kOtherNominalType:
		return p.entity(n, depth, asPrefix, noType, true, "", -1, "")
	case kLocalDeclName:
		c(1)
		if p.opt.displayLocalContexts {
			p.s(" #" + strconv.FormatUint(n.child(0).index+1, 10))
		}
	case kPrivateDeclName:
		if n.numChildren() > 1 {
			if p.opt.showPrivateDiscrims {
				p.s("(")
			}
			c(1)
			if p.opt.showPrivateDiscrims {
				p.s(" in " + n.first().text + ")")
			}
		} else if p.opt.showPrivateDiscrims {
			p.s("(in " + n.first().text + ")")
		}
	case kRelatedEntityDeclName:
		p.s("related decl '" + n.first().text + "' for ")
		c(1)
	case kModule:
		if p.opt.displayModules {
			p.s(n.text)
		}
	case kIdentifier, kClangType, kBuiltinTypeName, kImplConvention, kImplFunctionAttribute, kMetatypeRepresentation:
		p.s(n.text)
	case kIndex, kNumber, kSpecializationPassID, kInteger:
		p.u(n.index)
	case kNegativeInteger:
		p.s(strconv.FormatInt(int64(n.index), 10))
	case kFunctionType, kUncurriedFunctionType, kNoEscapeFunctionType, kAutoClosureType,
		kEscapingAutoClosureType, kThinFunctionType, kCFunctionPointer, kObjCBlock, kEscapingObjCBlock:
		p.functionType(nil, n, depth)
	case kArgumentTuple:
		p.functionParameters(nil, n, depth, p.opt.showArgumentTypes)
	case kTuple:
		p.s("(")
		p.children(n, depth, ", ")
		p.s(")")
	case kTupleElement:
		if l := n.childOfKind(kTupleElementName); l != nil {
			p.s(l.text + ": ")
		}
		p.print(n.childOfKind(kType), depth+1, false)
		if n.childOfKind(kVariadicMarker) != nil {
			p.s("...")
		}
	case kTupleElementName:
		p.s(n.text + ": ")
	case kPack:
		p.s("Pack{")
		p.children(n, depth, ", ")
		p.s("}")
	case kSILPackDirect, kSILPackIndirect:
		if n.kind == kSILPackDirect {
			p.s("@direct")
		} else {
			p.s("@indirect")
		}
		p.s(" Pack{")
		p.children(n, depth, ", ")
		p.s("}")
	case kPackElement:
		p.s("/* level: " + strconv.FormatUint(n.child(1).index, 10) + " */ each ")
		c0()
	case kReturnType:
		if n.numChildren() == 0 {
			p.s(n.text)
		} else {
			p.children(n, depth, "")
		}
	case kRetroactiveConformance:
		if n.numChildren() == 2 {
			p.s("retroactive @ ")
			c0()
			c(1)
		}
	case kFunctionSignatureSpecialization:
		p.specializationPrefix(n, "function signature specialization", depth, "")
	case kGenericPartialSpecialization:
		p.specializationPrefix(n, "generic partial specialization", depth, "Signature = ")
	case kGenericPartialSpecializationNotReAbstracted:
		p.specializationPrefix(n, "generic not-reabstracted partial specialization", depth, "Signature = ")
	case kGenericSpecialization, kGenericSpecializationInResilienceDomain:
		p.specializationPrefix(n, "generic specialization", depth, "")
	case kGenericSpecializationPrespecialized:
		p.specializationPrefix(n, "generic pre-specialization", depth, "")
	case kGenericSpecializationNotReAbstracted:
		p.specializationPrefix(n, "generic not re-abstracted specialization", depth, "")
	case kInlinedGenericFunction:
		p.specializationPrefix(n, "inlined generic function", depth, "")
	case kDroppedArgument:
		p.s("param" + strconv.FormatUint(n.index, 10) + "-removed")
	case kGenericSpecializationParam:
		c0()
		for i := 1; i < n.numChildren(); i++ {
			if i == 1 {
				p.s(" with ")
			} else {
				p.s(" and ")
			}
			c(i)
		}
	case kFunctionSignatureSpecializationParamPayload:
		if dm := demangleAsString(n.text, fullOptions); dm != "" {
			p.s(dm)
		} else {
			p.s(n.text)
		}
	case kFunctionSignatureSpecializationParamKind:
		p.funcSigSpecParamKind(n.index)
	case kBuiltinFixedArray:
		p.s("Builtin.FixedArray<")
		c0()
		p.s(", ")
		c(1)
		p.s(">")
	case kInfixOperator:
		p.s(n.text + " infix")
	case kPrefixOperator:
		p.s(n.text + " prefix")
	case kPostfixOperator:
		p.s(n.text + " postfix")
	case kLazyProtocolWitnessTableAccessor, kLazyProtocolWitnessTableCacheVariable:
		if n.kind == kLazyProtocolWitnessTableAccessor {
			p.s("lazy protocol witness table accessor for type ")
		} else {
			p.s("lazy protocol witness table cache variable for type ")
		}
		c0()
		p.s(" and conformance ")
		c(1)
	case kVTableThunk:
		p.s("vtable thunk for ")
		c(1)
		p.s(" dispatching to ")
		c0()
	case kProtocolWitness:
		p.s("protocol witness for ")
		c(1)
		p.s(" in conformance ")
		c0()
	case kPartialApplyForwarder, kPartialApplyObjCForwarder:
		switch {
		case p.opt.shortenPartialApply:
			p.s("partial apply")
		case n.kind == kPartialApplyForwarder:
			p.s("partial apply forwarder")
		default:
			p.s("partial apply ObjC forwarder")
		}
		if n.numChildren() > 0 {
			p.s(" for ")
			p.children(n, depth, "")
		}
	case kKeyPathGetterThunkHelper, kKeyPathSetterThunkHelper, kKeyPathUnappliedMethodThunkHelper,
		kKeyPathAppliedMethodThunkHelper:
		switch n.kind {
		case kKeyPathGetterThunkHelper:
			p.s("key path getter for ")
		case kKeyPathSetterThunkHelper:
			p.s("key path setter for ")
		case kKeyPathUnappliedMethodThunkHelper:
			p.s("key path unapplied method ")
		default:
			p.s("key path applied method ")
		}
		c0()
		p.s(" : ")
		for i := 1; i < n.numChildren(); i++ {
			if n.child(i).kind == kIsSerialized {
				p.s(", ")
			}
			c(i)
		}
	case kKeyPathEqualsThunkHelper, kKeyPathHashThunkHelper:
		if n.kind == kKeyPathEqualsThunkHelper {
			p.s("key path index equality operator for ")
		} else {
			p.s("key path index hash operator for ")
		}
		last := n.numChildren()
		if n.child(last - 1).is(kIsSerialized) {
			last--
		}
		if n.child(last - 1).is(kDependentGenericSignature) {
			c(last - 1)
			last--
		}
		p.s("(")
		for i := 0; i < last; i++ {
			if i != 0 {
				p.s(", ")
			}
			c(i)
		}
		p.s(")")
	case kFieldOffset:
		c0()
		p.s("field offset for ")
		c(1)
	case kEnumCase:
		p.s("enum case for ")
		c0()
	case kReabstractionThunk, kReabstractionThunkHelper:
		if p.opt.shortenThunk {
			p.s("thunk for ")
			c(n.numChildren() - 1)
			return nil
		}
		p.s("reabstraction thunk ")
		if n.kind == kReabstractionThunkHelper {
			p.s("helper ")
		}
		i := 0
		if n.numChildren() == 3 {
			c0()
			p.s(" ")
			i = 1
		}
		p.s("from ")
		c(i + 1)
		p.s(" to ")
		c(i)
	case kReabstractionThunkHelperWithGlobalActor:
		c0()
		p.s(" with global actor constraint ")
		c(1)
	case kReabstractionThunkHelperWithSelf:
		p.s("reabstraction thunk ")
		i := 0
		if n.numChildren() == 4 {
			c0()
			p.s(" ")
			i = 1
		}
		p.s("from ")
		c(i + 2)
		p.s(" to ")
		c(i + 1)
		p.s(" self ")
		c(i)
	case kAutoDiffFunction, kAutoDiffDerivativeVTableThunk:
		end := 0
		for end < n.numChildren() && n.child(end).kind != kAutoDiffFunctionKind {
			end++
		}
		if end+2 >= n.numChildren() {
			p.invalid = true
			return nil
		}
		if n.kind == kAutoDiffDerivativeVTableThunk {
			p.s("vtable thunk for ")
		}
		c(end)
		p.s(" of ")
		var sig *node
		for i := 0; i < end; i++ {
			if i == end-1 && n.child(i).kind == kDependentGenericSignature {
				sig = n.child(i)
				break
			}
			c(i)
		}
		if p.opt.shortenThunk {
			return nil
		}
		p.s(" with respect to parameters ")
		c(end + 1)
		p.s(" and results ")
		c(end + 2)
		if sig != nil && p.opt.displayWhere {
			p.s(" with ")
			p.print(sig, depth+1, false)
		}
	case kAutoDiffSelfReorderingReabstractionThunk:
		p.s("autodiff self-reordering reabstraction thunk ")
		if n.numChildren() < 3 {
			p.invalid = true
			return nil
		}
		from, to := n.child(0), n.child(1)
		if p.opt.shortenThunk {
			p.s("for ")
			p.print(from, depth+1, false)
			return nil
		}
		i := 2
		var sig *node
		if n.child(i).kind == kDependentGenericSignature {
			sig = n.child(i)
			i++
		}
		p.s("for ")
		c(i)
		if sig != nil {
			p.print(sig, depth+1, false)
			p.s(" ")
		}
		p.s(" from ")
		p.print(from, depth+1, false)
		p.s(" to ")
		p.print(to, depth+1, false)
	case kAutoDiffSubsetParametersThunk:
		p.s("autodiff subset parameters thunk for ")
		i := n.numChildren() - 1
		if i < 4 {
			p.invalid = true
			return nil
		}
		toParams, results, params, kindNd := n.child(i), n.child(i-1), n.child(i-2), n.child(i-3)
		i -= 4
		p.print(kindNd, depth+1, false)
		p.s(" from ")
		if i == 0 {
			c0()
		} else {
			for j := 0; j < i; j++ {
				c(j)
			}
		}
		if p.opt.shortenThunk {
			return nil
		}
		p.s(" with respect to parameters ")
		p.print(params, depth+1, false)
		p.s(" and results ")
		p.print(results, depth+1, false)
		p.s(" to parameters ")
		p.print(toParams, depth+1, false)
		if i > 0 {
			p.s(" of type ")
			c(i)
		}
	case kAutoDiffFunctionKind:
		switch n.index {
		case 'f':
			p.s("forward-mode derivative")
		case 'r':
			p.s("reverse-mode derivative")
		case 'd':
			p.s("differential")
		case 'p':
			p.s("pullback")
		}
	case kDifferentiabilityWitness:
		off := 3
		if n.last().is(kDependentGenericSignature) {
			off = 4
		}
		ki := n.numChildren() - off
		if ki < 0 {
			p.invalid = true
			return nil
		}
		switch n.child(ki).index {
		case 'f':
			p.s("forward-mode")
		case 'r':
			p.s("reverse-mode")
		case 'd':
			p.s("normal")
		case 'l':
			p.s("linear")
		}
		p.s(" differentiability witness for ")
		i := 0
		for ; i < n.numChildren() && n.child(i).kind != kIndex; i++ {
			c(i)
		}
		i++
		p.s(" with respect to parameters ")
		c(i)
		i++
		p.s(" and results ")
		c(i)
		i++
		if i < n.numChildren() {
			p.s(" with ")
			c(i)
		}
	case kIndexSubset:
		p.s("{")
		first := true
		for i := 0; i < len(n.text); i++ {
			if n.text[i] != 'S' {
				continue
			}
			if !first {
				p.s(", ")
			}
			p.s(strconv.Itoa(i))
			first = false
		}
		p.s("}")
	case kTypeSymbolicReference, kProtocolSymbolicReference, kOpaqueTypeDescriptorSymbolicReference:
		p.invalid = true
	case kAssociatedConformanceDescriptor, kDefaultAssociatedConformanceAccessor:
		if n.kind == kAssociatedConformanceDescriptor {
			p.s("associated conformance descriptor for ")
		} else {
			p.s("default associated conformance accessor for ")
		}
		c0()
		p.s(".")
		c(1)
		p.s(": ")
		c(2)
	case kAssociatedTypeMetadataAccessor:
		p.s("associated type metadata accessor for ")
		c(1)
		p.s(" in ")
		c0()
	case kBaseConformanceDescriptor:
		p.s("base conformance descriptor for ")
		c0()
		p.s(": ")
		c(1)
	case kAssociatedTypeWitnessTableAccessor:
		p.s("associated type witness table accessor for ")
		c(1)
		p.s(" : ")
		c(2)
		p.s(" in ")
		c0()
	case kBaseWitnessTableAccessor:
		p.s("base witness table accessor for ")
		c(1)
		p.s(" in ")
		c0()
	case kValueWitness:
		if k := n.first().index; k < uint64(len(valueWitnessNames)) {
			p.s(valueWitnessNames[k])
		}
		if p.opt.shortenValueWitness {
			p.s(" for ")
		} else {
			p.s(" value witness for ")
		}
		c(1)
	case kBoundGenericClass, kBoundGenericStructure, kBoundGenericEnum, kBoundGenericProtocol,
		kBoundGenericOtherNominalType, kBoundGenericTypeAlias:
		p.boundGeneric(n, depth)
	case kMetatype:
		i := 0
		if n.numChildren() == 2 {
			c0()
			p.s(" ")
			i = 1
		}
		t := n.child(i).first()
		p.withParens(t, depth)
		if isExistential(t) {
			p.s(".Protocol")
		} else {
			p.s(".Type")
		}
	case kConstrainedExistential:
		p.s("any ")
		c0()
		p.s("<")
		c(1)
		p.s(">")
	case kConstrainedExistentialRequirementList:
		p.children(n, depth, ", ")
	case kExistentialMetatype:
		i := 0
		if n.numChildren() == 2 {
			c0()
			p.s(" ")
			i = 1
		}
		c(i)
		p.s(".Type")
	case kAssociatedTypeRef:
		c0()
		p.s("." + n.child(1).text)
	case kProtocolList:
		tl := n.first()
		if tl == nil {
			return nil
		}
		if tl.numChildren() == 0 {
			p.s("Any")
		} else {
			p.children(tl, depth, " & ")
		}
	case kProtocolListWithClass:
		if n.numChildren() < 2 {
			return nil
		}
		c(1)
		p.s(" & ")
		if n.first().numChildren() < 1 {
			return nil
		}
		p.children(n.first().first(), depth, " & ")
	case kProtocolListWithAnyObject:
		if n.first().numChildren() < 1 {
			return nil
		}
		tl := n.first().first()
		if tl.numChildren() > 0 {
			p.children(tl, depth, " & ")
			p.s(" & ")
		}
		p.s("Swift.AnyObject")
	case kAllocator:
		name := "init"
		if n.first().is(kClass) {
			name = "__allocating_init"
		}
		return p.entity(n, depth, asPrefix, functionStyle, false, name, -1, "")
	case kConstructor:
		return p.entity(n, depth, asPrefix, functionStyle, n.numChildren() > 2, "init", -1, "")
	case kDestructor:
		return p.entity(n, depth, asPrefix, noType, false, "deinit", -1, "")
	case kDeallocator, kIsolatedDeallocator:
		name := "deinit"
		if n.first().is(kClass) {
			if n.kind == kDeallocator {
				name = "__deallocating_deinit"
			} else {
				name = "__isolated_deallocating_deinit"
			}
		}
		return p.entity(n, depth, asPrefix, noType, false, name, -1, "")
	case kIVarInitializer:
		return p.entity(n, depth, asPrefix, noType, false, "__ivar_initializer", -1, "")
	case kIVarDestroyer:
		return p.entity(n, depth, asPrefix, noType, false, "__ivar_destroyer", -1, "")
	case kProtocolConformance:
		if n.numChildren() == 4 {
			p.s("property behavior storage of ")
			c(2)
			p.s(" in ")
			c0()
			p.s(" : ")
			c(1)
		} else {
			c0()
			if p.opt.displayConformances {
				p.s(" : ")
				c(1)
				p.s(" in ")
				c(2)
			}
		}
	case kTypeList:
		p.children(n, depth, "")
	case kImplDifferentiabilityKind:
		p.s("@differentiable")
		switch n.index {
		case 'l':
			p.s("(_linear)")
		case 'f':
			p.s("(_forward)")
		case 'r':
			p.s("(reverse)")
		}
	case kImplCoroutineKind:
		if n.text != "" {
			p.s("@" + n.text)
		}
	case kImplParameterResultDifferentiability, kImplParameterSending, kImplParameterIsolated,
		kImplParameterImplicitLeading:
		if n.text != "" {
			p.s(n.text + " ")
		}
	case kImplFunctionConvention:
		p.s("@convention(")
		switch n.numChildren() {
		case 1:
			p.s(n.first().text)
		case 2:
			p.s(n.first().text + ", mangledCType: \"")
			c(1)
			p.s("\"")
		}
		p.s(")")
	case kImplErrorResult:
		p.s("@error ")
		p.children(n, depth, " ")
	case kImplYield:
		p.s("@yields ")
		p.children(n, depth, " ")
	case kImplParameter, kImplResult:
		c0()
		p.s(" ")
		switch n.numChildren() {
		case 3:
			c(1)
		case 4:
			c(1)
			c(2)
		}
		p.print(n.last(), depth+1, false)
	case kImplFunctionType:
		p.implFunctionType(n, depth)
	case kImplInvocationSubstitutions:
		p.s("for <")
		p.children(n.first(), depth, ", ")
		p.s(">")
	case kImplPatternSubstitutions:
		p.s("@substituted ")
		c0()
		p.s(" for <")
		p.children(n.child(1), depth, ", ")
		p.s(">")
	case kDependentPseudogenericSignature, kDependentGenericSignature:
		p.genericSignature(n, depth)
	case kDependentGenericConformanceRequirement:
		c0()
		p.s(": ")
		c(1)
	case kDependentGenericInverseConformanceRequirement:
		c0()
		p.s(": ~")
		switch i := n.child(1).index; i {
		case 0:
			p.s("Swift.Copyable")
		case 1:
			p.s("Swift.Escapable")
		default:
			p.s("Swift.<bit " + strconv.FormatUint(i, 10) + ">")
		}
	case kDependentGenericLayoutRequirement:
		c0()
		p.s(": ")
		var name string
		switch n.child(1).text {
		case "U":
			name = "_UnknownLayout"
		case "R":
			name = "_RefCountedObject"
		case "N":
			name = "_NativeRefCountedObject"
		case "C":
			name = "AnyObject"
		case "D":
			name = "_NativeClass"
		case "T", "E", "e":
			name = "_Trivial"
		case "M", "m":
			name = "_TrivialAtMost"
		}
		p.s(name)
		if n.numChildren() > 2 {
			p.s("(")
			c(2)
			if n.numChildren() > 3 {
				p.s(", ")
				c(3)
			}
			p.s(")")
		}
	case kDependentGenericSameTypeRequirement:
		c0()
		p.s(" == ")
		c(1)
	case kDependentGenericSameShapeRequirement:
		c0()
		p.s(".shape == ")
		c(1)
		p.s(".shape")
	case kDependentGenericParamType:
		p.s(genericParameterName(n.child(0).index, n.child(1).index))
	case kDependentGenericType:
		c0()
		if needSpaceBeforeType(n.child(1)) {
			p.s(" ")
		}
		c(1)
	case kDependentMemberType:
		c0()
		p.s(".")
		c(1)
	case kDependentAssociatedTypeRef:
		if n.numChildren() > 1 {
			c(1)
			p.s(".")
		}
		c0()
	case kDifferentiableFunctionType:
		p.s("@differentiable")
		switch n.index {
		case 'f':
			p.s("(_forward)")
		case 'r':
			p.s("(reverse)")
		case 'l':
			p.s("(_linear)")
		}
		p.s(" ")
	case kGlobalActorFunctionType:
		if n.numChildren() > 0 {
			p.s("@")
			c0()
			p.s(" ")
		}
	case kTypedThrowsAnnotation:
		p.s(" throws(")
		if n.numChildren() == 1 {
			c0()
		}
		p.s(")")
	case kSILBoxTypeWithLayout:
		if n.numChildren() == 3 {
			c(1)
			p.s(" ")
		}
		c0()
		if n.numChildren() == 3 {
			p.s(" <")
			p.children(n.child(2), depth, ", ")
			p.s(">")
		}
	case kSILBoxLayout:
		p.s("{")
		for i := range n.children {
			if i > 0 {
				p.s(",")
			}
			p.s(" ")
			c(i)
		}
		p.s(" }")
	case kSILBoxImmutableField, kSILBoxMutableField:
		if n.kind == kSILBoxImmutableField {
			p.s("let ")
		} else {
			p.s("var ")
		}
		c0()
	case kAssocTypePath:
		p.children(n, depth, ".")
	case kAssociatedTypeGenericParamRef:
		p.s("generic parameter reference for associated type ")
		p.children(n, depth, "")
	case kAnyProtocolConformanceList:
		if n.numChildren() > 0 {
			p.s("(")
			p.children(n, depth, ", ")
			p.s(")")
		}
	case kConcreteProtocolConformance:
		p.s("concrete protocol conformance ")
		if n.hasIndex {
			p.s("#" + strconv.FormatUint(n.index, 10) + " ")
		}
		c0()
		p.s(" to ")
		c(1)
		if n.numChildren() > 2 && n.child(2).numChildren() > 0 {
			p.s(" with conditional requirements: ")
			c(2)
		}
	case kPackProtocolConformance:
		p.s("pack protocol conformance ")
		p.children(n, depth, "")
	case kDependentAssociatedConformance:
		p.s("dependent associated conformance ")
		p.children(n, depth, "")
	case kDependentProtocolConformanceAssociated, kDependentProtocolConformanceInherited, kDependentProtocolConformanceRoot:
		switch n.kind {
		case kDependentProtocolConformanceAssociated:
			p.s("dependent associated protocol conformance ")
		case kDependentProtocolConformanceInherited:
			p.s("dependent inherited protocol conformance ")
		default:
			p.s("dependent root protocol conformance ")
		}
		if idx := n.child(2); idx != nil && idx.hasIndex {
			p.s("#" + strconv.FormatUint(idx.index, 10) + " ")
		}
		c0()
		p.s(" to ")
		c(1)
	case kDependentProtocolConformanceOpaque:
		p.s("opaque result conformance ")
		c0()
		p.s(" of ")
		c(1)
	case kProtocolConformanceRefInTypeModule:
		p.s("protocol conformance ref (type's module) ")
		p.children(n, depth, "")
	case kProtocolConformanceRefInProtocolModule:
		p.s("protocol conformance ref (protocol's module) ")
		p.children(n, depth, "")
	case kProtocolConformanceRefInOtherModule:
		p.s("protocol conformance ref (retroactive) ")
		p.children(n, depth, "")
	case kSugaredOptional:
		p.withParens(n.first(), depth)
		p.s("?")
	case kSugaredArray:
		p.s("[")
		c0()
		p.s("]")
	case kSugaredInlineArray:
		p.s("[")
		c0()
		p.s(" of ")
		c(1)
		p.s("]")
	case kSugaredDictionary:
		p.s("[")
		c0()
		p.s(" : ")
		c(1)
		p.s("]")
	case kSugaredParen:
		p.s("(")
		c0()
		p.s(")")
	case kOpaqueReturnTypeOf:
		p.s("<<opaque return type of ")
		p.children(n, depth, "")
		p.s(">>")
	case kOpaqueType:
		c0()
		p.s(".")
		c(1)
	case kAccessorFunctionReference:
		p.s("accessor function at " + strconv.FormatUint(n.index, 10))
	case kGlobalVariableOnceToken, kGlobalVariableOnceFunction:
		if n.kind == kGlobalVariableOnceToken {
			p.s("one-time initialization token for ")
		} else {
			p.s("one-time initialization function for ")
		}
		c(1)
	case kGlobalVariableOnceDeclList:
		if n.numChildren() == 1 {
			c0()
		} else {
			p.s("(")
			p.children(n, depth, ", ")
			p.s(")")
		}
	case kPredefinedObjCAsyncCompletionHandlerImpl, kObjCAsyncCompletionHandlerImpl:
		if n.kind == kPredefinedObjCAsyncCompletionHandlerImpl {
			p.s("predefined ")
		}
		p.s("@objc completion handler block implementation for ")
		if n.numChildren() >= 4 {
			c(3)
		}
		c0()
		p.s(" with result type ")
		c(1)
		switch n.child(2).index {
		case 0:
		case 1:
			p.s(" nonzero on error")
		case 2:
			p.s(" zero on error")
		default:
			p.s(" <invalid error flag>")
		}
	case kAsyncAwaitResumePartialFunction, kAsyncSuspendResumePartialFunction:
		if p.opt.showAsyncResume {
			p.s("(")
			c0()
			p.s(")")
			if n.kind == kAsyncAwaitResumePartialFunction {
				p.s(" await resume partial function for ")
			} else {
				p.s(" suspend resume partial function for ")
			}
		}
	case kExtendedExistentialTypeShape:
		save := p.opt.displayWhere
		p.opt.displayWhere = true
		var sig, t *node
		if n.numChildren() == 2 {
			sig, t = n.child(0), n.child(1)
		} else {
			t = n.child(0)
		}
		p.s("existential shape for ")
		if sig != nil {
			p.print(sig, depth+1, false)
			p.s(" ")
		}
		p.s("any ")
		p.print(t, depth+1, false)
		p.opt.displayWhere = save
	default:
		// Kinds only printed inside others (parameter counts, markers),
		// or not printable: the tree is malformed.
		p.invalid = true
	}
	return nil
}

func isExistential(n *node) bool {
	if n == nil {
		return false
	}
	switch n.kind {
	case kExistentialMetatype, kProtocolList, kProtocolListWithClass, kProtocolListWithAnyObject:
		return true
	}
	return false
}

func (p *printer) funcSigSpecParamKind(raw uint64) {
	var parts []string
	if raw&fsExistentialToGeneric != 0 {
		parts = append(parts, "Existential To Protocol Constrained Generic")
	}
	if raw&fsDead != 0 {
		parts = append(parts, "Dead")
	}
	if raw&fsOwnedToGuaranteed != 0 {
		parts = append(parts, "Owned To Guaranteed")
	}
	if raw&fsGuaranteedToOwned != 0 {
		parts = append(parts, "Guaranteed To Owned")
	}
	if raw&fsSROA != 0 {
		parts = append(parts, "Exploded")
	}
	if len(parts) > 0 {
		for i, s := range parts {
			if i > 0 {
				p.s(" and ")
			}
			p.s(s)
		}
		return
	}
	switch raw {
	case fsBoxToValue:
		p.s("Value Promoted from Box")
	case fsBoxToStack:
		p.s("Stack Promoted from Box")
	case fsInOutToOut:
		p.s("InOut Converted to Out")
	case fsConstantPropFunction:
		p.s("Constant Propagated Function")
	case fsConstantPropGlobal:
		p.s("Constant Propagated Global")
	case fsConstantPropInteger:
		p.s("Constant Propagated Integer")
	case fsConstantPropFloat:
		p.s("Constant Propagated Float")
	case fsConstantPropString:
		p.s("Constant Propagated String")
	case fsConstantPropKeyPath:
		p.s("Constant Propagated KeyPath")
	case fsClosureProp:
		p.s("Closure Propagated")
	}
}
