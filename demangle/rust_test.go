package demangle

import (
	"encoding/binary"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"
)

// rustCase is one test of rustc-demangle's own list (src/lib.rs,
// src/legacy.rs and src/v0.rs of rust-lang/rustc-demangle at ca5202e):
// alt is the "{:#}" form (no hash), full the "{}" form ("" where the
// test gives none).
type rustCase struct{ in, alt, full string }

var rustCases = []rustCase{
	// The names issue 14 found wrong in ianlancetaylor/demangle.
	{"_ZN3std10sys_common9backtrace28__rust_begin_short_backtrace17h5ba2a5ba1d0b3f0fE", "std::sys_common::backtrace::__rust_begin_short_backtrace", "std::sys_common::backtrace::__rust_begin_short_backtrace::h5ba2a5ba1d0b3f0f"},
	{"_ZN4core9core_arch3x863aes25_mm_aeskeygenassist_si12817h0b1c43e7a2d9e6a1E", "core::core_arch::x86::aes::_mm_aeskeygenassist_si128", "core::core_arch::x86::aes::_mm_aeskeygenassist_si128::h0b1c43e7a2d9e6a1"},
	{"_ZN2v71_59_$LT$impl$u20$serde..ser..Serialize$u20$for$u20$v7..Foo$GT$9serialize17h0123456789abcdefE", "v7::_::<impl serde::ser::Serialize for v7::Foo>::serialize", "v7::_::<impl serde::ser::Serialize for v7::Foo>::serialize::h0123456789abcdef"},

	// legacy.rs / lib.rs
	{"_ZN4testE", "test", "test"},
	{"_ZN4test1a2bcE", "test::a::bc", "test::a::bc"},
	{"_ZN4$RP$E", ")", ")"},
	{"_ZN8$RF$testE", "&test", "&test"},
	{"_ZN8$BP$test4foobE", "*test::foob", "*test::foob"},
	{"_ZN9$u20$test4foobE", " test::foob", " test::foob"},
	{"_ZN35Bar$LT$$u5b$u32$u3b$$u20$4$u5d$$GT$E", "Bar<[u32; 4]>", "Bar<[u32; 4]>"},
	{"_ZN13test$u20$test4foobE", "test test::foob", "test test::foob"},
	{"_ZN12test$BP$test4foobE", "test*test::foob", "test*test::foob"},
	{"__ZN5alloc9allocator6Layout9for_value17h02a996811f781011E", "alloc::allocator::Layout::for_value", "alloc::allocator::Layout::for_value::h02a996811f781011"},
	{"__ZN38_$LT$core..option..Option$LT$T$GT$$GT$6unwrap18_MSG_FILE_LINE_COL17haf7cb8d5824ee659E", "<core::option::Option<T>>::unwrap::_MSG_FILE_LINE_COL", "<core::option::Option<T>>::unwrap::_MSG_FILE_LINE_COL::haf7cb8d5824ee659"},
	{"__ZN4core5slice89_$LT$impl$u20$core..iter..traits..IntoIterator$u20$for$u20$$RF$$u27$a$u20$$u5b$T$u5d$$GT$9into_iter17h450e234d27262170E", "core::slice::<impl core::iter::traits::IntoIterator for &'a [T]>::into_iter", "core::slice::<impl core::iter::traits::IntoIterator for &'a [T]>::into_iter::h450e234d27262170"},
	{"ZN4testE", "test", "test"},
	{"ZN13test$u20$test4foobE", "test test::foob", "test test::foob"},
	{"ZN12test$RF$test4foobE", "test&test::foob", "test&test::foob"},
	{"_ZN13_$LT$test$GT$E", "<test>", "<test>"},
	{"_ZN28_$u7b$$u7b$closure$u7d$$u7d$E", "{{closure}}", "{{closure}}"},
	{"_ZN15__STATIC_FMTSTRE", "__STATIC_FMTSTR", "__STATIC_FMTSTR"},
	{"_ZN71_$LT$Test$u20$$u2b$$u20$$u27$static$u20$as$u20$foo..Bar$LT$Test$GT$$GT$3barE", "<Test + 'static as foo::Bar<Test>>::bar", "<Test + 'static as foo::Bar<Test>>::bar"},
	{"_ZN3foo17h05af221e174051e9E", "foo", "foo::h05af221e174051e9"},
	{"_ZN3fooE", "foo", "foo"},
	{"_ZN3foo3barE", "foo::bar", "foo::bar"},
	{"_ZN3foo20h05af221e174051e9abcE", "foo", ""},
	{"_ZN3foo5h05afE", "foo", ""},
	{"_ZN17h05af221e174051e93fooE", "h05af221e174051e9::foo", ""},
	{"_ZN3foo16ffaf221e174051e9E", "foo::ffaf221e174051e9", ""},
	{"_ZN3foo17hg5af221e174051e9E", "foo::hg5af221e174051e9", ""},
	{"_ZN3fooE.llvm.9D1C9369", "foo", "foo"},
	{"_ZN3fooE.llvm.9D1C9369@@16", "foo", "foo"},
	{"_ZN9backtrace3foo17hbb467fcdaea5d79bE.llvm.A5310EB9", "backtrace::foo", ""},
	{"_ZN4core5slice77_$LT$impl$u20$core..ops..index..IndexMut$LT$I$GT$$u20$for$u20$$u5b$T$u5d$$GT$9index_mut17haf9727c2edfbc47bE.exit.i.i", "core::slice::<impl core::ops::index::IndexMut<I> for [T]>::index_mut.exit.i.i", "core::slice::<impl core::ops::index::IndexMut<I> for [T]>::index_mut::haf9727c2edfbc47b.exit.i.i"},
	{"_ZN151_$LT$alloc..boxed..Box$LT$alloc..boxed..FnBox$LT$A$C$$u20$Output$u3d$R$GT$$u20$$u2b$$u20$$u27$a$GT$$u20$as$u20$core..ops..function..FnOnce$LT$A$GT$$GT$9call_once17h69e8f44b3723e1caE", "<alloc::boxed::Box<alloc::boxed::FnBox<A, Output=R> + 'a> as core::ops::function::FnOnce<A>>::call_once", "<alloc::boxed::Box<alloc::boxed::FnBox<A, Output=R> + 'a> as core::ops::function::FnOnce<A>>::call_once::h69e8f44b3723e1ca"},
	{"_ZN88_$LT$core..result..Result$LT$$u21$$C$$u20$E$GT$$u20$as$u20$std..process..Termination$GT$6report17hfc41d0da4a40b3e8E", "<core::result::Result<!, E> as std::process::Termination>::report", "<core::result::Result<!, E> as std::process::Termination>::report::hfc41d0da4a40b3e8"},
	{"_ZN11utf8_idents157_$u10e1$$u10d0$$u10ed$$u10db$$u10d4$$u10da$$u10d0$$u10d3$_$u10d2$$u10d4$$u10db$$u10e0$$u10d8$$u10d4$$u10da$$u10d8$_$u10e1$$u10d0$$u10d3$$u10d8$$u10da$$u10d8$17h21634fd5714000aaE", "utf8_idents::საჭმელად_გემრიელი_სადილი", ""},
	{"_ZN11issue_609253foo37Foo$LT$issue_60925..llv$u6d$..Foo$GT$3foo17h059a991a004536adE", "issue_60925::foo::Foo<issue_60925::llvm::Foo>::foo", ""},

	// v0.rs
	{"_RNvC6_123foo3bar", "123foo::bar", ""},
	{"_RC4f128", "f128", "f128"},
	{"_RNqCs4fqI2P2rA04_11utf8_identsu30____7hkackfecea1cbdathfdh9hlq6y", "utf8_idents::საჭმელად_გემრიელი_სადილი", ""},
	{"_RNCNCNgCs6DXkGYLi8lr_2cc5spawn00B5_", "cc::spawn::{closure#0}::{closure#0}", ""},
	{"_RNCINkXs25_NgCsbmNqQUJIY6D_4core5sliceINyB9_4IterhENuNgNoBb_4iter8iterator8Iterator9rpositionNCNgNpB9_6memchr7memrchrs_0E0Bb_", "<core::slice::Iter<u8> as core::iter::iterator::Iterator>::rposition::<core::slice::memchr::memrchr::{closure#1}>::{closure#0}", ""},
	{"_RINbNbCskIICzLVDPPb_5alloc5alloc8box_freeDINbNiB4_5boxed5FnBoxuEp6OutputuEL_ECs1iopQbuBiw2_3std", "alloc::alloc::box_free::<dyn alloc::boxed::FnBox<(), Output = ()>>", ""},
	{"_RMC0DNtC5krate5Traitp1NKj0_EL_", "<dyn krate::Trait<N = 0>>", ""},
	{"_RMC0WmRm1_m9_", "<u32 is 1..=9>", ""},
	{"_RMC0WmORm1_m2_Rm5_m6_E", "<u32 is 1..=2 | 5..=6>", ""},
	{"_RMC0INtC8arrayvec8ArrayVechKj7b_E", "<arrayvec::ArrayVec<u8, 123>>", ""},
	{"_RNvC9backtrace3foo.llvm.A5310EB9", "backtrace::foo", ""},
	{"_RC3foo.llvm.9D1C9369", "foo", ""},
	{"_RC3foo.llvm.9D1C9369@@16", "foo", ""},
	{"_RNvNtNtNtNtCs92dm3009vxr_4rand4rngs7adapter9reseeding4fork23FORK_HANDLER_REGISTERED.0.0", "rand::rngs::adapter::reseeding::fork::FORK_HANDLER_REGISTERED.0.0", ""},
	{"_RNvMNtNtNtNtCs8a2262Dv4r_3mio3sys4unix8selector5epollNtB2_8Selector6select", "<mio::sys::unix::selector::epoll::Selector>::select", ""},
	{"_RMC0TTTTTTpB8_EB7_EB6_EB5_EB4_EB3_E", "<((((((_, _), (_, _)), ((_, _), (_, _))), (((_, _), (_, _)), ((_, _), (_, _)))), ((((_, _), (_, _)), ((_, _), (_, _))), (((_, _), (_, _)), ((_, _), (_, _))))), (((((_, _), (_, _)), ((_, _), (_, _))), (((_, _), (_, _)), ((_, _), (_, _)))), ((((_, _), (_, _)), ((_, _), (_, _))), (((_, _), (_, _)), ((_, _), (_, _))))))>", ""},
}

