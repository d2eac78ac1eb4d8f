// Package demangle turns mangled symbol names (C++ Itanium, Rust legacy
// and v0, Swift) into readable ones, and leaves every other name as it is.
//
// It is the one place macprof demangles, so that profiles, symbolize and
// the demangle command print a function the same way; callers demangle
// lazily, one name at a time, as frames are named.
package demangle

import (
	"math/bits"
	"strings"

	"github.com/ianlancetaylor/demangle"
)

// Form is how much of a demangled name to print.
type Form uint8

const (
	// Simplified is what profiles show: Swift as `swift demangle
	// --simplified` prints it, Rust without its hash (rustc-demangle's
	// "{:#}"), C++ without clone suffixes.
	Simplified Form = iota
	// Full is every detail: Swift as `swift demangle`, Rust with its hash,
	// C++ as c++filt prints it.
	Full
)

// Name returns the readable form of the mangled name s, or s itself when
// s is not a mangled name this package knows (C, Go, Objective-C) or is
// malformed. A Mach-O name may keep its extra leading underscore.
func Name(s string, f Form) string {
	if d, ok := demangleName(s, f); ok {
		return d
	}
	return s
}

// IsMangled reports whether s has the prefix of a C++, Rust or Swift
// mangled name (it may still fail to demangle).
func IsMangled(s string) bool {
	k, _ := kindOf(s)
	return k != none
}

type kind uint8

const (
	none kind = iota
	itanium
	rustLegacyKind
	rustV0Kind
	swiftKind
)

// kindOf picks the demangler from the prefix alone, so that names that
// are not mangled cost a few byte compares. It drops Mach-O's extra
// leading underscore from C++ and Rust names.
func kindOf(s string) (kind, string) {
	if len(s) < 3 {
		return none, s
	}
	t := s
	if t[0] == '_' && t[1] == '_' {
		t = t[1:]
	}
	switch {
	case strings.HasPrefix(t, "_Z"):
		return itanium, t
	case strings.HasPrefix(t, "_R"):
		return rustV0Kind, t
	case strings.HasPrefix(s, "ZN"):
		// A legacy Rust name without its underscore, which
		// rustc-demangle takes too; never a C++ name.
		return rustLegacyKind, s
	case isSwift(s):
		return swiftKind, s
	}
	return none, s
}

func demangleName(s string, f Form) (string, bool) {
	k, t := kindOf(s)
	switch k {
	case itanium:
		if endsInRustHash(t) {
			// A legacy Rust name (most of a Rust binary's) whose path
			// ends the name: the C++ fast path below would find no
			// signature in it and leave it to rust, after a parse of
			// its own, and rust would check it twice more.
			if d, ok := rustLegacyHashed(t, f == Full); ok {
				return d, true
			}
		}
		// Most C++ names: the fast path takes them, and a signature
		// follows their name, which no legacy Rust name has
		// (mayBeRustLegacy would rule them out, its scan spared).
		if d, ok, signature := cxxFastName(t, f); ok && signature {
			return d, true
		}
		if !mayBeRustLegacy(t) {
			// Most C++ names: parameters follow the nested name's
			// "E" (or there is no nested name), which no Rust name
			// has.
			return cxx(t, f)
		}
		if strings.Contains(t, "_GLOBAL_") {
			// An anonymous namespace (_GLOBAL__N_1): C++'s own name,
			// which Rust never mangles but would take as a plain word.
			if d, ok := cxx(t, f); ok {
				return d, true
			}
		}
		if d, ok := rust(t, f == Full); ok {
			return d, true
		}
		return cxx(t, f)
	case rustLegacyKind, rustV0Kind:
		return rust(t, f == Full)
	case swiftKind:
		return swiftName(t, f)
	}
	return "", false
}

// The demangler's options for each form: c++filt's default (the full
// form) prints std::string as std::basic_string<char, ...>.
var (
	cxxSimplified = []demangle.Option{demangle.NoRust, demangle.NoClones}
	cxxFull       = []demangle.Option{demangle.NoRust, demangle.Verbose}
)

// cxx demangles an Itanium C++ name: most by cxxFast, the others by
// the full demangler.
func cxx(s string, f Form) (string, bool) {
	if d, ok := cxxFast(s, f); ok {
		return d, true
	}
	opts := cxxSimplified
	if f != Simplified {
		opts = cxxFull
	}
	limit := maxOutput(len(s))
	pow := min(bits.Len(uint(limit)), 30) // 1<<pow > limit
	d, err := demangle.ToString(s, append(opts[:len(opts):len(opts)], demangle.MaxLength(pow))...)
	if err != nil || len(d) > limit || len(d) >= 1<<pow {
		return "", false
	}
	return d, true
}

// maxOutput bounds what a C++ name of n bytes may demangle to; a name
// past it is left mangled. Substitutions let a few hundred bytes stand
// for gigabytes (each S<n>_ repeats a type that may hold two of the last:
// 337 bytes printed 2.5 MB, and each level more doubles it), and the
// names come from the target's binaries. Real names stay far below: the
// verbose std::string is 32 times its "Ss".
func maxOutput(n int) int { return 1024 + 64*n }

// endsInRustHash reports whether s ends as a legacy Rust name's path does:
// in the identifier "h" and 16 hexadecimal digits, then "E".
func endsInRustHash(s string) bool {
	const n = len("17h0123456789abcdefE")
	if len(s) < n+3 || s[len(s)-1] != 'E' || s[len(s)-n:len(s)-n+3] != "17h" {
		return false
	}
	h := s[len(s)-n+3 : len(s)-1]
	return lowerHexWord(load64(h[:8])) && lowerHexWord(load64(h[8:16]))
}

// lowerHexWord reports whether the eight bytes of x are all lower-case
// hexadecimal digits, all at once: for ASCII bytes, adding 0x80-lo sets a
// byte's high bit where it is at least lo, with no carry into the next
// byte.
func lowerHexWord(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	digit := (x + (0x80-'0')*ones) &^ (x + (0x80-'9'-1)*ones)
	letter := (x + (0x80-'a')*ones) &^ (x + (0x80-'f'-1)*ones)
	return x&highs == 0 && (digit|letter)&highs == highs
}
