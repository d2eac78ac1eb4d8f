package demangle

import "github.com/macprof/macprof/demangle/swift"

// isSwift reports whether s has a Swift mangling prefix: Swift 5 and
// later ("$s"), 4.x ("$S", "_T0"), embedded ("$e"), with or without
// Mach-O's underscore, and the pre-Swift-4 "_T" forms.
func isSwift(s string) bool {
	if len(s) > 2 && s[0] == '_' && s[1] == 'T' {
		// "_T" alone also starts C identifiers ("_Tcl..."): only the
		// forms Swift used count.
		return s[2] == '0' || s[2] == 't' || s[2] == 'F' || s[2] == 'T' || s[2] == 'W' ||
			s[2] == 'M' || s[2] == 'w' || s[2] == 'v' || s[2] == 'P' || s[2] == 'I'
	}
	return swift.IsSwift(s)
}

// swiftName demangles a Swift name.
func swiftName(s string, f Form) (string, bool) {
	if f == Full {
		return swift.Demangle(s)
	}
	return swift.Simplified(s)
}