// rustConsts are v0.rs's t_const! cases: "_RIC0K" + mangled + "E" is
// "::<" + value + ">"; a third field is the type suffix the full form adds.
var rustConsts = [][3]string{
	{"j7b_", "123", "usize"},
	{"p", "_", ""},
	{"hb_", "11", "u8"},
	{"off00ff00ff00ff00ff_", "0xff00ff00ff00ff00ff", "u128"},
	{"s98_", "152", "i16"},
	{"anb_", "-11", "i8"},
	{"b0_", "false", ""},
	{"b1_", "true", ""},
	{"c76_", "'v'", ""},
	{"c22_", `'"'`, ""},
	{"ca_", `'\n'`, ""},
	{"c2202_", "'∂'", ""},
	{"e616263_", `{*"abc"}`, ""},
	{"e27_", `{*"'"}`, ""},
	{"e090a_", `{*"\t\n"}`, ""},
	{"ee28882c3bc_", `{*"∂ü"}`, ""},
	{"ee183a1e18390e183ade1839be18394e1839ae18390e183935fe18392e18394e1839be183a0e18398e18394e1839ae183985fe183a1e18390e18393e18398e1839ae18398_", `{*"საჭმელად_გემრიელი_სადილი"}`, ""},
	{"ef09f908af09fa688f09fa686f09f90ae20c2a720f09f90b6f09f9192e29895f09f94a520c2a720f09fa7a1f09f929bf09f929af09f9299f09f929c_", `{*"🐊🦈🦆🐮 § 🐶👒☕🔥 § 🧡💛💚💙💜"}`, ""},
	{"Re616263_", `"abc"`, ""},
	{"Re27_", `"'"`, ""},
	{"Re090a_", `"\t\n"`, ""},
	{"Ree28882c3bc_", `"∂ü"`, ""},
	{"Ree183a1e18390e183ade1839be18394e1839ae18390e183935fe18392e18394e1839be183a0e18398e18394e1839ae183985fe183a1e18390e18393e18398e1839ae18398_", `"საჭმელად_გემრიელი_სადილი"`, ""},
	{"Ref09f908af09fa688f09fa686f09f90ae20c2a720f09f90b6f09f9192e29895f09f94a520c2a720f09fa7a1f09f929bf09f929af09f9299f09f929c_", `"🐊🦈🦆🐮 § 🐶👒☕🔥 § 🧡💛💚💙💜"`, ""},
	{"Rp", "{&_}", ""},
	{"Rh7b_", "{&123}", ""},
	{"Rb0_", "{&false}", ""},
	{"Rc58_", "{&'X'}", ""},
	{"RRRh0_", "{&&&0}", ""},
	{"RRRe_", `{&&""}`, ""},
	{"QAE", "{&mut []}", ""},
	{"AE", "{[]}", ""},
	{"Aj0_E", "{[0]}", ""},
	{"Ah1_h2_h3_E", "{[1, 2, 3]}", ""},
	{"ARe61_Re62_Re63_E", `{["a", "b", "c"]}`, ""},
	{"AAh1_h2_EAh3_h4_EE", "{[[1, 2], [3, 4]]}", ""},
	{"TE", "{()}", ""},
	{"Tj0_E", "{(0,)}", ""},
	{"Th1_b0_E", "{(1, false)}", ""},
	{"TRe616263_c78_RAh1_h2_h3_EE", `{("abc", 'x', &[1, 2, 3])}`, ""},
	{"VNvINtNtC4core6option6OptionjE4NoneU", "{core::option::Option::<usize>::None}", ""},
	{"VNvINtNtC4core6option6OptionjE4SomeTj0_E", "{core::option::Option::<usize>::Some(0)}", ""},
	{"VNtC3foo3BarS1sRe616263_2chc78_5sliceRAh1_h2_h3_EE", `{foo::Bar { s: "abc", ch: 'x', slice: &[1, 2, 3] }}`, ""},
}

