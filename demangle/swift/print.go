package swift

// simplePrefix are the kinds printed as a fixed text and their first child.
var simplePrefix = lazy[map[kind]string]{build: func() map[kind]string {
	return map[kind]string{
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
}}

// fixedText are the kinds printed as a fixed text alone.
var fixedText = lazy[map[kind]string]{build: func() map[kind]string {
	return map[kind]string{
		kUnknownIndex: "unknown index", kNonObjCAttribute: "@nonobjc ", kObjCAttribute: "@objc ",
		kDirectMethodReferenceAttribute: "super ", kDynamicAttribute: "dynamic ", kVTableAttribute: "override ",
		kIsSerialized: "serialized", kBuiltinTupleType: "Builtin.TheTupleType", kDynamicSelf: "Self",
		kConstrainedExistentialSelf: "Self", kImplEscaping: "@escaping", kImplErasedIsolation: "@isolated(any)",
		kImplNonisolatedNonsendingIsolation: "@caller_isolated", kImplCalledOnceFunction: "@called(once)",
		kImplSendingResult: "sending", kErrorType: "<ERROR TYPE>", kConcurrentFunctionType: "@Sendable ",
		kIsolatedAnyFunctionType: "@isolated(any) ", kNonIsolatedCallerFunctionType: "nonisolated(nonsending) ",
		kSendingResultFunctionType: "sending ", kAsyncAnnotation: " async", kThrowsAnnotation: " throws",
		kEmptyList: " empty-list ", kFirstElementMarker: " first-element-marker ", kVariadicMarker: " variadic-marker ",
		kOpaqueReturnType: "some", kAsyncFunctionPointer: "async function pointer to ",
		kBackDeploymentFallback: "back deployment fallback for ", kHasSymbolQuery: "#_hasSymbol query for ",
		kCoroFunctionPointer: "coro function pointer to ", kDefaultOverride: "default override of ",
		kAssociatedType: "", kOpaqueReturnTypeIndex: "", kOpaqueReturnTypeParent: "", kLabelList: "",
	}
}}

// thunkText are fixed texts that the simplified form leaves out.
var thunkText = lazy[map[kind]string]{build: func() map[kind]string {
	return map[kind]string{
		kMergedFunction: "merged ", kDistributedThunk: "distributed thunk ",
		kDistributedAccessor: "distributed accessor for ", kAccessibleFunctionRecord: "accessible function runtime record for ",
		kDynamicallyReplaceableFunctionKey:  "dynamically replaceable key for ",
		kDynamicallyReplaceableFunctionImpl: "dynamically replaceable thunk for ",
		kDynamicallyReplaceableFunctionVar:  "dynamically replaceable variable for ",
		kBackDeploymentThunk:                "back deployment thunk for ",
	}
}}

var storageNames = lazy[map[kind]string]{build: func() map[kind]string {
	return map[kind]string{
		kOwningAddressor: "owningAddressor", kOwningMutableAddressor: "owningMutableAddressor",
		kNativeOwningAddressor: "nativeOwningAddressor", kNativeOwningMutableAddressor: "nativeOwningMutableAddressor",
		kNativePinningAddressor: "nativePinningAddressor", kNativePinningMutableAddressor: "nativePinningMutableAddressor",
		kUnsafeAddressor: "unsafeAddressor", kUnsafeMutableAddressor: "unsafeMutableAddressor",
		kGlobalGetter: "getter", kGetter: "getter", kSetter: "setter", kMaterializeForSet: "materializeForSet",
		kWillSet: "willset", kDidSet: "didset", kReadAccessor: "read", kYieldingBorrowAccessor: "yielding_borrow",
		kModifyAccessor: "modify", kYieldingMutateAccessor: "yielding_mutate", kInitAccessor: "init",
		kBorrowAccessor: "borrow", kMutateAccessor: "mutate",
	}
}}

var attachedMacroDescriptions = lazy[map[kind]string]{build: func() map[kind]string {
	return map[kind]string{
		kAccessorAttachedMacroExpansion: "accessor", kMemberAttributeAttachedMacroExpansion: "memberAttribute",
		kMemberAttachedMacroExpansion: "member", kPeerAttachedMacroExpansion: "peer",
		kConformanceAttachedMacroExpansion: "conformance", kExtensionAttachedMacroExpansion: "extension",
		kPreambleAttachedMacroExpansion: "preamble", kBodyAttachedMacroExpansion: "body",
	}
}}

// print prints n: kinds printed as fixed text or a prefix come from the
// tables, the others from the function of their area.
// printKind tells which of print's text tables holds a kind (the first of
// them, in the order print looks), and its text there.
type printKind struct {
	table uint8
	text  string
}

// The tables of printKind.
const (
	inNone = iota
	inSimplePrefix
	inFixedText
	inThunkText
	inStorageNames
	inMacroDescriptions
)

// printKinds is each kind's printKind: one array read a node, where print
// looked a node's kind up in five maps (a fifth of demangling swiftlint's
// names).
var printKinds = lazy[*[kindCount]printKind]{build: func() *[kindCount]printKind {
	var t [kindCount]printKind
	for i, m := range []map[kind]string{simplePrefix.get(), fixedText.get(), thunkText.get(), storageNames.get(), attachedMacroDescriptions.get()} {
		for k, s := range m {
			if k < kindCount && t[k].table == inNone {
				t[k] = printKind{table: uint8(inSimplePrefix + i), text: s}
			}
		}
	}
	return &t
}}

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
	var pk printKind
	if n.kind < kindCount {
		pk = printKinds.get()[n.kind]
	}
	switch s := pk.text; pk.table {
	case inSimplePrefix:
		p.s(s)
		p.print(n.child(0), depth+1, false)
		return nil
	case inFixedText:
		p.s(s)
		return nil
	case inThunkText:
		if !p.opt.shortenThunk {
			p.s(s)
		}
		return nil
	case inStorageNames:
		if n.first() == nil {
			p.invalid = true
			return nil
		}
		return p.abstractStorage(n.first(), depth, asPrefix, s)
	}
	if desc := pk.text; pk.table == inMacroDescriptions {
		if n.numChildren() < 4 {
			p.invalid = true
			return nil
		}
		return p.entity(n, depth, asPrefix, noType, true,
			desc+" macro @"+nodeToString(n.child(2), defaultOptions)+" expansion #", int(n.child(3).index)+1, "")
	}
	// Each kind belongs to exactly one area.
	if r, ok := p.printContextNode(n, depth, asPrefix); ok {
		return r
	}
	if r, ok := p.printTypeNode(n, depth, asPrefix); ok {
		return r
	}
	if r, ok := p.printGenericNode(n, depth, asPrefix); ok {
		return r
	}
	if r, ok := p.printImplNode(n, depth, asPrefix); ok {
		return r
	}
	if r, ok := p.printWitnessNode(n, depth, asPrefix); ok {
		return r
	}
	if r, ok := p.printThunkNode(n, depth, asPrefix); ok {
		return r
	}
	if r, ok := p.printAutoDiffNode(n, depth, asPrefix); ok {
		return r
	}
	// Kinds only printed inside others (parameter counts, markers),
	// or not printable: the tree is malformed.
	p.invalid = true
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
	case fsEscapingClosureProp:
		p.s("Escaping Closure Propagated")
	case fsConstantPropStruct:
		p.s("Constant Propagated Struct")
	}
}
