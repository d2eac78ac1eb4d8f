package cfi

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/unwind"
)

// copyLibc copies the C library to a file of the test's own, which the
// test may cut.
func copyLibc(t *testing.T) string {
	libc, _ := systemObjects(t)
	data, err := os.ReadFile(libc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "libc.so.6")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLoadedTableOfTruncatedFile cuts a library to its first page after
// Load indexed it (its .eh_frame and header stay mapped for the lookups
// and the FDEs compiled on first use): lookups must not crash, find no
// rule for an FDE not compiled before the cut, and never a wrong one.
func TestLoadedTableOfTruncatedFile(t *testing.T) {
	path := copyLibc(t)
	tab, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !tab.Lazy() || !tab.lazy.mapped {
		t.Fatalf("%s: table not indexed over a mapping (lazy %v)", path, tab.Lazy())
	}
	whole := wholeBuild(t, path)
	rows := whole.AllRows()
	var first, later uint64
	for _, r := range rows {
		if r.Rule.CFA == unwind.CFANone {
			continue
		}
		if first == 0 {
			first = r.Off
		} else if r.Off > first+1<<16 {
			later = r.Off
			break
		}
	}
	if _, ok := tab.Lookup(first); !ok {
		t.Fatalf("%#x: no rule before the cut", first)
	}
	if err := os.Truncate(path, 4096); err != nil {
		t.Fatal(err)
	}
	if r, ok := tab.Lookup(later); ok {
		t.Errorf("%#x: rule %+v compiled from a file cut to one page", later, r)
	}
	for _, r := range rows {
		if got, want := tab.Find(r.Off), whole.Find(r.Off); got != nil && (want == nil || *got != *want) {
			t.Fatalf("%#x after the cut: rule %+v, the whole build's %+v", r.Off, *got, want)
		}
	}
}

// TestLoadedTableUnmapsWhenUnreachable checks that the mapping a table
// keeps goes once the table is unreachable: a profiler that loads and
// evicts tables for hours must not pile up mappings.
func TestLoadedTableUnmapsWhenUnreachable(t *testing.T) {
	path := copyLibc(t)
	mapped := func() bool {
		b, err := os.ReadFile("/proc/self/maps")
		if err != nil {
			t.Fatal(err)
		}
		return strings.Contains(string(b), path)
	}
	tab, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !mapped() {
		t.Fatalf("%s: not mapped while its table is in use", path)
	}
	runtime.KeepAlive(tab)
	tab = nil
	testprog.WaitFor(t, 10*time.Second, func() bool {
		runtime.GC()
		return !mapped()
	}, path+" unmapped once its table is unreachable")
}
