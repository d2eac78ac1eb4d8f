//go:build linux && (amd64 || arm64)

package ptrace

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind/cfi"
)

// TestImagesBuildIDs: build IDs, read off the caller's goroutine, are
// there once the reads finish, and match the files'.
func TestImagesBuildIDs(t *testing.T) {
	bin := testprog.BuildC(t, "deep.c")
	want, err := images.ELFBuildID(bin)
	if err != nil || want == "" {
		t.Fatalf("build ID of %s: %q, %v", bin, want, err)
	}
	p := testprog.Start(t, bin, "1", "4")
	tg, err := Attach(p.PID, target.Options{Continuous: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	var got string
	var all bool
	if !testprog.PollEvery(10*time.Second, 50*time.Millisecond, func() bool {
		set, err := tg.Images()
		if err != nil {
			t.Fatal(err)
		}
		got, all = "", true
		for _, im := range set.Images() {
			if im.Path == bin {
				got = im.BuildID
			}
			if im.Path != "[vdso]" && im.BuildID == "" {
				all = false
			}
		}
		return got == want && all
	}) {
		t.Fatalf("build ID of %s = %q, want %q; every image has one: %v", bin, got, want, all)
	}
}

// swapTables replaces the process's unwind-table cache for one test with
// one whose builds only record the path asked for.
func swapTables(t *testing.T) (loaded func() []string) {
	var mu sync.Mutex
	var paths []string
	old := cfiTables
	cfiTables = cfi.NewCache(cfi.CacheOptions{Load: func(path string) (*cfi.Table, error) {
		mu.Lock()
		paths = append(paths, path)
		mu.Unlock()
		return nil, errors.New("not built in this test")
	}})
	t.Cleanup(func() { cfiTables = old })
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(paths)
	}
}

// TestAttachStartsTablesOfASmallProcess: attaching a snapshot's target
// (persistent) to a process of few objects starts building the unwind
// tables of its executable and libc with no capture or walk asked for.
func TestAttachStartsTablesOfASmallProcess(t *testing.T) {
	bin := testprog.BuildC(t, "deep.c")
	p := testprog.Start(t, bin, "1", "4")
	loaded := swapTables(t)
	tg, err := Attach(p.PID, target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	set, err := tg.Images()
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, im := range set.Images() {
		if im.Path != "[vdso]" {
			files = append(files, im.Path)
		}
	}
	if len(files) < 2 || len(files) > startTablesMax {
		t.Fatalf("deep maps %d objects (%v): the test needs 2 to %d", len(files), files, startTablesMax)
	}
	var got []string
	if !testprog.PollEvery(5*time.Second, 10*time.Millisecond, func() bool {
		got = loaded()
		return len(got) >= len(files)
	}) {
		t.Fatalf("tables started for %v, want one for each of %v", got, files)
	}
}

// TestStartTablesLeavesALargeProcess: a process of more than
// startTablesMax objects has no table started; one of startTablesMax has.
func TestStartTablesLeavesALargeProcess(t *testing.T) {
	loaded := swapTables(t)
	var imgs []*images.Image
	for i := range startTablesMax + 1 {
		imgs = append(imgs, &images.Image{Path: fmt.Sprintf("/lib/lib%d.so", i), Format: images.FormatELF,
			Start: uint64(i+1) << 20, Limit: uint64(i+1)<<20 + 4096})
	}
	startTables(images.NewSet(imgs))
	time.Sleep(50 * time.Millisecond) // a build started would have asked for its file by now
	if got := loaded(); len(got) != 0 {
		t.Errorf("tables started for %v", got)
	}
	startTables(images.NewSet(imgs[:startTablesMax]))
	if !testprog.PollEvery(5*time.Second, 10*time.Millisecond, func() bool { return len(loaded()) > 0 }) {
		t.Errorf("no table started for %d objects", startTablesMax)
	}
}
