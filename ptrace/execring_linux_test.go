//go:build linux && (amd64 || arm64)

package ptrace

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/target"
)

// TestRingAfterExecCountsItOnce: a process execs another program before a
// thread's ring opens, while it opens, or after; in each case the exec is
// counted once, by the target (kernel.execs, where the ring starts) or by
// the ring's record of it, never both, and the samples after it are walked
// with the images of the program it ran.
func TestRingAfterExecCountsItOnce(t *testing.T) {
	execto := testprog.BuildC(t, "execto.c")
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal("the sleep command is needed on PATH")
	}
	if sleep, err = filepath.EvalSymlinks(sleep); err != nil {
		t.Fatal(err)
	}
	for _, when := range []string{"before", "during", "after"} {
		t.Run(when, func(t *testing.T) {
			p := testprog.Start(t, execto, "-signal", sleep, "60")
			tg, err := newTarget(p.PID, target.Options{Continuous: true, Kernel: target.KernelSampling{Period: time.Millisecond}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tg.Images(); err != nil {
				t.Fatal(err)
			}
			if exe := tg.gens.at(0).exe; exe != execto {
				t.Fatalf("images before the exec have executable %q, want %q", exe, execto)
			}
			execNow := func() {
				t.Helper()
				if err := unix.Kill(p.PID, unix.SIGUSR1); err != nil {
					t.Fatal(err)
				}
				waitExec(t, p.PID, sleep)
			}
			opens := 0
			open := tg.openAfterExecs(func(tid int, spec ringSpec) (*perfRing, bool, error) {
				opens++
				r, small, err := openPerfRing(tid, spec)
				if when == "during" && opens == 1 {
					execNow()
				}
				return r, small, err
			})
			if when == "before" {
				execNow()
			}
			tg.hotMu.Lock()
			defer tg.hotMu.Unlock()
			r, _, err := open(p.PID, tg.ringSpec(perfStackBytes))
			if err != nil {
				t.Fatal(err)
			}
			defer r.close()
			base := int(tg.kernel.execs.Load())
			if when == "after" {
				execNow()
			}
			r.begin()
			for _, _, ok := r.next(); ok; _, _, ok = r.next() {
			}
			r.consume()
			if got := base + r.execs; got != 1 {
				t.Errorf("execs counted: %d before the ring, %d in it; want 1 in all", base, r.execs)
			}
			if want := map[string]int{"during": 2}[when]; want != 0 && opens != want {
				t.Errorf("ring opened %d times, want %d (once more after the exec in its open)", opens, want)
			}
			gen := tg.execImagesOf(base + r.execs)
			if gen.exe != sleep || gen.set == nil || !hasImage(gen.set, sleep) {
				t.Errorf("samples after the exec walked with the images of %q, want %s's", gen.exe, sleep)
			}
			if old := tg.execImagesOf(0); old.exe != execto {
				t.Errorf("samples before the exec walked with the images of %q, want %s's", old.exe, execto)
			}
		})
	}
}

// waitExec waits until process pid runs exe, asleep in it: its exec has
// ended, past the kernel's record of it in any ring, and the program has
// its libraries mapped.
func waitExec(t *testing.T, pid int, exe string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		p, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if i := bytes.LastIndexByte(stat, ')'); p == exe && i >= 0 && bytes.HasPrefix(stat[i:], []byte(") S")) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("PID %d did not exec %s and sleep in it within 10 s", pid, exe)
		}
	}
}

// hasImage reports whether set has an image of the file at path.
func hasImage(set *images.Set, path string) bool {
	for _, im := range set.Images() {
		if im.Path == path {
			return true
		}
	}
	return false
}
