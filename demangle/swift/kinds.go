// Node kinds, named and ordered as in Swift's include/swift/Demangling/DemangleNodes.def.

package swift

// The kinds of node in a demangled tree.
const (
	kNone kind = iota
	kAllocator
	kAnonymousContext
	kAnyProtocolConformanceList
	kArgumentTuple
	kAssociatedType
	kAssociatedTypeRef
	kAssociatedTypeMetadataAccessor
	kDefaultAssociatedTypeMetadataAccessor
	kAccessorAttachedMacroExpansion
	kAssociatedTypeWitnessTableAccessor
	kBaseWitnessTableAccessor
	kAutoClosureType
	kBodyAttachedMacroExpansion
	kBoundGenericClass
	kBoundGenericEnum
	kBoundGenericStructure
	kBoundGenericProtocol
	kBoundGenericOtherNominalType
	kBoundGenericTypeAlias
	kBoundGenericFunction
	kBuiltinTypeName
	kBuiltinTupleType
	kBuiltinFixedArray
	kCFunctionPointer
	kClangType
	kClass
	kClassMetadataBaseOffset
	kConcreteProtocolConformance
	kPackProtocolConformance
	kConformanceAttachedMacroExpansion
	kConstructor
	kCoroutineContinuationPrototype
	kDeallocator
	kDeclContext
	kDefaultArgumentInitializer
	kDependentAssociatedConformance
	kDependentAssociatedTypeRef
	kDependentGenericConformanceRequirement
	kDependentGenericParamCount
	kDependentGenericParamType
	kDependentGenericSameTypeRequirement
	kDependentGenericSameShapeRequirement
	kDependentGenericLayoutRequirement
	kDependentGenericParamPackMarker
	kDependentGenericSignature
	kDependentGenericType
	kDependentMemberType
	kDependentPseudogenericSignature
	kDependentProtocolConformanceRoot
	kDependentProtocolConformanceInherited
	kDependentProtocolConformanceAssociated
	kDependentProtocolConformanceOpaque
	kDestructor
	kDidSet
	kDirectness
	kDistributedThunk
	kDistributedAccessor
	kDynamicAttribute
	kDirectMethodReferenceAttribute
	kDynamicSelf
	kDynamicallyReplaceableFunctionImpl
	kDynamicallyReplaceableFunctionKey
	kDynamicallyReplaceableFunctionVar
	kEnum
	kEnumCase
	kErrorType
	kEscapingAutoClosureType
	kNoEscapeFunctionType
	kConcurrentFunctionType
	kGlobalActorFunctionType
	kDifferentiableFunctionType
	kExistentialMetatype
	kExplicitClosure
	kExtension
	kExtensionAttachedMacroExpansion
	kFieldOffset
	kFreestandingMacroExpansion
	kFullTypeMetadata
	kFunction
	kFunctionSignatureSpecialization
	kFunctionSignatureSpecializationParam
	kFunctionSignatureSpecializationReturn
	kFunctionSignatureSpecializationParamKind
	kFunctionSignatureSpecializationParamPayload
	kFunctionType
	kConstrainedExistential
	kConstrainedExistentialRequirementList
	kConstrainedExistentialSelf
	kGenericPartialSpecialization
	kGenericPartialSpecializationNotReAbstracted
	kGenericProtocolWitnessTable
	kGenericProtocolWitnessTableInstantiationFunction
	kResilientProtocolWitnessTable
	kGenericSpecialization
	kGenericSpecializationNotReAbstracted
	kGenericSpecializationInResilienceDomain
	kGenericSpecializationParam
	kGenericSpecializationPrespecialized
	kInlinedGenericFunction
	kGenericTypeMetadataPattern
	kGetter
	kGlobal
	kGlobalGetter
	kIdentifier
	kIndex
	kIVarInitializer
	kIVarDestroyer
	kImplEscaping
	kImplConvention
	kImplDifferentiabilityKind
	kImplErasedIsolation
	kImplSendingResult
	kImplParameterResultDifferentiability
	kImplParameterSending
	kImplParameterIsolated
	kImplParameterImplicitLeading
	kImplFunctionAttribute
	kImplFunctionConvention
	kImplFunctionConventionName
	kImplFunctionType
	kImplCoroutineKind
	kImplInvocationSubstitutions
	kImplicitClosure
	kImplParameter
	kImplPatternSubstitutions
	kImplResult
	kImplYield
	kImplErrorResult
	kInOut
	kInfixOperator
	kInitializer
	kInitAccessor
	kIsolated
	kIsolatedDeallocator
	kSending
	kIsolatedAnyFunctionType
	kNonIsolatedCallerFunctionType
	kSendingResultFunctionType
	kKeyPathGetterThunkHelper
	kKeyPathSetterThunkHelper
	kKeyPathUnappliedMethodThunkHelper
	kKeyPathAppliedMethodThunkHelper
	kKeyPathEqualsThunkHelper
	kKeyPathHashThunkHelper
	kLazyProtocolWitnessTableAccessor
	kLazyProtocolWitnessTableCacheVariable
	kLocalDeclName
	kMacro
	kMacroExpansionLoc
	kMacroExpansionUniqueName
	kMaterializeForSet
	kMemberAttachedMacroExpansion
	kMemberAttributeAttachedMacroExpansion
	kMergedFunction
	kMetatype
	kMetatypeRepresentation
	kMetaclass
	kMethodLookupFunction
	kObjCMetadataUpdateFunction
	kObjCResilientClassStub
	kFullObjCResilientClassStub
	kModifyAccessor
	kModify2Accessor
	kModule
	kNativeOwningAddressor
	kNativeOwningMutableAddressor
	kNativePinningAddressor
	kNativePinningMutableAddressor
	kNominalTypeDescriptor
	kNominalTypeDescriptorRecord
	kNonObjCAttribute
	kNumber
	kObjCAsyncCompletionHandlerImpl
	kPredefinedObjCAsyncCompletionHandlerImpl
	kObjCAttribute
	kObjCBlock
	kEscapingObjCBlock
	kOtherNominalType
	kOwningAddressor
	kOwningMutableAddressor
	kPartialApplyForwarder
	kPartialApplyObjCForwarder
	kPeerAttachedMacroExpansion
	kPostfixOperator
	kPreambleAttachedMacroExpansion
	kPrefixOperator
	kPrivateDeclName
	kPropertyDescriptor
	kPropertyWrapperBackingInitializer
	kPropertyWrapperInitFromProjectedValue
	kProtocol
	kProtocolSymbolicReference
	kProtocolConformance
	kProtocolConformanceRefInTypeModule
	kProtocolConformanceRefInProtocolModule
	kProtocolConformanceRefInOtherModule
	kProtocolDescriptor
	kProtocolDescriptorRecord
	kProtocolConformanceDescriptor
	kProtocolConformanceDescriptorRecord
	kProtocolList
	kProtocolListWithClass
	kProtocolListWithAnyObject
	kProtocolSelfConformanceDescriptor
	kProtocolSelfConformanceWitness
	kProtocolSelfConformanceWitnessTable
	kProtocolWitness
	kProtocolWitnessTable
	kProtocolWitnessTableAccessor
	kProtocolWitnessTablePattern
	kReabstractionThunk
	kReabstractionThunkHelper
	kReabstractionThunkHelperWithSelf
	kReabstractionThunkHelperWithGlobalActor
	kReadAccessor
	kRead2Accessor
	kRelatedEntityDeclName
	kRetroactiveConformance
	kReturnType
	kShared
	kOwned
	kSILBoxType
	kSILBoxTypeWithLayout
	kSILBoxLayout
	kSILBoxMutableField
	kSILBoxImmutableField
	kSetter
	kSpecializationPassID
	kIsSerialized
	kStatic
	kStructure
	kSubscript
	kSuffix
	kThinFunctionType
	kTuple
	kTupleElement
	kTupleElementName
	kPack
	kSILPackDirect
	kSILPackIndirect
	kPackExpansion
	kPackElement
	kPackElementLevel
	kType
	kTypeSymbolicReference
	kTypeAlias
	kTypeList
	kTypeMangling
	kTypeMetadata
	kTypeMetadataAccessFunction
	kTypeMetadataCompletionFunction
	kTypeMetadataInstantiationCache
	kTypeMetadataInstantiationFunction
	kTypeMetadataSingletonInitializationCache
	kTypeMetadataDemanglingCache
	kTypeMetadataLazyCache
	kUncurriedFunctionType
	kUnknownIndex
	kUnsafeAddressor
	kUnsafeMutableAddressor
	kValueWitness
	kValueWitnessTable
	kVariable
	kVTableThunk
	kVTableAttribute
	kWillSet
	kReflectionMetadataBuiltinDescriptor
	kReflectionMetadataFieldDescriptor
	kReflectionMetadataAssocTypeDescriptor
	kReflectionMetadataSuperclassDescriptor
	kGenericTypeParamDecl
	kCurryThunk
	kSILThunkIdentity
	kDispatchThunk
	kMethodDescriptor
	kProtocolRequirementsBaseDescriptor
	kAssociatedConformanceDescriptor
	kDefaultAssociatedConformanceAccessor
	kBaseConformanceDescriptor
	kAssociatedTypeDescriptor
	kAsyncAnnotation
	kThrowsAnnotation
	kTypedThrowsAnnotation
	kEmptyList
	kFirstElementMarker
	kVariadicMarker
	kOutlinedBridgedMethod
	kOutlinedCopy
	kOutlinedConsume
	kOutlinedRetain
	kOutlinedRelease
	kOutlinedInitializeWithTake
	kOutlinedInitializeWithCopy
	kOutlinedAssignWithTake
	kOutlinedAssignWithCopy
	kOutlinedDestroy
	kOutlinedVariable
	kOutlinedReadOnlyObject
	kAssocTypePath
	kLabelList
	kModuleDescriptor
	kExtensionDescriptor
	kAnonymousDescriptor
	kAssociatedTypeGenericParamRef
	kSugaredOptional
	kSugaredArray
	kSugaredDictionary
	kSugaredInlineArray
	kSugaredParen
	kAccessorFunctionReference
	kOpaqueType
	kOpaqueTypeDescriptorSymbolicReference
	kOpaqueTypeDescriptor
	kOpaqueTypeDescriptorRecord
	kOpaqueTypeDescriptorAccessor
	kOpaqueTypeDescriptorAccessorImpl
	kOpaqueTypeDescriptorAccessorKey
	kOpaqueTypeDescriptorAccessorVar
	kOpaqueReturnType
	kOpaqueReturnTypeOf
	kCanonicalSpecializedGenericMetaclass
	kCanonicalSpecializedGenericTypeMetadataAccessFunction
	kMetadataInstantiationCache
	kNoncanonicalSpecializedGenericTypeMetadata
	kNoncanonicalSpecializedGenericTypeMetadataCache
	kGlobalVariableOnceFunction
	kGlobalVariableOnceToken
	kGlobalVariableOnceDeclList
	kCanonicalPrespecializedGenericTypeCachingOnceToken
	kAsyncFunctionPointer
	kAutoDiffFunction
	kAutoDiffFunctionKind
	kAutoDiffSelfReorderingReabstractionThunk
	kAutoDiffSubsetParametersThunk
	kAutoDiffDerivativeVTableThunk
	kDifferentiabilityWitness
	kNoDerivative
	kIndexSubset
	kAsyncAwaitResumePartialFunction
	kAsyncSuspendResumePartialFunction
	kAccessibleFunctionRecord
	kCompileTimeLiteral
	kBackDeploymentThunk
	kBackDeploymentFallback
	kExtendedExistentialTypeShape
	kUniquable
	kUniqueExtendedExistentialTypeShapeSymbolicReference
	kNonUniqueExtendedExistentialTypeShapeSymbolicReference
	kSymbolicExtendedExistentialType
	kDroppedArgument
	kHasSymbolQuery
	kOpaqueReturnTypeIndex
	kOpaqueReturnTypeParent
	kOutlinedEnumTagStore
	kOutlinedEnumProjectDataForLoad
	kOutlinedEnumGetTag
	kAsyncRemoved
	kObjectiveCProtocolSymbolicReference
	kOutlinedInitializeWithTakeNoValueWitness
	kOutlinedInitializeWithCopyNoValueWitness
	kOutlinedAssignWithTakeNoValueWitness
	kOutlinedAssignWithCopyNoValueWitness
	kOutlinedDestroyNoValueWitness
	kDependentGenericInverseConformanceRequirement
	kInteger
	kNegativeInteger
	kDependentGenericParamValueMarker
	kCoroFunctionPointer
	kDefaultOverride
	kConstValue
	kWeak
	kUnowned
	kUnmanaged
)