func TestRust(t *testing.T) {
	cases := append([]rustCase(nil), rustCases...)
	for _, c := range rustConsts {
		full := ""
		if c[2] != "" {
			full = "::<" + c[1] + c[2] + ">"
		}
		cases = append(cases, rustCase{"_RIC0K" + c[0] + "E", "::<" + c[1] + ">", full})
	}
	for _, c := range cases {
		if got, ok := rust(c.in, false); !ok || got != c.alt {
			t.Errorf("%s:\n got %q (%v)\nwant %q", c.in, got, ok, c.alt)
		}
		if c.full == "" {
			continue
		}
		if got, ok := rust(c.in, true); !ok || got != c.full {
			t.Errorf("%s (full):\n got %q (%v)\nwant %q", c.in, got, ok, c.full)
		}
	}
}

// TestRustName runs rustc-demangle's cases through Name, the entry point
// profiles and the demangle command use: a name without its leading
// underscore ("ZN4testE") is Rust too.
func TestRustName(t *testing.T) {
	n := 0
	for _, c := range rustCases {
		n++
		if got := Name(c.in, Simplified); got != c.alt {
			t.Errorf("Name(%q, Simplified) = %q, want %q", c.in, got, c.alt)
		}
		if c.full != "" {
			if got := Name(c.in, Full); got != c.full {
				t.Errorf("Name(%q, Full) = %q, want %q", c.in, got, c.full)
			}
		}
	}
	for _, c := range rustConsts {
		n++
		in, want := "_RIC0K"+c[0]+"E", "::<"+c[1]+">"
		if got := Name(in, Simplified); got != want {
			t.Errorf("Name(%q, Simplified) = %q, want %q", in, got, want)
		}
	}
	t.Logf("%d of rustc-demangle's cases", n)
}

