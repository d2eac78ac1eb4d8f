package unwind

import "fmt"

// Method selects how a backend walks stacks.
type Method uint8

// Walk methods.
const (
	// MethodAuto: unwind tables (DWARF CFI) where an object has them,
	// frame records elsewhere (WalkCFI). The default.
	MethodAuto Method = iota
	// MethodFP: frame records only (Walk).
	MethodFP
	// MethodCFI: unwind tables only; a frame whose code has no table
	// ends the walk (WalkCFI with Config.TablesOnly), except in objects
	// known to keep frame pointers (Go binaries).
	MethodCFI
)

// String returns the method's flag value.
func (m Method) String() string {
	switch m {
	case MethodAuto:
		return "auto"
	case MethodFP:
		return "fp"
	case MethodCFI:
		return "cfi"
	}
	return fmt.Sprintf("Method(%d)", uint8(m))
}

// ParseMethod parses fp, cfi or auto.
func ParseMethod(s string) (Method, error) {
	for _, m := range []Method{MethodAuto, MethodFP, MethodCFI} {
		if s == m.String() {
			return m, nil
		}
	}
	return 0, fmt.Errorf("unwind method must be fp, cfi or auto, not %q", s)
}