var kindNames = [...]string{
	kNone:                                             "None",
	kAllocator:                                        "Allocator",
	kAnonymousContext:                                 "AnonymousContext",
	kAnyProtocolConformanceList:                       "AnyProtocolConformanceList",
	kArgumentTuple:                                    "ArgumentTuple",
	kAssociatedType:                                   "AssociatedType",
	kAssociatedTypeRef:                                "AssociatedTypeRef",
	kAssociatedTypeMetadataAccessor:                   "AssociatedTypeMetadataAccessor",
	kDefaultAssociatedTypeMetadataAccessor:            "DefaultAssociatedTypeMetadataAccessor",
	kAccessorAttachedMacroExpansion:                   "AccessorAttachedMacroExpansion",
	kAssociatedTypeWitnessTableAccessor:               "AssociatedTypeWitnessTableAccessor",
	kBaseWitnessTableAccessor:                         "BaseWitnessTableAccessor",
	kAutoClosureType:                                  "AutoClosureType",
	kBodyAttachedMacroExpansion:                       "BodyAttachedMacroExpansion",
	kBoundGenericClass:                                "BoundGenericClass",
	kBoundGenericEnum:                                 "BoundGenericEnum",
	kBoundGenericStructure:                            "BoundGenericStructure",
	kBoundGenericProtocol:                             "BoundGenericProtocol",
	kBoundGenericOtherNominalType:                     "BoundGenericOtherNominalType",
	kBoundGenericTypeAlias:                            "BoundGenericTypeAlias",
	kBoundGenericFunction:                             "BoundGenericFunction",
	kBuiltinTypeName:                                  "BuiltinTypeName",
	kBuiltinTupleType:                                 "BuiltinTupleType",
	kBuiltinFixedArray:                                "BuiltinFixedArray",
	kCFunctionPointer:                                 "CFunctionPointer",
	kClangType:                                        "ClangType",
	kClass:                                            "Class",
	kClassMetadataBaseOffset:                          "ClassMetadataBaseOffset",
	kConcreteProtocolConformance:                      "ConcreteProtocolConformance",
	kPackProtocolConformance:                          "PackProtocolConformance",
	kConformanceAttachedMacroExpansion:                "ConformanceAttachedMacroExpansion",
	kConstructor:                                      "Constructor",
	kCoroutineContinuationPrototype:                   "CoroutineContinuationPrototype",
	kDeallocator:                                      "Deallocator",
	kDeclContext:                                      "DeclContext",
	kDefaultArgumentInitializer:                       "DefaultArgumentInitializer",
	kDependentAssociatedConformance:                   "DependentAssociatedConformance",
	kDependentAssociatedTypeRef:                       "DependentAssociatedTypeRef",
	kDependentGenericConformanceRequirement:           "DependentGenericConformanceRequirement",
	kDependentGenericParamCount:                       "DependentGenericParamCount",
	kDependentGenericParamType:                        "DependentGenericParamType",
	kDependentGenericSameTypeRequirement:              "DependentGenericSameTypeRequirement",
	kDependentGenericSameShapeRequirement:             "DependentGenericSameShapeRequirement",
	kDependentGenericLayoutRequirement:                "DependentGenericLayoutRequirement",
	kDependentGenericParamPackMarker:                  "DependentGenericParamPackMarker",
	kDependentGenericSignature:                        "DependentGenericSignature",
	kDependentGenericType:                             "DependentGenericType",
	kDependentMemberType:                              "DependentMemberType",
	kDependentPseudogenericSignature:                  "DependentPseudogenericSignature",
	kDependentProtocolConformanceRoot:                 "DependentProtocolConformanceRoot",
	kDependentProtocolConformanceInherited:            "DependentProtocolConformanceInherited",
	kDependentProtocolConformanceAssociated:           "DependentProtocolConformanceAssociated",
	kDependentProtocolConformanceOpaque:               "DependentProtocolConformanceOpaque",
	kDestructor:                                       "Destructor",
	kDidSet:                                           "DidSet",
	kDirectness:                                       "Directness",
	kDistributedThunk:                                 "DistributedThunk",
	kDistributedAccessor:                              "DistributedAccessor",
	kDynamicAttribute:                                 "DynamicAttribute",
	kDirectMethodReferenceAttribute:                   "DirectMethodReferenceAttribute",
	kDynamicSelf:                                      "DynamicSelf",
	kDynamicallyReplaceableFunctionImpl:               "DynamicallyReplaceableFunctionImpl",
	kDynamicallyReplaceableFunctionKey:                "DynamicallyReplaceableFunctionKey",
	kDynamicallyReplaceableFunctionVar:                "DynamicallyReplaceableFunctionVar",
	kEnum:                                             "Enum",
	kEnumCase:                                         "EnumCase",
	kErrorType:                                        "ErrorType",
	kEscapingAutoClosureType:                          "EscapingAutoClosureType",
	kNoEscapeFunctionType:                             "NoEscapeFunctionType",
	kConcurrentFunctionType:                           "ConcurrentFunctionType",
	kGlobalActorFunctionType:                          "GlobalActorFunctionType",
	kDifferentiableFunctionType:                       "DifferentiableFunctionType",
	kExistentialMetatype:                              "ExistentialMetatype",
	kExplicitClosure:                                  "ExplicitClosure",
	kExtension:                                        "Extension",
	kExtensionAttachedMacroExpansion:                  "ExtensionAttachedMacroExpansion",
	kFieldOffset:                                      "FieldOffset",
	kFreestandingMacroExpansion:                       "FreestandingMacroExpansion",
	kFullTypeMetadata:                                 "FullTypeMetadata",
	kFunction:                                         "Function",
	kFunctionSignatureSpecialization:                  "FunctionSignatureSpecialization",
	kFunctionSignatureSpecializationParam:             "FunctionSignatureSpecializationParam",
	kFunctionSignatureSpecializationReturn:            "FunctionSignatureSpecializationReturn",
	kFunctionSignatureSpecializationParamKind:         "FunctionSignatureSpecializationParamKind",
	kFunctionSignatureSpecializationParamPayload:      "FunctionSignatureSpecializationParamPayload",
	kFunctionType:                                     "FunctionType",
	kConstrainedExistential:                           "ConstrainedExistential",
	kConstrainedExistentialRequirementList:            "ConstrainedExistentialRequirementList",
	kConstrainedExistentialSelf:                       "ConstrainedExistentialSelf",
	kGenericPartialSpecialization:                     "GenericPartialSpecialization",
	kGenericPartialSpecializationNotReAbstracted:      "GenericPartialSpecializationNotReAbstracted",
	kGenericProtocolWitnessTable:                      "GenericProtocolWitnessTable",
	kGenericProtocolWitnessTableInstantiationFunction: "GenericProtocolWitnessTableInstantiationFunction",
	kResilientProtocolWitnessTable:                    "ResilientProtocolWitnessTable",
	kGenericSpecialization:                            "GenericSpecialization",
	kGenericSpecializationNotReAbstracted:             "GenericSpecializationNotReAbstracted",
	kGenericSpecializationInResilienceDomain:          "GenericSpecializationInResilienceDomain",
	kGenericSpecializationParam:                       "GenericSpecializationParam",
	kGenericSpecializationPrespecialized:              "GenericSpecializationPrespecialized",
	kInlinedGenericFunction:                           "InlinedGenericFunction",
	kGenericTypeMetadataPattern:                       "GenericTypeMetadataPattern",
	kGetter:                                           "Getter",
	kGlobal:                                           "Global",
	kGlobalGetter:                                     "GlobalGetter",
	kIdentifier:                                       "Identifier",
	kIndex:                                            "Index",
	kIVarInitializer:                                  "IVarInitializer",
	kIVarDestroyer:                                    "IVarDestroyer",
	kImplEscaping:                                     "ImplEscaping",
	kImplConvention:                                   "ImplConvention",
	kImplDifferentiabilityKind:                        "ImplDifferentiabilityKind",
	kImplErasedIsolation:                              "ImplErasedIsolation",
	kImplSendingResult:                                "ImplSendingResult",
	kImplParameterResultDifferentiability:             "ImplParameterResultDifferentiability",
	kImplParameterSending:                             "ImplParameterSending",
	kImplParameterIsolated:                            "ImplParameterIsolated",
	kImplParameterImplicitLeading:                     "ImplParameterImplicitLeading",
	kImplFunctionAttribute:                            "ImplFunctionAttribute",
	kImplFunctionConvention:                           "ImplFunctionConvention",
	kImplFunctionConventionName:                       "ImplFunctionConventionName",
	kImplFunctionType:                                 "ImplFunctionType",
	kImplCoroutineKind:                                "ImplCoroutineKind",
	kImplInvocationSubstitutions:                      "ImplInvocationSubstitutions",
	kImplicitClosure:                                  "ImplicitClosure",
	kImplParameter:                                    "ImplParameter",
	kImplPatternSubstitutions:                         "ImplPatternSubstitutions",
	kImplResult:                                       "ImplResult",
	kImplYield:                                        "ImplYield",
	kImplErrorResult:                                  "ImplErrorResult",
	kInOut:                                            "InOut",
	kInfixOperator:                                    "InfixOperator",
	kInitializer:                                      "Initializer",
	kInitAccessor:                                     "InitAccessor",
	kIsolated:                                         "Isolated",
	kIsolatedDeallocator:                              "IsolatedDeallocator",
	kSending:                                          "Sending",
	kIsolatedAnyFunctionType:                          "IsolatedAnyFunctionType",
	kNonIsolatedCallerFunctionType:                    "NonIsolatedCallerFunctionType",
	kSendingResultFunctionType:                        "SendingResultFunctionType",
	kKeyPathGetterThunkHelper:                         "KeyPathGetterThunkHelper",
	kKeyPathSetterThunkHelper:                         "KeyPathSetterThunkHelper",
	kKeyPathUnappliedMethodThunkHelper:                "KeyPathUnappliedMethodThunkHelper",
	kKeyPathAppliedMethodThunkHelper:                  "KeyPathAppliedMethodThunkHelper",
	kKeyPathEqualsThunkHelper:                         "KeyPathEqualsThunkHelper",
	kKeyPathHashThunkHelper:                           "KeyPathHashThunkHelper",
	kLazyProtocolWitnessTableAccessor:                 "LazyProtocolWitnessTableAccessor",
	kLazyProtocolWitnessTableCacheVariable:            "LazyProtocolWitnessTableCacheVariable",
	kLocalDeclName:                                    "LocalDeclName",
	kMacro:                                            "Macro",
	kMacroExpansionLoc:                                "MacroExpansionLoc",
	kMacroExpansionUniqueName:                         "MacroExpansionUniqueName",
	kMaterializeForSet:                                "MaterializeForSet",
	kMemberAttachedMacroExpansion:                     "MemberAttachedMacroExpansion",
	kMemberAttributeAttachedMacroExpansion:            "MemberAttributeAttachedMacroExpansion",
	kMergedFunction:                                   "MergedFunction",
	kMetatype:                                         "Metatype",
	kMetatypeRepresentation:                           "MetatypeRepresentation",
	kMetaclass:                                        "Metaclass",
	kMethodLookupFunction:                             "MethodLookupFunction",
	kObjCMetadataUpdateFunction:                       "ObjCMetadataUpdateFunction",
	kObjCResilientClassStub:                           "ObjCResilientClassStub",
	kFullObjCResilientClassStub:                       "FullObjCResilientClassStub",
	kModifyAccessor:                                   "ModifyAccessor",
	kModify2Accessor:                                  "Modify2Accessor",
	kModule:                                           "Module",
	kNativeOwningAddressor:                            "NativeOwningAddressor",
	kNativeOwningMutableAddressor:                     "NativeOwningMutableAddressor",
	kNativePinningAddressor:                           "NativePinningAddressor",
	kNativePinningMutableAddressor:                    "NativePinningMutableAddressor",
	kNominalTypeDescriptor:                            "NominalTypeDescriptor",
	kNominalTypeDescriptorRecord:                      "NominalTypeDescriptorRecord",
	kNonObjCAttribute:                                 "NonObjCAttribute",
	kNumber:                                           "Number",
	kObjCAsyncCompletionHandlerImpl:                   "ObjCAsyncCompletionHandlerImpl",
	kPredefinedObjCAsyncCompletionHandlerImpl:         "PredefinedObjCAsyncCompletionHandlerImpl",
	kObjCAttribute:                                    "ObjCAttribute",
	kObjCBlock:                                        "ObjCBlock",
	kEscapingObjCBlock:                                "EscapingObjCBlock",
	kOtherNominalType:                                 "OtherNominalType",
	kOwningAddressor:                                  "OwningAddressor",
	kOwningMutableAddressor:                           "OwningMutableAddressor",
	kPartialApplyForwarder:                            "PartialApplyForwarder",
	kPartialApplyObjCForwarder:                        "PartialApplyObjCForwarder",
	kPeerAttachedMacroExpansion:                       "PeerAttachedMacroExpansion",
	kPostfixOperator:                                  "PostfixOperator",
	kPreambleAttachedMacroExpansion:                   "PreambleAttachedMacroExpansion",
	kPrefixOperator:                                   "PrefixOperator",
	kPrivateDeclName:                                  "PrivateDeclName",
	kPropertyDescriptor:                               "PropertyDescriptor",
	kPropertyWrapperBackingInitializer:                "PropertyWrapperBackingInitializer",
	kPropertyWrapperInitFromProjectedValue:            "PropertyWrapperInitFromProjectedValue",
	kProtocol:                                         "Protocol",
	kProtocolSymbolicReference:                        "ProtocolSymbolicReference",
	kProtocolConformance:                              "ProtocolConformance",
	kProtocolConformanceRefInTypeModule:               "ProtocolConformanceRefInTypeModule",
	kProtocolConformanceRefInProtocolModule:           "ProtocolConformanceRefInProtocolModule",
	kProtocolConformanceRefInOtherModule:              "ProtocolConformanceRefInOtherModule",
	kProtocolDescriptor:                               "ProtocolDescriptor",
	kProtocolDescriptorRecord:                         "ProtocolDescriptorRecord",
	kProtocolConformanceDescriptor:                    "ProtocolConformanceDescriptor",
	kProtocolConformanceDescriptorRecord:              "ProtocolConformanceDescriptorRecord",
	kProtocolList:                                     "ProtocolList",
	kProtocolListWithClass:                            "ProtocolListWithClass",
	kProtocolListWithAnyObject:                        "ProtocolListWithAnyObject",
	kProtocolSelfConformanceDescriptor:                "ProtocolSelfConformanceDescriptor",
	kProtocolSelfConformanceWitness:                   "ProtocolSelfConformanceWitness",
	kProtocolSelfConformanceWitnessTable:              "ProtocolSelfConformanceWitnessTable",
	kProtocolWitness:                                  "ProtocolWitness",
	kProtocolWitnessTable:                             "ProtocolWitnessTable",
	kProtocolWitnessTableAccessor:                     "ProtocolWitnessTableAccessor",
	kProtocolWitnessTablePattern:                      "ProtocolWitnessTablePattern",
	kReabstractionThunk:                               "ReabstractionThunk",
	kReabstractionThunkHelper:                         "ReabstractionThunkHelper",
	kReabstractionThunkHelperWithSelf:                 "ReabstractionThunkHelperWithSelf",
	kReabstractionThunkHelperWithGlobalActor:          "ReabstractionThunkHelperWithGlobalActor",
	kReadAccessor:                                     "ReadAccessor",
	kRead2Accessor:                                    "Read2Accessor",
	kRelatedEntityDeclName:                            "RelatedEntityDeclName",
	kRetroactiveConformance:                           "RetroactiveConformance",
	kReturnType:                                       "ReturnType",
	kShared:                                           "Shared",
	kOwned:                                            "Owned",
	kSILBoxType:                                       "SILBoxType",
	kSILBoxTypeWithLayout:                             "SILBoxTypeWithLayout",
	kSILBoxLayout:                                     "SILBoxLayout",
	kSILBoxMutableField:                               "SILBoxMutableField",
	kSILBoxImmutableField:                             "SILBoxImmutableField",
	kSetter:                                           "Setter",
	kSpecializationPassID:                             "SpecializationPassID",
	kIsSerialized:                                     "IsSerialized",
	kStatic:                                           "Static",
	kStructure:                                        "Structure",
	kSubscript:                                        "Subscript",
	kSuffix:                                           "Suffix",
	kThinFunctionType:                                 "ThinFunctionType",
	kTuple:                                            "Tuple",
	kTupleElement:                                     "TupleElement",
	kTupleElementName:                                 "TupleElementName",
	kPack:                                             "Pack",
	kSILPackDirect:                                    "SILPackDirect",
	kSILPackIndirect:                                  "SILPackIndirect",
	kPackExpansion:                                    "PackExpansion",
	kPackElement:                                      "PackElement",
	kPackElementLevel:                                 "PackElementLevel",
	kType:                                             "Type",
	kTypeSymbolicReference:                            "TypeSymbolicReference",
	kTypeAlias:                                        "TypeAlias",
	kTypeList:                                         "TypeList",
	kTypeMangling:                                     "TypeMangling",
	kTypeMetadata:                                     "TypeMetadata",
	kTypeMetadataAccessFunction:                       "TypeMetadataAccessFunction",
	kTypeMetadataCompletionFunction:                   "TypeMetadataCompletionFunction",
	kTypeMetadataInstantiationCache:                   "TypeMetadataInstantiationCache",
	kTypeMetadataInstantiationFunction:                "TypeMetadataInstantiationFunction",
	kTypeMetadataSingletonInitializationCache:         "TypeMetadataSingletonInitializationCache",
	kTypeMetadataDemanglingCache:                      "TypeMetadataDemanglingCache",
	kTypeMetadataLazyCache:                            "TypeMetadataLazyCache",
	kUncurriedFunctionType:                            "UncurriedFunctionType",
	kUnknownIndex:                                     "UnknownIndex",
	kUnsafeAddressor:                                  "UnsafeAddressor",
	kUnsafeMutableAddressor:                           "UnsafeMutableAddressor",
	kValueWitness:                                     "ValueWitness",
	kValueWitnessTable:                                "ValueWitnessTable",
	kVariable:                                         "Variable",
	kVTableThunk:                                      "VTableThunk",
	kVTableAttribute:                                  "VTableAttribute",
	kWillSet:                                          "WillSet",
	kReflectionMetadataBuiltinDescriptor:              "ReflectionMetadataBuiltinDescriptor",
	kReflectionMetadataFieldDescriptor:                "ReflectionMetadataFieldDescriptor",
	kReflectionMetadataAssocTypeDescriptor:            "ReflectionMetadataAssocTypeDescriptor",
	kReflectionMetadataSuperclassDescriptor:           "ReflectionMetadataSuperclassDescriptor",
	kGenericTypeParamDecl:                             "GenericTypeParamDecl",
	kCurryThunk:                                       "CurryThunk",
	kSILThunkIdentity:                                 "SILThunkIdentity",
	kDispatchThunk:                                    "DispatchThunk",
	kMethodDescriptor:                                 "MethodDescriptor",
	kProtocolRequirementsBaseDescriptor:               "ProtocolRequirementsBaseDescriptor",
	kAssociatedConformanceDescriptor:                  "AssociatedConformanceDescriptor",
	kDefaultAssociatedConformanceAccessor:             "DefaultAssociatedConformanceAccessor",
	kBaseConformanceDescriptor:                        "BaseConformanceDescriptor",
	kAssociatedTypeDescriptor:                         "AssociatedTypeDescriptor",
	kAsyncAnnotation:                                  "AsyncAnnotation",
	kThrowsAnnotation:                                 "ThrowsAnnotation",
	kTypedThrowsAnnotation:                            "TypedThrowsAnnotation",
	kEmptyList:                                        "EmptyList",
	kFirstElementMarker:                               "FirstElementMarker",
	kVariadicMarker:                                   "VariadicMarker",
	kOutlinedBridgedMethod:                            "OutlinedBridgedMethod",
	kOutlinedCopy:                                     "OutlinedCopy",
	kOutlinedConsume:                                  "OutlinedConsume",
	kOutlinedRetain:                                   "OutlinedRetain",
	kOutlinedRelease:                                  "OutlinedRelease",
	kOutlinedInitializeWithTake:                       "OutlinedInitializeWithTake",
	kOutlinedInitializeWithCopy:                       "OutlinedInitializeWithCopy",
	kOutlinedAssignWithTake:                           "OutlinedAssignWithTake",
	kOutlinedAssignWithCopy:                           "OutlinedAssignWithCopy",
	kOutlinedDestroy:                                  "OutlinedDestroy",
	kOutlinedVariable:                                 "OutlinedVariable",
	kOutlinedReadOnlyObject:                           "OutlinedReadOnlyObject",
	kAssocTypePath:                                    "AssocTypePath",
	kLabelList:                                        "LabelList",
	kModuleDescriptor:                                 "ModuleDescriptor",
	kExtensionDescriptor:                              "ExtensionDescriptor",
	kAnonymousDescriptor:                              "AnonymousDescriptor",
	kAssociatedTypeGenericParamRef:                    "AssociatedTypeGenericParamRef",
	kSugaredOptional:                                  "SugaredOptional",
	kSugaredArray:                                     "SugaredArray",
	kSugaredDictionary:                                "SugaredDictionary",
	kSugaredInlineArray:                               "SugaredInlineArray",
	kSugaredParen:                                     "SugaredParen",
	kAccessorFunctionReference:                        "AccessorFunctionReference",
	kOpaqueType:                                       "OpaqueType",
	kOpaqueTypeDescriptorSymbolicReference:            "OpaqueTypeDescriptorSymbolicReference",
	kOpaqueTypeDescriptor:                             "OpaqueTypeDescriptor",
	kOpaqueTypeDescriptorRecord:                       "OpaqueTypeDescriptorRecord",
	kOpaqueTypeDescriptorAccessor:                     "OpaqueTypeDescriptorAccessor",
	kOpaqueTypeDescriptorAccessorImpl:                 "OpaqueTypeDescriptorAccessorImpl",
	kOpaqueTypeDescriptorAccessorKey:                  "OpaqueTypeDescriptorAccessorKey",
	kOpaqueTypeDescriptorAccessorVar:                  "OpaqueTypeDescriptorAccessorVar",
	kOpaqueReturnType:                                 "OpaqueReturnType",
	kOpaqueReturnTypeOf:                               "OpaqueReturnTypeOf",
	kCanonicalSpecializedGenericMetaclass:             "CanonicalSpecializedGenericMetaclass",
	kCanonicalSpecializedGenericTypeMetadataAccessFunction:  "CanonicalSpecializedGenericTypeMetadataAccessFunction",
	kMetadataInstantiationCache:                             "MetadataInstantiationCache",
	kNoncanonicalSpecializedGenericTypeMetadata:             "NoncanonicalSpecializedGenericTypeMetadata",
	kNoncanonicalSpecializedGenericTypeMetadataCache:        "NoncanonicalSpecializedGenericTypeMetadataCache",
	kGlobalVariableOnceFunction:                             "GlobalVariableOnceFunction",
	kGlobalVariableOnceToken:                                "GlobalVariableOnceToken",
	kGlobalVariableOnceDeclList:                             "GlobalVariableOnceDeclList",
	kCanonicalPrespecializedGenericTypeCachingOnceToken:     "CanonicalPrespecializedGenericTypeCachingOnceToken",
	kAsyncFunctionPointer:                                   "AsyncFunctionPointer",
	kAutoDiffFunction:                                       "AutoDiffFunction",
	kAutoDiffFunctionKind:                                   "AutoDiffFunctionKind",
	kAutoDiffSelfReorderingReabstractionThunk:               "AutoDiffSelfReorderingReabstractionThunk",
	kAutoDiffSubsetParametersThunk:                          "AutoDiffSubsetParametersThunk",
	kAutoDiffDerivativeVTableThunk:                          "AutoDiffDerivativeVTableThunk",
	kDifferentiabilityWitness:                               "DifferentiabilityWitness",
	kNoDerivative:                                           "NoDerivative",
	kIndexSubset:                                            "IndexSubset",
	kAsyncAwaitResumePartialFunction:                        "AsyncAwaitResumePartialFunction",
	kAsyncSuspendResumePartialFunction:                      "AsyncSuspendResumePartialFunction",
	kAccessibleFunctionRecord:                               "AccessibleFunctionRecord",
	kCompileTimeLiteral:                                     "CompileTimeLiteral",
	kBackDeploymentThunk:                                    "BackDeploymentThunk",
	kBackDeploymentFallback:                                 "BackDeploymentFallback",
	kExtendedExistentialTypeShape:                           "ExtendedExistentialTypeShape",
	kUniquable:                                              "Uniquable",
	kUniqueExtendedExistentialTypeShapeSymbolicReference:    "UniqueExtendedExistentialTypeShapeSymbolicReference",
	kNonUniqueExtendedExistentialTypeShapeSymbolicReference: "NonUniqueExtendedExistentialTypeShapeSymbolicReference",
	kSymbolicExtendedExistentialType:                        "SymbolicExtendedExistentialType",
	kDroppedArgument:                                        "DroppedArgument",
	kHasSymbolQuery:                                         "HasSymbolQuery",
	kOpaqueReturnTypeIndex:                                  "OpaqueReturnTypeIndex",
	kOpaqueReturnTypeParent:                                 "OpaqueReturnTypeParent",
	kOutlinedEnumTagStore:                                   "OutlinedEnumTagStore",
	kOutlinedEnumProjectDataForLoad:                         "OutlinedEnumProjectDataForLoad",
	kOutlinedEnumGetTag:                                     "OutlinedEnumGetTag",
	kAsyncRemoved:                                           "AsyncRemoved",
	kObjectiveCProtocolSymbolicReference:                    "ObjectiveCProtocolSymbolicReference",
	kOutlinedInitializeWithTakeNoValueWitness:               "OutlinedInitializeWithTakeNoValueWitness",
	kOutlinedInitializeWithCopyNoValueWitness:               "OutlinedInitializeWithCopyNoValueWitness",
	kOutlinedAssignWithTakeNoValueWitness:                   "OutlinedAssignWithTakeNoValueWitness",
	kOutlinedAssignWithCopyNoValueWitness:                   "OutlinedAssignWithCopyNoValueWitness",
	kOutlinedDestroyNoValueWitness:                          "OutlinedDestroyNoValueWitness",
	kDependentGenericInverseConformanceRequirement:          "DependentGenericInverseConformanceRequirement",
	kInteger:                          "Integer",
	kNegativeInteger:                  "NegativeInteger",
	kDependentGenericParamValueMarker: "DependentGenericParamValueMarker",
	kCoroFunctionPointer:              "CoroFunctionPointer",
	kDefaultOverride:                  "DefaultOverride",
	kConstValue:                       "ConstValue",
	kWeak:                             "Weak",
	kUnowned:                          "Unowned",
	kUnmanaged:                        "Unmanaged",
}