// TestRustNotMangled checks rustc-demangle's t_err! cases: not Rust.
func TestRustNotMangled(t *testing.T) {
	for _, s := range []string{"test", "_ZN4test", "_ZN3fooE.llvm moocow", "_ZNfooE"} {
		if got, ok := rust(s, false); ok {
			t.Errorf("%q demangled to %q", s, got)
		}
	}
}

// TestRustLimits checks rustc-demangle's limit tests: deep or exponential
// v0 names end in a bounded output, not a crash.
func TestRustLimits(t *testing.T) {
	for _, s := range []string{
		"_RNvB_1a", "_RMC0RB2_", "RYFG_FGyyEvRYFF_EvRYFFEvERLB_B_B_ERLRjB_B_B_", "_RMC0FGZZZ_Eu",
		"RIC20tRYIMYNRYFG05_EB5_B_B6_RRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRB_E",
		"_ZN2222222222222222222222EE", "_ZN5*70527e27.ll34csaғE", "_ZN5*70527a54.ll34_$b.1E",
		"_ZN5~saäb4e\n2734cOsbE\n5usage20h)3\x00\x00\x00\x00\x00\x00\x007e2734cOsbE",
	} {
		got, _ := rust(s, false)
		if len(got) > 2_000_000 {
			t.Errorf("%q: %d bytes out", s, len(got))
		}
	}
	for _, c := range []struct{ in, marker string }{
		{"_RNvB_1a", "{recursion limit reached}"},
		{"_RMC0RB2_", "{recursion limit reached}"},
		{"RIC20tRYIMYNRYFG05_EB5_B_B6_RRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRB_E", "{recursion limit reached}"},
		{"RYFG_FGyyEvRYFF_EvRYFFEvERLB_B_B_ERLRjB_B_B_", "{size limit reached}"},
		{"_RMC0FGZZZ_Eu", "{size limit reached}"},
	} {
		if got, _ := rust(c.in, true); !strings.Contains(got, c.marker) {
			t.Errorf("%s: %.200q does not contain %s", c.in, got, c.marker)
		}
	}
	// A 100,000-deep chain of references hidden behind a backref
	// (rustc-demangle's recursion_limit_backref_free_bypass).
	depth := 100_000
	sym := "_RIC" + strconv.Itoa(depth)
	start := len(sym) - 2
	sym += strings.Repeat("R", depth) + "B" + strconv.FormatInt(int64(start-1), 36) + "_E"
	if got, _ := rust(sym, false); !strings.Contains(got, "{recursion limit reached}") {
		t.Errorf("deep backref: %.200q", got)
	}
	// Too deep for the validating pass: not a Rust name at all
	// (rustc-demangle's early-recursion-limit symbols).
	deep := "_RMC0" + strings.Repeat("T", 600) + "p" + strings.Repeat("E", 600)
	if got, ok := rust(deep, false); ok {
		t.Errorf("600-deep tuple demangled to %.100q", got)
	}
}

