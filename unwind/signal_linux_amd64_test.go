package unwind_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/macprof/macprof/unwind"
	"golang.org/x/sys/unix"
)

// TestWalkCFIThroughSignalFrame stops a real process in a signal handler
// (testdata/signal: SIGALRM interrupts spinner, called by outer from main;
// the handler calls inhandler, where it stops) and walks its stack with
// the tables: through glibc's __restore_rt, whose FDE (augmentation "S")
// gives the CFA as *(SP+160) and every register at SP plus its offset in
// the ucontext, on to the interrupted spinner, outer, main and _start.
func TestWalkCFIThroughSignalFrame(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Fatal("gcc is needed to build testdata/signal/signal.c: apt-get install gcc, or run scripts/install-deps.sh")
	}
	bin := filepath.Join(t.TempDir(), "signal")
	if out, err := exec.Command(gcc, "-O2", "-static", "-no-pie", filepath.Join("testdata", "signal", "signal.c"), "-o", bin).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s (a static build needs libc6-dev)", err, out)
	}
	o := loadObject(t, bin, unwind.ArchAMD64)
	name := o.namer()
	restore := o.funcs["__restore_rt"].Value
	if restore == 0 {
		t.Fatal("no __restore_rt in the fixture")
	}
	if r, _ := o.Rule(restore); r == nil || !r.Signal || r.CFA != unwind.CFADerefSP || r.RA != unwind.RegSavedSP || r.FP != unwind.RegSavedSP {
		t.Fatalf("__restore_rt's rule %v, want a signal frame's: CFA=[SP+160] FP and RA at SP+offset", r)
	}
	pid, regs := stopInHandler(t, bin, o.funcs["inhandler"].Value)
	lo, hi := stackMapping(t, pid)
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	buf := make([]byte, min(32<<10, hi-regs.Rsp))
	if _, err := mem.ReadAt(buf, int64(regs.Rsp)); err != nil {
		t.Fatal(err)
	}
	st := &unwind.Stack{Base: regs.Rsp, Data: buf, Lo: lo, Hi: hi}
	w := unwind.MustWalker(t, unwind.Config{Arch: unwind.ArchAMD64})
	pcs, res := w.WalkCFI(unwind.Regs{PC: regs.Rip, SP: regs.Rsp, FP: regs.Rbp}, st, o, make([]uint64, 0, 64))
	got := names(pcs, name)
	if len(pcs) > 2 && pcs[2] == restore {
		got[2] = "__restore_rt" // the handler returns to its first byte: no size, so pc-1 has no name
	}
	want := []string{"inhandler", "handler", "__restore_rt", "spinner", "outer", "main"}
	if len(got) < len(want)+1 || !slices.Equal(got[:len(want)], want) || got[len(got)-1] != "_start" || res.Stop != unwind.StopEnd {
		t.Fatalf("walk %v (%v), want %v, ..., _start", got, res.Stop, want)
	}
}

// stopInHandler starts bin traced, passes it the signals it gets, and
// returns it stopped at a breakpoint at addr.
func stopInHandler(t *testing.T, bin string, addr uint64) (int, unix.PtraceRegs) {
	t.Helper()
	pid := startTraced(t, bin)
	return pid, runTo(t, pid, addr)
}