// contextKinds are the kinds that can be a declaration context.
var contextKinds = [...]bool{
	kAllocator:                             true,
	kAnonymousContext:                      true,
	kClass:                                 true,
	kConstructor:                           true,
	kDeallocator:                           true,
	kDefaultArgumentInitializer:            true,
	kDestructor:                            true,
	kDidSet:                                true,
	kEnum:                                  true,
	kExplicitClosure:                       true,
	kExtension:                             true,
	kFunction:                              true,
	kGetter:                                true,
	kGlobalGetter:                          true,
	kIVarInitializer:                       true,
	kIVarDestroyer:                         true,
	kImplicitClosure:                       true,
	kInitializer:                           true,
	kInitAccessor:                          true,
	kIsolatedDeallocator:                   true,
	kMaterializeForSet:                     true,
	kModifyAccessor:                        true,
	kModify2Accessor:                       true,
	kModule:                                true,
	kNativeOwningAddressor:                 true,
	kNativeOwningMutableAddressor:          true,
	kNativePinningAddressor:                true,
	kNativePinningMutableAddressor:         true,
	kOtherNominalType:                      true,
	kOwningAddressor:                       true,
	kOwningMutableAddressor:                true,
	kPropertyWrapperBackingInitializer:     true,
	kPropertyWrapperInitFromProjectedValue: true,
	kProtocol:                              true,
	kProtocolSymbolicReference:             true,
	kReadAccessor:                          true,
	kRead2Accessor:                         true,
	kSetter:                                true,
	kStatic:                                true,
	kStructure:                             true,
	kSubscript:                             true,
	kTypeSymbolicReference:                 true,
	kTypeAlias:                             true,
	kUnsafeAddressor:                       true,
	kUnsafeMutableAddressor:                true,
	kVariable:                              true,
	kWillSet:                               true,
	kOpaqueReturnTypeOf:                    true,
	kAutoDiffFunction:                      true,
	kBuiltinTupleType:                      true,
	kLast:                                  false,
}

const kLast = kUnmanaged