// TestRustRecursionNoLeak is rustc-demangle's recursion_limit_leaks: a
// long flat list must not use up the depth limit.
func TestRustRecursionNoLeak(t *testing.T) {
	for _, c := range [][2]string{{"p", "_"}, {"Rp", "&_"}, {"C1x", "x"}} {
		sym, want := "_RIC0p", "::<_"
		for range 2 * v0MaxDepth {
			sym += c[0]
			want += ", " + c[1]
		}
		if got, _ := rust(sym+"E", false); got != want+">" {
			t.Errorf("%s…: got %.100q…", sym[:12], got)
		}
	}
}

// TestRustRejectsCxxWithoutAllocating checks that a C++ nested name, which
// every Itanium name is tried as first, is refused as Rust from what
// follows its "E" alone: nothing decoded, nothing allocated.
func TestRustRejectsCxxWithoutAllocating(t *testing.T) {
	for _, s := range []string{
		"_ZN4llvm9MCContext21finalizeDwarfSectionsERNS_10MCStreamerE",
		"_ZN2v88internal8compiler25SimplifiedOperatorReducer6ReduceEPNS1_4NodeE",
		"_ZN3fooE\xc3\xa9", // not ASCII after the path: neither Rust form
	} {
		if got, ok := rust(s, false); ok {
			t.Errorf("%q demangled as Rust to %q", s, got)
		}
		if n := testing.AllocsPerRun(100, func() { rust(s, false) }); n != 0 {
			t.Errorf("%q: %v allocations to refuse it", s, n)
		}
	}
}

