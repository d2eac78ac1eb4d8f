// Package swift demangles Swift symbol names, printing them exactly as
// Swift's own demangler (swift demangle) does, in full or simplified.
//
// No Go library demangled Swift, and Swift is most of the code in macOS
// apps: profiles need these names readable. Both manglings are read: the
// current one ("$s", "_$s", "$S", "$e", "_T0"; demangler.go and the
// productions beside it) and that of Swift 3 and earlier ("_T", "_Tt",
// old*.go). The grammar is Swift's docs/ABI/Mangling.rst; the printing
// (print*.go, printer.go) follows lib/Demangling/NodePrinter.
package swift

// Demangle returns the full demangling of name (as swift demangle prints
// it), or ok false when name is not a Swift symbol it can demangle.
func Demangle(name string) (string, bool) {
	s := demangleAsString(name, fullOptions)
	return s, s != ""
}

// Simplified returns the simplified demangling of name (as swift demangle
// --simplified prints it: no module names, argument labels without types,
// thunks shortened), or ok false.
func Simplified(name string) (string, bool) {
	s := demangleAsString(name, simplifiedOptions)
	return s, s != ""
}

// IsSwift reports whether name has a Swift mangling prefix.
func IsSwift(name string) bool {
	return prefixLen(name) != 0 || len(name) > 2 && name[0] == '_' && name[1] == 'T'
}

func demangleAsString(name string, opt options) (s string) {
	// A tree the grammar allows but the printer does not expect must not
	// crash the caller (a profiler naming frames): it is not demangled.
	// FuzzDemangle runs without this guard.
	defer func() {
		if recover() != nil {
			s = ""
		}
	}()
	return demangleUnguarded(name, opt)
}

func demangleUnguarded(name string, opt options) string {
	if len(name) > 2 && name[0] == '_' && name[1] == '_' {
		name = name[1:]
	}
	d := demanglers.Get().(*demangler)
	s := nodeToString(d.parse(name), opt)
	d.release()
	return s
}
