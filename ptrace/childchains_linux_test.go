//go:build linux && (amd64 || arm64)

package ptrace

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
	"golang.org/x/sys/unix"
)

// frameless is a child for TestProcessRingsMarkAChildsChainsCutFromTheStart:
// built without frame pointers, it spins in a leaf that keeps no frame
// record, under a chain of calls that keep none either, until SIGALRM ends
// it after argv[1] seconds.
const frameless = `#include <stdlib.h>
#include <unistd.h>
volatile unsigned long sink;
__attribute__((noinline)) void spin(void) { for (;;) sink++; }
__attribute__((noinline)) unsigned long recurse(int n) {
  if (n == 0) spin(); else sink += recurse(n - 1) * 3;
  return sink;
}
int main(int argc, char **argv) {
  alarm(argc > 1 ? atoi(argv[1]) : 5);
  return (int)recurse(6);
}
`

// TestProcessRingsMarkAChildsChainsCutFromTheStart: a static Go command is
// sampled by process rings (callchains), which its children inherit. A
// child built without frame pointers has every chain cut at its first
// frame, and each must say so, from its first samples on: the check
// against the child's unwind tables waits for their build, rather than
// passing the chains whose objects' tables were not built yet as whole
// (the first drain of a child's samples, mostly all of them under
// macprof record -- macprof record -- ./cbusy, were shown complete,
// rooted at msort_with_tmp). The child has a build ID of its own, so that
// no earlier test has its table built already.
func TestProcessRingsMarkAChildsChainsCutFromTheStart(t *testing.T) {
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Fatal("gcc is needed to build the test's child: install it (apt-get install gcc, or run scripts/install-deps.sh)")
	}
	dir := t.TempDir()
	src, child := filepath.Join(dir, "frameless.c"), filepath.Join(dir, "frameless")
	if err := os.WriteFile(src, []byte(frameless), 0o644); err != nil {
		t.Fatal(err)
	}
	buildID := fmt.Sprintf("-Wl,--build-id=0x%016x", time.Now().UnixNano())
	if b, err := exec.Command(cc, "-O2", "-fomit-frame-pointer", "-no-pie", buildID, "-o", child, src).CombinedOutput(); err != nil {
		t.Fatalf("build the child: %v\n%s", err, b)
	}
	spinLo, spinHi := funcRange(t, child, "spin")
	launcher := testprog.BuildGo(t, "gospawn")
	l := launchWithProcessRings(t, []string{launcher, child, "8"}, target.Options{})
	kids := map[int]bool{}
	t.Cleanup(func() {
		for pid := range kids {
			unix.Kill(pid, unix.SIGKILL)
		}
	})
	caps := make([]*target.Capture, 64)
	for i := range caps {
		caps[i] = target.NewCapture(128, 0)
	}
	var inSpin, whole int
	var shown []uint64
	testprog.PollEvery(20*time.Second, 50*time.Millisecond, func() bool {
		tids, err := l.Threads(nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tid := range tids {
			for {
				n, err := l.DrainSamples(tid, caps)
				if err != nil {
					t.Fatalf("drain thread %d: %v", tid, err)
				}
				for _, c := range caps[:n] {
					if c.PID == l.pid || c.PID == 0 {
						continue
					}
					kids[c.PID] = true
					if len(c.PCs) == 0 || c.PCs[0] < spinLo || c.PCs[0] >= spinHi {
						continue
					}
					inSpin++
					if c.Walk.Stop != unwind.StopNoFrameRecord || len(c.PCs) != 1 {
						whole++
						shown = c.PCs
					}
				}
				if n < len(caps) {
					break
				}
			}
		}
		return inSpin >= 100
	})
	if inSpin < 100 {
		t.Fatalf("%d samples of the child in spin in 20 s, want 100", inSpin)
	}
	if whole > 0 {
		t.Errorf("%d of %d samples of the child in spin (no frame record) not cut there and marked truncated (one: %#x)", whole, inSpin, shown)
	}
}
