package symcache

import (
	"strings"

	"github.com/ianlancetaylor/demangle"
)

// Demangle returns the readable form of a C++ or Rust symbol name, and
// returns other names (C, Go, Objective-C, Swift) unchanged.
func Demangle(name string) string {
	if strings.HasPrefix(name, "_Z") || strings.HasPrefix(name, "_R") {
		if d, err := demangle.ToString(name, demangle.NoClones); err == nil {
			return d
		}
	}
	return name
}

// IsSwift reports whether name is a mangled Swift symbol.
func IsSwift(name string) bool {
	for _, p := range []string{"$s", "_$s", "$S", "_$S", "_T0", "$e"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
