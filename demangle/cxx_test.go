package demangle

import "testing"

// TestCxxLikeCxxfilt checks the full form of C++ names where the
// demangler used to differ from c++filt (GNU binutils 2.40, the wanted
// strings are its output).
func TestCxxLikeCxxfilt(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"sr_levels_are_not_substitutions",
			"_ZN4llvm4yaml7yamlizeINS_7ELFYAML14YAMLFlowStringEEENSt9enable_ifIXsr16has_ScalarTraitsIT_EE5valueEvE4typeERNS0_2IOERS5_bRNS0_12EmptyContextE",
			"std::enable_if<has_ScalarTraits<llvm::ELFYAML::YAMLFlowString>::value, void>::type llvm::yaml::yamlize<llvm::ELFYAML::YAMLFlowString>(llvm::yaml::IO&, llvm::ELFYAML::YAMLFlowString&, bool, llvm::yaml::EmptyContext&)"},
		{"sr_qualified_template_level",
			"_ZN4llvm10checkedMulIlEENSt9enable_ifIXsr3std9is_signedIT_EE5valueENS_8OptionalIS2_EEE4typeES2_S2_",
			"std::enable_if<std::is_signed<long>::value, llvm::Optional<long> >::type llvm::checkedMul<long>(long, long)"},
		{"address_of_template_function_keeps_signature",
			"_Z1fIXadL_Z1gIiEviEEEvv", "void f<&(void g<int>(int))>()"},
		{"address_of_plain_function_keeps_signature",
			"_Z1fIXadL_Z1gvEEEvv", "void f<&(g())>()"},
		{"address_of_member_drops_signature",
			"_Z1fIXadL_ZN1A1gEiEEEvv", "void f<&A::g>()"},
		{"anonymous_namespace",
			"_ZN12_GLOBAL__N_112ConformancesE", "(anonymous namespace)::Conformances"},
		{"calling_convention_parenthesized",
			"_Z1fU14swiftasynccallFvvE", "f(void ( swiftasynccall)())"},
		{"calling_convention_const_function",
			"_Z1fU3fooKFviE", "f(void ( foo)(int) const)"},
		{"std_string_spelled_out",
			"_ZNKSs4copyEPcmm", "std::basic_string<char, std::char_traits<char>, std::allocator<char> >::copy(char*, unsigned long, unsigned long) const"},
		{"no_space_after_trailing_empty_pack",
			"_ZTIN4llvm6detail9PassModelINS_8FunctionENS_21AnnotationRemarksPassENS_17PreservedAnalysesENS_15AnalysisManagerIS2_JEEEJEEE",
			"typeinfo for llvm::detail::PassModel<llvm::Function, llvm::AnnotationRemarksPass, llvm::PreservedAnalyses, llvm::AnalysisManager<llvm::Function>>"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Name(c.in, Full); got != c.want {
				t.Errorf("Name(%s, Full)\n got %s\nwant %s", c.in, got, c.want)
			}
		})
	}
	// The simplified form keeps std::string short.
	if got, want := Name("_ZNKSs4copyEPcmm", Simplified), "std::string::copy(char*, unsigned long, unsigned long) const"; got != want {
		t.Errorf("simplified: got %s, want %s", got, want)
	}
}
