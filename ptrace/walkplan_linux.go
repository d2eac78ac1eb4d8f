//go:build linux && (amd64 || arm64)

package ptrace

import "github.com/macprof/macprof/unwind"

// walkPlan is what the unwind method (target.Options.Unwind) decides for a
// target's walks, chain checks and rings. Every place that depends on the
// method asks walkPlanOf, so that what auto, cfi and fp mean is decided
// here alone.
type walkPlan struct {
	// tables: walks use the objects' unwind tables (built as needed) and
	// callchains are checked against them (auto, cfi); fp walks frame
	// records whatever the tables say.
	tables bool
	// tablesOnly: a frame whose code has no table ends the walk rather
	// than following its frame record (cfi).
	tablesOnly bool
	// chainsFirst: every ring starts with callchains (fp).
	chainsFirst bool
	// switchRings: a thread's first ring starts with callchains where its
	// first capture lies all in code that keeps frame pointers, and a
	// ring moves to callchains once its walks were exact by frame records
	// long enough (auto).
	switchRings bool
}

// walkPlanOf returns what method m decides. A method it does not know
// walks with the tables where it can, as auto without its ring switches.
func walkPlanOf(m unwind.Method) walkPlan {
	switch m {
	case unwind.MethodAuto:
		return walkPlan{tables: true, switchRings: true}
	case unwind.MethodFP:
		return walkPlan{chainsFirst: true}
	case unwind.MethodCFI:
		return walkPlan{tables: true, tablesOnly: true}
	}
	return walkPlan{tables: true}
}

// plan returns what t's unwind method decides.
func (t *Target) plan() walkPlan { return walkPlanOf(t.opts.Unwind) }

// framesAllByRecords reports whether every frame of a command at path is
// walked by its frame record, so that the callchains of process rings
// serve all its code: with fp, or with auto for a statically linked Go
// binary (Go keeps frame pointers, and a binary without an interpreter
// loads no other code).
func (p walkPlan) framesAllByRecords(path string) bool {
	switch {
	case !p.tables:
		return true
	case p.switchRings:
		return staticGo(path)
	}
	return false
}
