package demangle

import (
	"fmt"
	"testing"

	"github.com/ianlancetaylor/demangle"
)

// cxxFullDemangler is cxx without the fast path: the full demangler alone.
func cxxFullDemangler(s string, f Form) (string, bool) {
	opts := cxxSimplified
	if f != Simplified {
		opts = cxxFull
	}
	d, err := demangle.ToString(s, opts...)
	return d, err == nil
}

// TestCxxFastEqualsFull checks that, on the 20,000 names of the C++
// corpus, every name the fast path takes comes out as the full
// demangler prints it, in both forms, and that it takes most of them.
func TestCxxFastEqualsFull(t *testing.T) {
	names := cxxCorpus(t)
	taken := 0
	var diff []string
	for _, n := range names {
		for _, f := range []Form{Simplified, Full} {
			got, ok := cxxFast(n, f)
			if !ok {
				continue
			}
			if f == Simplified {
				taken++
			}
			if want, wok := cxxFullDemangler(n, f); !wok || got != want {
				diff = append(diff, fmt.Sprintf("%s (form %d)\n   got %s\n  want %s (ok %v)", n, f, got, want, wok))
			}
		}
	}
	t.Logf("the fast path takes %d of %d names (%.1f%%)", taken, len(names), 100*float64(taken)/float64(len(names)))
	for _, d := range diff[:min(len(diff), 20)] {
		t.Error(d)
	}
	if len(diff) > 0 {
		t.Fatalf("%d names differ from the full demangler", len(diff))
	}
	if taken*10 < len(names)*6 {
		t.Errorf("the fast path takes %d of %d names, fewer than 60%%", taken, len(names))
	}
}

