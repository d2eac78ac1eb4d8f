package demangle

import (
	"runtime"
	"strconv"
	"strings"
	"testing"
)

func TestName(t *testing.T) {
	for _, c := range []struct {
		in         string
		simplified string
		full       string
	}{
		// Not mangled: unchanged.
		{"main", "main", "main"},
		{"runtime.goexit.abi0", "runtime.goexit.abi0", "runtime.goexit.abi0"},
		{"-[NSObject init]", "-[NSObject init]", "-[NSObject init]"},
		{"_", "_", "_"},
		{"", "", ""},
		// Malformed: unchanged.
		{"_Zfoo", "_Zfoo", "_Zfoo"},
		{"_RNvC", "_RNvC", "_RNvC"},
		// C++, with and without Mach-O's underscore.
		{"_ZN3app8module204workEv", "app::module20::work()", "app::module20::work()"},
		{"__ZN3app8module204workEv", "app::module20::work()", "app::module20::work()"},
		{"_ZNSt6vectorIiSaIiEE9push_backERKi", "std::vector<int, std::allocator<int> >::push_back(int const&)", "std::vector<int, std::allocator<int> >::push_back(int const&)"},
		{"_Z3foov.cold", "foo()", "foo() [clone .cold]"},
		// Rust legacy: a C++-shaped prefix, Rust's own rules.
		{"__ZN3std10sys_common9backtrace28__rust_begin_short_backtrace17h5ba2a5ba1d0b3f0fE", "std::sys_common::backtrace::__rust_begin_short_backtrace", "std::sys_common::backtrace::__rust_begin_short_backtrace::h5ba2a5ba1d0b3f0f"},
		// A name alone, which the fast path takes as C++ too: Rust's
		// (its hash dropped in the simplified form), not C++'s.
		{"_ZN3foo17h0123456789abcdefE", "foo", "foo::h0123456789abcdef"},
		// Rust v0.
		{"_RNvCs1234_7mycrate4main", "mycrate::main", "mycrate[3c1c0]::main"},
		{"__RNvC7mycrate4main", "mycrate::main", "mycrate::main"},
	} {
		if got := Name(c.in, Simplified); got != c.simplified {
			t.Errorf("Name(%q, Simplified) = %q, want %q", c.in, got, c.simplified)
		}
		if got := Name(c.in, Full); got != c.full {
			t.Errorf("Name(%q, Full) = %q, want %q", c.in, got, c.full)
		}
	}
}

func TestIsMangled(t *testing.T) {
	for s, want := range map[string]bool{
		"_ZN3fooE": true, "__Z3foov": true, "_RNvC3foo3bar": true, "$s4main5greetyySiF": true,
		"_$s4main5greetyySiF": true, "_T0S2i": true, "main": false, "_main": false, "R": false,
	} {
		if got := IsMangled(s); got != want {
			t.Errorf("IsMangled(%q) = %v", s, got)
		}
	}
}

// TestNameNoAllocUnmangled checks that a name that is not mangled costs
// no allocation: symbol tables hold mostly such names.
func TestNameNoAllocUnmangled(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { Name("_function_number_12345", Simplified) }); n != 0 {
		t.Errorf("%v allocs", n)
	}
}

func TestNameSwift(t *testing.T) {
	for _, c := range []struct{ in, simplified, full string }{
		{"$s4main5greetyySiF", "greet(_:)", "main.greet(Swift.Int) -> ()"},
		{"_$s4main5greetyySiF", "greet(_:)", "main.greet(Swift.Int) -> ()"},
		{"$s4main3fooyyFyycfU_", "closure #1 in foo()", "closure #1 () -> () in main.foo() -> ()"},
		{"$sZZZZ", "$sZZZZ", "$sZZZZ"},
	} {
		if got := Name(c.in, Simplified); got != c.simplified {
			t.Errorf("Name(%q, Simplified) = %q, want %q", c.in, got, c.simplified)
		}
		if got := Name(c.in, Full); got != c.full {
			t.Errorf("Name(%q, Full) = %q, want %q", c.in, got, c.full)
		}
	}
}

