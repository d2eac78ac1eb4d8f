//go:build linux && (amd64 || arm64)

package ptrace

import (
	"testing"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/target"
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