// TestCxxFast checks the shapes the fast path prints (the wanted strings
// are c++filt's) and some it leaves to the full demangler.
func TestCxxFast(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"_Z3fooi", "foo(int)"},
		{"_Z3foov", "foo()"},
		{"_ZN1a1b1fERKS0_", "a::b::f(a::b const&)"},
		{"_ZNK1a1fEPKcz", "a::f(char const*, ...) const"},
		{"_ZN1aC2Ev", "a::a()"},
		{"_ZN1aD0Ev", "a::~a()"},
		{"_ZNSt6vectorIiSaIiEEC2Ev", "std::vector<int, std::allocator<int> >::vector()"},
		{"_ZN1a1fIiEEvT_", "void a::f<int>(int)"},
		{"_ZN1a1fILb1ELi3ELm256EEEPcv", "char* a::f<true, 3, 256ul>()"},
		{"_ZN2v84baseL3divEii", "v8::base::div(int, int)"},
		{"_ZN12_GLOBAL__N_13fooEOS_", "(anonymous namespace)::foo((anonymous namespace)&&)"},
		{"_ZN1a1bINS_1cIiEEE1fERKS3_", "a::b<a::c<int> >::f(a::b<a::c<int> > const&)"},
		{"_ZN4llvmlsERNS_11raw_ostreamERKNS_5APIntE", "llvm::operator<<(llvm::raw_ostream&, llvm::APInt const&)"},
		{"_ZN1aaSEOS_", "a::operator=(a&&)"},
		{"_ZN4llvm3sys22getDefaultTargetTripleB5cxx11Ev", "llvm::sys::getDefaultTargetTriple[abi:cxx11]()"},
		{"_ZNKR1a1fEv", "a::f() const &"},
		{"_ZN4llvm8SCCPPass3runERNS_8FunctionERNS_15AnalysisManagerIS1_JEEE", "llvm::SCCPPass::run(llvm::Function&, llvm::AnalysisManager<llvm::Function>&)"},
		{"_ZN4llvm12hash_combineIJjPNS_5ValueENS_9hash_codeEEEES3_DpRKT_", "llvm::hash_code llvm::hash_combine<unsigned int, llvm::Value*, llvm::hash_code>(unsigned int const&, llvm::Value* const&, llvm::hash_code const&)"},
		{"_ZN4llvm27install_fatal_error_handlerEPFvPvPKcbES0_", "llvm::install_fatal_error_handler(void (*)(void*, char const*, bool), void*)"},
		{"_ZN1a1fERKSt8functionIFbiEE", "a::f(std::function<bool (int)> const&)"},
		{"_Z1fRFviE", "f(void (&)(int))"},
		{"_Z1fOFviE", "f(void (&&)(int))"},
		{"_ZThn56_N4node5http211Http2Stream9ReadStartEv", "non-virtual thunk to node::http2::Http2Stream::ReadStart()"},
		{"_ZTv0_n24_N1a1fEv", "virtual thunk to a::f()"},
		{"_ZN4node11SPrintFImplIRiJRjEEENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEPKcOT_DpOT0_",
			"std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > node::SPrintFImpl<int&, unsigned int&>(char const*, int&, unsigned int&)"},
		// Local names and lambdas.
		{"_ZZN1a1fEvENKUlvE_clEv", "a::f()::{lambda()#1}::operator()() const"},
		{"_ZZN1a1fEiENKUlPKcE0_clES1_", "a::f(int)::{lambda(char const*)#2}::operator()(char const*) const"},
		{"_ZN1a1fIZNS_1gEvEUlvE_EEvT_", "void a::f<a::g()::{lambda()#1}>(a::g()::{lambda()#1})"},
		{"_ZN1a1fIZNKS_1gIiEEvT_EUlvE_EEvS3_", "void a::f<a::g<int>(int) const::{lambda()#1}>(a::g<int>(int) const::{lambda()#1})"},
		{"_ZZN1a1fIiEEvT_ENKUlvE_clEv", "a::f<int>(int)::{lambda()#1}::operator()() const"},
		{"_ZZZN1a1fEvENKUlvE_clEvENKUliE_clEi", "a::f()::{lambda()#1}::operator()() const::{lambda(int)#1}::operator()(int) const"},
		{"_ZZN4node11Environment15InitializeLibuvEvENUlP10uv_async_sE_4_FUNES2_", "node::Environment::InitializeLibuv()::{lambda(uv_async_s*)#1}::_FUN(uv_async_s*)"},
		{"_ZZN1a1fEvEN1b1gEv", "a::f()::b::g()"},
		{"_ZZN1a1fEvEN1b1gE_0v", "a::f()::b::g()"},
		{"_ZZN1a1fEvE1x__12_", "a::f()::x"},
		{"_ZN1a1hIZNS_1fEvE1x_1EEvv", "void a::h<a::f()::x>()"},
		{"_ZN1a1hIZNS_1fEvE1x__11_EEvv", "void a::h<a::f()::x>()"},
		{"_ZN1aUt_1fEv", "a::{unnamed type#1}::f()"},
		// auto, decltype(nullptr), null pointers, packs expanded in
		// packs, pointers to members.
		{"_ZN2v88internal8compiler12PipelineImpl3RunINS1_10TyperPhaseEJPNS1_5TyperEEEEDaDpOT0_",
			"auto v8::internal::compiler::PipelineImpl::Run<v8::internal::compiler::TyperPhase, v8::internal::compiler::Typer*>(v8::internal::compiler::Typer*&&)"},
		{"_ZN4llvm12is_containedIRNS_11SmallVectorIPNS_5ValueELj4EEEDnEEbOT_RKT0_",
			"bool llvm::is_contained<llvm::SmallVector<llvm::Value*, 4u>&, decltype(nullptr)>(llvm::SmallVector<llvm::Value*, 4u>&, decltype(nullptr) const&)"},
		{"_ZN4node18SnapshotSerializer5WriteIN2v811StartupDataELPv0ELS4_0EEEmRKT_",
			"unsigned long node::SnapshotSerializer::Write<v8::StartupData, (void*)0, (void*)0>(v8::StartupData const&)"},
		{"_ZN2v84base8CallOnceIJPviEvEEvPSt6atomicIhENS0_16FunctionWithArgsIJDpT_EE4typeE",
			"void v8::base::CallOnce<void*, int, void>(std::atomic<unsigned char>*, v8::base::FunctionWithArgs<void*, int>::type)"},
		{"_Z1fM1aPc", "f(char* a::*)"},
		{"_Z1fM1aKi", "f(int const a::*)"},
		{"_Z1fM1aFviES1_", "f(void (a::*)(int), void (a::*)(int))"},
		{"_ZN6disasm15DisassemblerX6423PrintRightOperandHelperEPhMS0_KFPKciE",
			"disasm::DisassemblerX64::PrintRightOperandHelper(unsigned char*, char const* (disasm::DisassemblerX64::*)(int) const)"},
		// Arrays, generic lambdas, enums of std.
		{"_ZN1a1fIA_cEEvv", "void a::f<char []>()"},
		{"_ZN1a1fIA16_KcEEvv", "void a::f<char const [16]>()"},
		{"_ZN1a1fIA16_cEEvRT_", "void a::f<char [16]>(char (&) [16])"},
		{"_Z1fPA3_i", "f(int (*) [3])"},
		{"_Z1fRA3_A4_i", "f(int (&) [3][4])"},
		{"_Z1fRA30_Kc", "f(char const (&) [30])"},
		{"_ZZN1a1fEvENKUlRT_RT0_E_clEv", "a::f()::{lambda(auto:1&, auto:2&)#1}::operator()() const"},
		{"_ZN1a1fILSt12memory_order0EEEvv", "void a::f<(std::memory_order)0>()"},
		// Expansions of packs of function pointers and arrays, const
		// arrays, std:: operator templates, a template argument's value.
		{"_ZN4llvm10make_errorINS_11StringErrorEJRA19_KcSt10error_codeEEENS_5ErrorEDpOT0_",
			"llvm::Error llvm::make_error<llvm::StringError, char const (&) [19], std::error_code>(char const (&) [19], std::error_code&&)"},
		{"_ZN1a1fIJPFviEEEEvDpOT_", "void a::f<void (*)(int)>(void (*&&)(int))"},
		{"_ZN1a1fIJPFviEEEEvDpRKT_", "void a::f<void (*)(int)>(void (* const&)(int))"},
		{"_ZN1a1fIJPA3_iEEEvDpRKT_", "void a::f<int (*) [3]>(int (* const&) [3])"},
		{"_ZN1a1fIJM1bKFviEEEEvDpOT_", "void a::f<void (b::*)(int) const>(void (b::*&&)(int) const)"},
		{"_ZN1a1fIJOFviEEEEvDpRT_", "void a::f<void (&&)(int)>(void (&)(int))"},
		{"_Z1fRKA3_i", "f(int const (&) [3])"},
		{"_ZN4node11SPrintFImplIRA12_KcJEEENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEPS1_OT_DpOT0_",
			"std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > node::SPrintFImpl<char const (&) [12]>(char const*, char const (&) [12])"},
		{"_ZN1a1fIOFviEEEvRT_", "void a::f<void (&&)(int)>(void (&)(int))"},
		{"_ZN1a1fIJiEEEvDpT_S1_", "void a::f<int>(int, int)"},
		{"_ZN1a1fIJiEEEvDpRT_S2_", "void a::f<int>(int&, int&)"},
		{"_ZN2v84base8CallOnceIJPvEvEEvPSt6atomicIhENS0_16FunctionWithArgsIJDpT_EE4typeES8_",
			"void v8::base::CallOnce<void*, void>(std::atomic<unsigned char>*, v8::base::FunctionWithArgs<void*>::type, void*)"},
		{"_ZStltIiEbRKT_S2_", "bool std::operator< <int>(int const&, int const&)"},
		{"_ZN2v88internal8compiler14GraphAssembler4BindILm1EEEvPNS1_19GraphAssemblerLabelIXT_EEE",
			"void v8::internal::compiler::GraphAssembler::Bind<1ul>(v8::internal::compiler::GraphAssemblerLabel<1ul>*)"},
		// Qualified names as template arguments.
		{"_ZN4llvm10checkedAddIiEENSt9enable_ifIXsr3std9is_signedIT_EE5valueENS_8OptionalIS2_EEE4typeES2_S2_",
			"std::enable_if<std::is_signed<int>::value, llvm::Optional<int> >::type llvm::checkedAdd<int>(int, int)"},
		{"_ZN4llvm4yaml7yamlizeINS_7ELFYAML14YAMLFlowStringEEENSt9enable_ifIXsr16has_ScalarTraitsIT_EE5valueEvE4typeERNS0_2IOERS5_bRNS0_12EmptyContextE",
			"std::enable_if<has_ScalarTraits<llvm::ELFYAML::YAMLFlowString>::value, void>::type llvm::yaml::yamlize<llvm::ELFYAML::YAMLFlowString>(llvm::yaml::IO&, llvm::ELFYAML::YAMLFlowString&, bool, llvm::yaml::EmptyContext&)"},
		{"_ZN1a1fIiNS_1bEEENSt11conditionalIXsrT0_1vEPKcS1_E4typeEv", "std::conditional<a::b::v, char const*, a::b>::type a::f<int, a::b>()"},
		// Addresses as template arguments.
		{"_Z1fIXadL_ZN1a1gEvEEEvv", "void f<&a::g>()"},
		{"_Z1fIXadL_ZSt3absdEEEvv", "void f<&std::abs>()"},
		{"_Z1fIXadL_ZN1a1xEEEEvv", "void f<&a::x>()"},
		{"_Z1fIXadL_Z1xEEEvv", "void f<&x>()"},
		{"_Z1fIXadL_Z1gvEEEvv", "void f<&(g())>()"},
		{"_Z1AIXadL_ZN1AEaEEEaa", "signed char A<&(A(signed char))>(signed char)"}, // N of one component: no qualified name
		{"_Z1fIXadL_ZNK1a1gEvEEEvv", "void f<&(a::g() const)>()"},
		{"_Z1fIXadL_ZNKR1a1gEvEEEvv", "void f<&(a::g() const &)>()"},
		{"_Z1fIXadL_ZN1a1gIiEEvT_EEEvv", "void f<&(void a::g<int>(int))>()"},
		{"_ZN4node10StreamBase8JSMethodIXadL_ZNS0_11WriteStringILNS_8encodingE0EEEiRKN2v820FunctionCallbackInfoINS4_5ValueEEEEEEEvS9_",
			"void node::StreamBase::JSMethod<&(int node::StreamBase::WriteString<(node::encoding)0>(v8::FunctionCallbackInfo<v8::Value> const&))>(v8::FunctionCallbackInfo<v8::Value> const&)"},
		{"_ZN1a1bUt0_1fEv", "a::b::{unnamed type#2}::f()"},
	} {
		for _, f := range []Form{Simplified, Full} {
			got, ok := cxxFast(c.in, f)
			if !ok || got != c.want {
				t.Errorf("cxxFast(%s, %d) = %q, %v; want %q", c.in, f, got, ok, c.want)
			}
		}
	}
	// A clone suffix: dropped from the simplified form, the full form
	// left to the full demangler ("[clone .constprop.0]").
	const clone = "_ZN1a1fEi.constprop.0"
	if got, ok := cxxFast(clone, Simplified); !ok || got != "a::f(int)" {
		t.Errorf("cxxFast(%s, Simplified) = %q, %v", clone, got, ok)
	}
	if got, ok := cxxFast(clone, Full); ok {
		t.Errorf("cxxFast(%s, Full) took it: %q", clone, got)
	}
	for _, in := range []string{
		"_ZNKSs4copyEPcmm",     // std::string as a prefix
		"_ZN1acvbEv",           // a conversion operator
		"_ZN1a1fIJiiEEEvDpT0_", // a pack that is not there
		"_Z1fPPFviE",           // a pointer to a function pointer
		"_ZN1a1fEvi",           // void among parameters
		"_ZN1a1fES0_",          // a substitution that is not there
		"_ZN1a1fEPRi",          // a pointer to a reference
		"_ZN1a1fET_",           // no template for T_
		"_ZN2v88internal15SearchStringRawIKtKhEElPNS0_7IsolateEPKT_iPKT0_ii", // const of a const
		"_ZN12_GLOBAL__N_11fE.cold",      // no parameters before a suffix
		"_ZN3foo3barEi.llvm.1234abcd",    // a suffix in the full form
		"_ZZN1a1fEvENKUlT_E_clIiEEDaS0_", // an auto named again in a template (int, not auto:1)
		"_ZZN1a1fEvEs",                   // a string literal
		"_ZZN1a1fEvEd_1x",                // a default argument
		// SC_ is the local function's T_, which names the outer
		// template's first argument here.
		"_ZSt16__introsort_loopIPN4llvm3cfg6UpdateIPNS0_10BasicBlockEEElN9__gnu_cxx5__ops15_Iter_comp_iterIZNS1_15LegalizeUpdatesIS4_EEvNS0_8ArrayRefINS2_IT_EEEERNS0_15SmallVectorImplISD_EEbbEUlRKS5_SJ_E_EEEvSC_SC_T0_T1_",
		"_ZN1a1fIiEEvT_ZNS_1gIiEEvS1_E1x", // a local name in a template's parameters
		"_Z1fIXadL_ZZN1a1gEvE1xEEEvv",     // the address of a local name
		// Another expression.
		"_ZN2v84base17PrintCheckOperandIPKaEENSt9enable_ifIXaaaantsrSt11is_functionINSt14remove_pointerIT_E4typeEE5valuentsrSt7is_enumIS7_E5valuesrNS0_19has_output_operatorIS7_NS0_18CheckMessageStreamEvEE5valueENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEE4typeES7_",
		"_Z1fM1aKFviES0_",         // a const function type ("void (int) const")
		"_ZN1a1fILDn0EEEvv",       // a null literal, which c++filt prints otherwise
		"_ZN1a1fIJM1biEEEvDpOT_",  // an expansion of pointers to data members
		"_ZN1a1fIJicEEEvDpT_S1_",  // a pack's candidate: "int, char" (c++filt: "char")
		"_ZN1a1fIJiEEEvDpRT_RS3_", // a reference to an expansion (the full demangler: int&&)
		"_ZN1a1fIJRiEEEvDpOT_S3_", // an expansion's candidate (the full demangler: int&&&)
		"_Z1AM1A1(",               // punctuation in an identifier
	} {
		if got, ok := cxxFast(in, Full); ok {
			t.Errorf("cxxFast(%s, Full) took it: %q", in, got)
		}
	}
}