// TestLegacyRestAsRustLegacy checks that legacyRest finds the path's end
// where rustLegacy does, on Rust and C++ names and malformed ones.
func TestLegacyRestAsRustLegacy(t *testing.T) {
	names := []string{
		"_ZN4llvm9MCContext21finalizeDwarfSectionsERNS_10MCStreamerE",
		"_ZN3fooE.llvm moocow", "_ZN4test", "_ZNfooE", "_ZN5*70527e27.ll34csaғE",
		"_ZN2222222222222222222222EE", "_ZN3fo\xffE", "__ZN3fooEv", "ZN3fooE",
	}
	for _, c := range rustCases {
		names = append(names, c.in)
	}
	for _, s := range names {
		rest, ok := legacyRest(s)
		_, wantRest, wantOK := rustLegacy(s, false)
		if ok != wantOK || rest != wantRest {
			t.Errorf("%q: legacyRest = %q, %v; rustLegacy's rest %q, %v", s, rest, ok, wantRest, wantOK)
		}
	}
}

// TestRustHashNamesDispatch checks the names demangleName sends to the
// legacy Rust demangler first because they end in a Rust hash: Rust's
// own, in both forms, and C++ names that end so too (an anonymous
// namespace's, one whose last parameter ends so), which stay C++ as
// c++filt prints them.
func TestRustHashNamesDispatch(t *testing.T) {
	for _, c := range []struct{ in, simplified, full string }{
		{"_ZN3foo17h0123456789abcdefE", "foo", "foo::h0123456789abcdef"},
		{"__ZN3std2io5stdio6_print17h1234567890abcdefE", "std::io::stdio::_print", "std::io::stdio::_print::h1234567890abcdef"},
		{"_ZN4core3ptr85drop_in_place$LT$std..rt..lang_start$LT$$LP$$RP$$GT$..$u7b$$u7b$closure$u7d$$u7d$$GT$17h0123456789abcdefE",
			"core::ptr::drop_in_place<std::rt::lang_start<()>::{{closure}}>", "core::ptr::drop_in_place<std::rt::lang_start<()>::{{closure}}>::h0123456789abcdef"},
		{"_ZN12_GLOBAL__N_117h0123456789abcdefE", "(anonymous namespace)::h0123456789abcdef", "(anonymous namespace)::h0123456789abcdef"},
		// "_GLOBAL_" within an identifier is Rust's.
		{"_ZN3foo14bar_GLOBAL_baz17h0123456789abcdefE", "foo::bar_GLOBAL_baz", "foo::bar_GLOBAL_baz::h0123456789abcdef"},
		{"_ZN3foo3barENS_17h0123456789abcdefE", "foo::bar(foo::h0123456789abcdef)", "foo::bar(foo::h0123456789abcdef)"},
	} {
		if !endsInRustHash(strings.TrimPrefix(c.in, "_")) {
			t.Errorf("%s: not taken for a name ending in a Rust hash", c.in)
		}
		if got := Name(c.in, Simplified); got != c.simplified {
			t.Errorf("Name(%s, Simplified) = %q, want %q", c.in, got, c.simplified)
		}
		if got := Name(c.in, Full); got != c.full {
			t.Errorf("Name(%s, Full) = %q, want %q", c.in, got, c.full)
		}
	}
	for _, s := range []string{"_ZN3foo17h0123456789abcdeE", "_ZN3foo17h0123456789abcdefX", "_ZN3foo17g0123456789abcdefE", "_ZN3foo17h0123456789ABCDEFE"} {
		if endsInRustHash(s) {
			t.Errorf("%s: taken for a name ending in a Rust hash", s)
		}
	}
}

// sentryLegacyNames are 512 of sentry-cli's legacy Rust names (every 30th
// that ends in a hash, as llvm-nm --arch arm64 lists them), two thirds
// with escapes: the names symbolize demangles most on a Rust binary.
func sentryLegacyNames(tb testing.TB) []string {
	b, err := os.ReadFile("testdata/sentry-cli-rust-legacy.txt")
	if err != nil {
		tb.Fatal(err)
	}
	return strings.Fields(string(b))
}