// FuzzName feeds arbitrary names to every demangler: none may panic, and
// an Itanium-prefixed name Rust takes is one mayBeRustLegacy lets through.
func FuzzName(f *testing.F) {
	for _, s := range []string{"_ZN3foo3barE.llvm.1234ABCD", "_ZN3foo17h0123456789abcdefE.llvm.99", "_ZN3foo3barEv.llvm.1", "_ZN3fooE.cold", "_ZN3foo3barEv", "_RNvCs1234_7mycrate4main", "_ZN4test1a2bcE", "$s4main5greetyySiF", "_RINbNbCskIICzLVDPPb_5alloc5alloc8box_freeDINbNiB4_5boxed5FnBoxuEp6OutputuEL_ECs1iopQbuBiw2_3std", "_ZN35Bar$LT$$u5b$u32$u3b$$u20$4$u5d$$GT$E", "ZN4testE", "_ZN12_GLOBAL__N_112ConformancesE", "_ZN4llvm10checkedMulIlEENSt9enable_ifIXsr3std9is_signedIT_EE5valueENS_8OptionalIS2_EEE4typeES2_S2_", "_Z1fIXadL_Z1gIiEviEEEvv", "_Z1fU14swiftasynccallFvvE"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		Name(s, Simplified)
		Name(s, Full)
		if k, t0 := kindOf(s); k == itanium && !mayBeRustLegacy(t0) {
			if d, ok := rust(t0, true); ok {
				t.Errorf("rust takes %q (as %q), which mayBeRustLegacy rules out", s, d)
			}
		}
		if k, t0 := kindOf(s); k == itanium {
			// demangleName takes a name with a signature from the
			// fast path before asking whether it may be Rust.
			for _, form := range []Form{Simplified, Full} {
				if _, ok, signature := cxxFastName(t0, form); ok && signature && mayBeRustLegacy(t0) {
					t.Errorf("the fast path takes %q with a signature, which mayBeRustLegacy does not rule out", s)
				}
			}
		}
	})
}

// BenchmarkName demangles one name of each kind per iteration, and a name
// that is not mangled (most of a symbol table).
func BenchmarkName(b *testing.B) {
	for _, c := range []struct{ kind, name string }{
		{"plain", "_function_number_12345"},
		{"cxx", "_ZNSt6vectorIiSaIiEE9push_backERKi"},
		{"rust-legacy", "_ZN3std10sys_common9backtrace28__rust_begin_short_backtrace17h5ba2a5ba1d0b3f0fE"},
		{"rust-v0", "_RNvMNtNtNtNtCs8a2262Dv4r_3mio3sys4unix8selector5epollNtB2_8Selector6select"},
		{"swift", "$s4main3FooV3bar1xSSSi_tF"},
	} {
		b.Run(c.kind, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Name(c.name, Simplified)
			}
		})
	}
}

// TestExplodingSubstitutionsStayBounded: a C++ name whose substitutions
// each repeat a type holding two of the last (S_IS1_S1_E, then S_IS2_S2_E,
// ...) would print, at 60 levels in 800 bytes, over a terabyte; it is
// left mangled, by both the fast path and the full demangler, having
// allocated a bounded amount, while a shallow one still demangles.
func TestExplodingSubstitutionsStayBounded(t *testing.T) {
	nested := func(levels int) string {
		s := "_Z1fI1PI1AS1_E" // f is S_, P S0_, A S1_, P<A, A> S2_
		for i := 1; i < levels; i++ {
			k := strings.ToUpper(strconv.FormatInt(int64(i+1), 36))
			s += "S0_IS" + k + "_S" + k + "_E"
		}
		return s + "Evv"
	}
	shallow := nested(3)
	if d := Name(shallow, Simplified); d == shallow || d != "void f<P<A, A>, P<P<A, A>, P<A, A> >, P<P<P<A, A>, P<A, A> >, P<P<A, A>, P<A, A> > > >()" {
		t.Fatalf("shallow %s: %q", shallow, d)
	}
	deep := nested(60)
	for _, f := range []Form{Simplified, Full} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		d := Name(deep, f)
		runtime.ReadMemStats(&after)
		if d != deep {
			t.Errorf("form %d: %d bytes demangled to %d, want the name left mangled", f, len(deep), len(d))
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 16<<20 {
			t.Errorf("form %d: demangling %d bytes allocated %d", f, len(deep), n)
		}
	}
	if _, ok := cxxFast(deep, Simplified); ok {
		t.Error("the fast path took the deep name")
	}
}