// TestCxxFastAllocs checks that the fast path allocates the result alone.
func TestCxxFastAllocs(t *testing.T) {
	const in = "_ZN4llvm6object7ELFFileINS0_7ELFTypeILNS_7support10endiannessE1ELb1EEEE3endEv"
	if _, ok := cxxFast(in, Simplified); !ok {
		t.Fatalf("cxxFast(%s) did not take it", in)
	}
	want := 1.0
	if raceEnabled {
		want = 3 // a dropped parser: itself and its two buffers, now and then
	}
	if n := testing.AllocsPerRun(100, func() { cxxFast(in, Simplified) }); n > want {
		t.Errorf("cxxFast: %v allocations, want at most %v (the result)", n, want)
	}
}

// FuzzCxxFast checks that the fast path never fails where the full
// demangler succeeds differently, and never panics.
func FuzzCxxFast(f *testing.F) {
	for _, s := range []string{"_ZN1a1b1fERKS0_", "_ZN1a1fIiEEvT_", "_ZN1a1fILb1ELi3ELm256EEEPcv", "_ZNSt6vectorIiSaIiEEC2Ev", "_ZN2v84baseL3divEii", "_ZN1a1fEi.constprop.0", "_ZN1a1bINS_1cIiEEE1fERKS3_", "_ZN4llvm12hash_combineIJjPNS_5ValueENS_9hash_codeEEEES3_DpRKT_", "_ZN4llvm27install_fatal_error_handlerEPFvPvPKcbES0_", "_ZN4llvm3sys22getDefaultTargetTripleB5cxx11Ev", "_ZNKR1a1fEv", "_ZN4llvmlsERNS_11raw_ostreamERKNS_5APIntE", "_ZN1a1fERSo", "_ZThn56_N4node5http211Http2Stream9ReadStartEv", "_ZTv0_n24_N1a1fEv", "_ZZN1a1fEiENKUlPKcE0_clES1_", "_ZN1a1fIZNKS_1gIiEEvT_EUlvE_EEvS3_", "_ZN1a1bUt0_1fEv", "_ZZN1a1fEvEN1b1gE_0v", "_Z1fIXadL_ZNK1a1gEvEEEvv", "_Z1fIXadL_ZN1a1gIiEEvT_EEEvv", "_Z1fIXadL_ZSt3absdEEEvv", "_Z1fM1aKFviES1_", "_ZN4node18SnapshotSerializer5WriteIN2v811StartupDataELPv0ELS4_0EEEmRKT_", "_Z1fRA3_A4_i", "_ZZN1a1fEvENKUlRT_RT0_E_clEv", "_ZN1a1fIJPFviEEEEvDpRKT_", "_ZStltIiEbRKT_S2_"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, form := range []Form{Simplified, Full} {
			got, ok := cxxFast(s, form)
			if !ok {
				continue
			}
			if want, wok := cxxFullDemangler(s, form); !wok || got != want {
				t.Errorf("%q (form %d): fast %q, full %q (ok %v)", s, form, got, want, wok)
			}
		}
	})
}