// legacyHashedBefore is what demangleName made of a name that ends in a
// Rust hash before rustLegacyHashed: the legacy reading when the path
// ends the name, all ASCII, with no identifier beginning "_GLOBAL_",
// each identifier unescaped byte by byte (unescapeBefore).
func legacyHashedBefore(t string, full bool) (string, bool) {
	s, ok := cutLegacyPrefix(t)
	if !ok || !isASCII(s) {
		return "", false
	}
	var elems []string
	for s != "E" {
		if s == "" {
			return "", false
		}
		n := 0
		for n < len(s) && s[n] >= '0' && s[n] <= '9' {
			n++
		}
		l, err := strconv.Atoi(s[:n])
		if n == 0 || err != nil || l > len(s)-n || strings.HasPrefix(s[n:n+l], "_GLOBAL_") {
			return "", false
		}
		elems = append(elems, s[n:n+l])
		s = s[n+l:]
	}
	var b strings.Builder
	for i, e := range elems {
		if !full && i == len(elems)-1 && i > 0 && isRustHash(e) {
			break
		}
		if i > 0 {
			b.WriteString("::")
		}
		unescapeBefore(&b, e)
	}
	return b.String(), true
}

// unescapeBefore is unescapeLegacy as it was (at 3194d10), before
// appendUnescaped: the oracle for it.
func unescapeBefore(b *strings.Builder, e string) {
	if strings.HasPrefix(e, "_$") {
		e = e[1:]
	}
	for e != "" {
		switch e[0] {
		case '.':
			if strings.HasPrefix(e, "..") {
				b.WriteString("::")
				e = e[2:]
			} else {
				b.WriteByte('.')
				e = e[1:]
			}
			continue
		case '$':
			end := strings.IndexByte(e[1:], '$')
			if end < 0 {
				b.WriteString(e)
				return
			}
			esc := e[1 : end+1]
			if r, ok := legacyEscape(esc); ok {
				b.WriteString(r)
			} else if c, ok := escapedRune(esc); ok {
				b.WriteRune(c)
			} else {
				b.WriteString(e)
				return
			}
			e = e[end+2:]
			continue
		}
		i := 1
		for i < len(e) && e[i] != '$' && e[i] != '.' {
			i++
		}
		b.WriteString(e[:i])
		e = e[i:]
	}
}

// checkLegacyHashed fails when rustLegacyHashed and legacyHashedBefore
// read t differently in either form.
func checkLegacyHashed(t *testing.T, name string) {
	t.Helper()
	for _, full := range []bool{false, true} {
		got, ok := rustLegacyHashed(name, full)
		want, wantOK := legacyHashedBefore(name, full)
		if got != want || ok != wantOK {
			t.Errorf("rustLegacyHashed(%q, %v) = %q, %v; before %q, %v", name, full, got, ok, want, wantOK)
		}
	}
}

// TestRustLegacyHashedAsBefore checks the one-pass reading of names that
// end in a Rust hash against the checks and unescaping it replaced, on
// sentry-cli's names, rustc-demangle's and malformed ones: each escape
// kind, runs of every length around eight bytes, non-ASCII bytes in a
// run, in an escape and after an unknown one, "_GLOBAL_" identifiers.
func TestRustLegacyHashedAsBefore(t *testing.T) {
	const hash = "17h0123456789abcdefE"
	names := sentryLegacyNames(t)
	for _, c := range rustCases {
		names = append(names, c.in)
	}
	for _, id := range []string{
		"a", "abcdefg", "abcdefgh", "abcdefghi", "abcdefghijklmnop$LT$T$GT$", "a..b.c...d",
		"_$LT$impl$u20$core..fmt..Debug$u20$for$u20$$RF$T$GT$", "$u7b$$u7b$closure$u7d$$u7d$",
		"$u1f$x", "$u7f$x", "$u80$x", "$ua0$x", "$u10e1$", "$u41$$u7e$", "$uAB$x", "$ug1$x", "$u$x", "$XY$rest",
		"abc$", "abc$LT", "abcdefgh\xc3\xa9", "\xc3\xa9", "$XY$\xc3\xa9", "$u\xc3\xa9$", "abcdefg.\xff",
		"_GLOBAL__N_1", "x_GLOBAL_", "$SP$$BP$$RF$$LT$$GT$$LP$$RP$$C$",
	} {
		names = append(names,
			"_ZN"+strconv.Itoa(len(id))+id+hash,
			"_ZN3foo"+strconv.Itoa(len(id))+id+hash,
			"_ZN3foo"+strconv.Itoa(len(id))+id+"3bar"+hash)
	}
	names = append(names, "_ZN"+hash, "_ZN3fooE"+hash, "_ZN3foo4bar"+hash+hash, "_ZN99foo"+hash,
		"_ZN3foo20x17h0123456789abcdefE", "_ZN3foo"+strings.Repeat("300"+strings.Repeat("$LT$", 75), 2)+hash)
	checked := 0
	for _, s := range names {
		if k, t0 := kindOf(s); k == itanium && strings.HasPrefix(t0, "_ZN") && endsInRustHash(t0) {
			checkLegacyHashed(t, t0)
			checked++
		}
	}
	if checked < 600 {
		t.Errorf("%d names checked", checked)
	}
}

