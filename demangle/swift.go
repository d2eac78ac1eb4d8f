package demangle

import "strings"

// swiftPrefixes start Swift mangled names: Swift 5 and later ("$s"),
// Swift 4.x ("$S", "_T0"), embedded Swift ("$e"), each with Mach-O's
// leading underscore or without.
var swiftPrefixes = []string{"$s", "_$s", "$S", "_$S", "$e", "_$e", "_T0"}

func isSwift(s string) bool {
	for _, p := range swiftPrefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// swiftName demangles a Swift name.
func swiftName(s string, f Form) (string, bool) {
	return "", false
}