// BenchmarkCxx demangles the corpus names the fast path takes, by it and
// by the full demangler (ns/op is per name).
func BenchmarkCxx(b *testing.B) {
	var names []string
	for _, n := range cxxCorpus(b) {
		if _, ok := cxxFast(n, Simplified); ok {
			names = append(names, n)
		}
	}
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			cxxFast(names[i%len(names)], Simplified)
		}
	})
	b.Run("full", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			cxxFullDemangler(names[i%len(names)], Simplified)
		}
	})
}

// TestOddIdentifier checks the eight-bytes-at-a-time test against a
// byte at a time one: every byte value at every place of names of up to
// 19 bytes.
func TestOddIdentifier(t *testing.T) {
	naive := func(id string) bool {
		for j := 0; j < len(id); j++ {
			c := id[j]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
				return true
			}
		}
		return false
	}
	const clean = "abcXYZ_0189azAZ_q9z"
	for n := 0; n <= len(clean); n++ {
		if oddIdentifier(clean[:n]) {
			t.Errorf("oddIdentifier(%q) = true", clean[:n])
		}
		for j := 0; j < n; j++ {
			for c := 0; c < 256; c++ {
				b := []byte(clean[:n])
				b[j] = byte(c)
				if got, want := oddIdentifier(string(b)), naive(string(b)); got != want {
					t.Fatalf("oddIdentifier(%q) = %v, want %v", b, got, want)
				}
			}
		}
	}
}