// FuzzRustLegacyHashed checks rustLegacyHashed against the reading it
// replaced on names ending in a Rust hash whose identifiers are fuzzed.
func FuzzRustLegacyHashed(f *testing.F) {
	for _, s := range []string{"3foo", "11_$LT$T$GT$3fmt", "10a..b$u20$c", "4$u7e", "7$u10e1$", "1\xff", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkLegacyHashed(t, "_ZN"+s+"17h0123456789abcdefE")
	})
}

// BenchmarkRustLegacyNames demangles sentry-cli's legacy names as
// symbolize does (Name, Simplified); ns/op and allocs/op are per name.
func BenchmarkRustLegacyNames(b *testing.B) {
	names := sentryLegacyNames(b)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		Name(names[i%len(names)], Simplified)
	}
}

// TestAppendUnescapedAsBefore checks appendUnescaped, which stores eight
// bytes at a time into out's room, against the byte-by-byte reading it
// replaced: random identifiers of plain runs, escapes, ".", "..", stray
// "$" and non-ASCII bytes, after outputs of every length up to the
// room's end (so that the room runs out inside a run, or before it), with
// and without the rest of a name after the identifier.
func TestAppendUnescapedAsBefore(t *testing.T) {
	parts := []string{"a", "bc", "defghij", "klmnopqrstuvw", ".", "..", "$LT$", "$GT$", "$u20$", "$u7b$", "$C$",
		"$", "$XY$", "$u10e1$", "\xc3\xa9", "_"}
	rng := rand.New(rand.NewSource(1))
	for range 3000 {
		var e strings.Builder
		for range rng.Intn(8) {
			e.WriteString(parts[rng.Intn(len(parts))])
		}
		id := e.String()
		var want strings.Builder
		unescapeBefore(&want, id)
		ascii := isASCII(strings.TrimPrefix(id, "_"))
		for _, rest := range []string{"", "3foo17h0123456789abcdefE"} {
			for pre := range 20 {
				out := make([]byte, pre, 24)
				for i := range out {
					out[i] = 'x'
				}
				got, ok := appendUnescaped(out, id+rest, len(id))
				if ok != ascii {
					t.Fatalf("appendUnescaped(%q, %q, %d) ok %v, want %v", out, id+rest, len(id), ok, ascii)
				}
				if ok && string(got) != strings.Repeat("x", pre)+want.String() {
					t.Fatalf("appendUnescaped(%q, %q, %d) = %q, want %q", out, id+rest, len(id), got, strings.Repeat("x", pre)+want.String())
				}
			}
		}
	}
}

// TestLowerHexWord checks lowerHexWord against hexDigit's lower class on
// words of hexadecimal digits with one byte of every value put in each
// place, and on random words.
func TestLowerHexWord(t *testing.T) {
	check := func(w [8]byte) {
		want := true
		for _, c := range w {
			want = want && hexDigit[c]&lower != 0
		}
		if got := lowerHexWord(binary.LittleEndian.Uint64(w[:])); got != want {
			t.Fatalf("lowerHexWord(%q) = %v, want %v", w[:], got, want)
		}
	}
	for c := range 256 {
		for i := range 8 {
			w := [8]byte{'0', '9', 'a', 'f', '5', 'c', '1', 'e'}
			w[i] = byte(c)
			check(w)
		}
	}
	rng := rand.New(rand.NewSource(1))
	for range 100000 {
		var w [8]byte
		for i := range w {
			w[i] = "0123456789abcdef/:`gA\x80\xb0\xe1"[rng.Intn(23)]
		}
		check(w)
	}
}
