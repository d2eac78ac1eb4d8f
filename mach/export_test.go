package mach

import "github.com/macprof/macprof/unwind/compact"

// FreshUnwindTables gives the package an empty compact unwind cache for the
// rest of a test, and the previous one back at its end: the cache is
// process-wide, so a test that counts the tables its target builds would
// otherwise find them built by an earlier test (or an earlier -count run).
func FreshUnwindTables(cleanup func(func())) {
	old := unwindTables
	unwindTables = compact.NewCache(64 << 20)
	cleanup(func() { unwindTables = old })
}
