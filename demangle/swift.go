package demangle

import "github.com/macprof/macprof/demangle/swift"

// isSwift reports whether s has a Swift mangling prefix: Swift 5 and
// later ("$s"), 4.x ("$S", "_T0"), embedded ("$e"), with or without
// Mach-O's underscore, and the "_T" of Swift 3 and earlier (as Swift's own
// isSwiftSymbol; a C name of that shape just fails to demangle).
func isSwift(s string) bool { return swift.IsSwift(s) }

// swiftName demangles a Swift name.
func swiftName(s string, f Form) (string, bool) {
	if f == Full {
		return swift.Demangle(s)
	}
	return swift.Simplified(s)
}
