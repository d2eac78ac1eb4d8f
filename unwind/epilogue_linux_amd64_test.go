package unwind_test

import (
	"bufio"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/macprof/macprof/unwind"
	"golang.org/x/sys/unix"
)

// TestWalkCFIEpilogues single-steps a real process through a function of
// a GCC -O2 and a G++ -O2 fixture (testdata/epilogue, built static with
// the system compilers), every call under it included, and at every
// instruction walks the stack as a kernel sample holds it: the registers
// and a copy of the stack from SP up, nothing below. Each walk must name
// the functions the process really is in (followed through its calls and
// returns) and then main's callers to _start, as the walk at the entry
// does. Their epilogues pop rbp while the tables still say it is saved
// (now below SP, outside the copy), and main keeps its CFA in rbp, so
// that an rbp taken wrongly shows too.
func TestWalkCFIEpilogues(t *testing.T) {
	for _, fx := range []struct{ compiler, src, entry string }{
		{"gcc", "epilogue.c", "framed"},
		{"g++", "epilogue.cc", "_Z9interpretlPKl"},
	} {
		t.Run(fx.compiler, func(t *testing.T) {
			cc, err := exec.LookPath(fx.compiler)
			if err != nil {
				t.Fatalf("%s is needed to build testdata/epilogue/%s: apt-get install %s, or run scripts/install-deps.sh", fx.compiler, fx.src, fx.compiler)
			}
			bin := filepath.Join(t.TempDir(), "epilogue")
			args := []string{"-O2", "-static", "-no-pie", "-o", bin, filepath.Join("testdata", "epilogue", fx.src)}
			if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
				t.Fatalf("%s %v: %v\n%s (a static build needs libc6-dev and libstdc++-dev)", fx.compiler, args, err, out)
			}
			stepWalks(t, bin, fx.entry)
		})
	}
}

// stepWalks runs bin under ptrace to entry's first instruction, then
// single-steps until entry returns, checking the walk at every step.
func stepWalks(t *testing.T, bin, entry string) {
	o := loadObject(t, bin, unwind.ArchAMD64)
	name := o.namer()
	start := o.funcs[entry].Value
	if start == 0 {
		t.Fatalf("no function %s in %s", entry, bin)
	}
	pid, regs, wait := stopAt(t, bin, start)
	lo, hi := stackMapping(t, pid)
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	w := unwind.MustWalker(t, unwind.Config{Arch: unwind.ArchAMD64})
	buf := make([]byte, 32<<10)
	dst := make([]uint64, 0, 64)
	walk := func() ([]string, unwind.Result) {
		t.Helper()
		n := min(uint64(len(buf)), hi-regs.Rsp)
		if _, err := mem.ReadAt(buf[:n], int64(regs.Rsp)); err != nil {
			t.Fatal(err)
		}
		st := &unwind.Stack{Base: regs.Rsp, Data: buf[:n], Lo: lo, Hi: hi}
		pcs, res := w.WalkCFI(unwind.Regs{PC: regs.Rip, SP: regs.Rsp, FP: regs.Rbp}, st, o, dst)
		return names(pcs, name), res
	}
	// At the entry, its return address is on top: the walk needs no
	// epilogue rule, and main's callers from there are the oracle's.
	first, res := walk()
	if len(first) < 3 || first[0] != entry || first[1] != "main" || first[len(first)-1] != "_start" || res.Stop != unwind.StopEnd {
		t.Fatalf("walk at %s's entry: %v (%v), want %s, main, ..., _start", entry, first, res.Stop, entry)
	}
	outer := first[1:]
	entrySP := regs.Rsp
	// The functions the process is in below entry, innermost last, each
	// with the SP its return address was pushed at.
	type frame struct {
		name string
		sp   uint64
		ret  uint64
	}
	calls := []frame{{entry, entrySP, 0}}
	steps, epilogues := 0, 0
	for ; steps < 100000; steps++ {
		prevSP := regs.Rsp
		if err := unix.PtraceSingleStep(pid); err != nil {
			t.Fatal(err)
		}
		wait()
		if err := unix.PtraceGetRegs(pid, &regs); err != nil {
			t.Fatal(err)
		}
		if regs.Rsp > entrySP {
			break // entry returned
		}
		top := &calls[len(calls)-1]
		switch {
		case regs.Rsp == prevSP-8 && o.funcs[name(regs.Rip)].Value == regs.Rip:
			ret := make([]byte, 8)
			if _, err := mem.ReadAt(ret, int64(regs.Rsp)); err != nil {
				t.Fatal(err)
			}
			calls = append(calls, frame{name(regs.Rip), regs.Rsp, binary.LittleEndian.Uint64(ret)})
		case len(calls) > 1 && regs.Rsp == top.sp+8 && regs.Rip == top.ret:
			calls = calls[:len(calls)-1]
		}
		want := []string{}
		for i := len(calls) - 1; i >= 0; i-- {
			want = append(want, calls[i].name)
		}
		if want[0] != name(regs.Rip) {
			t.Fatalf("step %d: at %#x (%s), expected to be in %s", steps, regs.Rip, name(regs.Rip), want[0])
		}
		want = append(want, outer...)
		got, res := walk()
		if !slices.Equal(got, want) || res.Stop != unwind.StopEnd {
			t.Errorf("at %#x (rsp %#x): walk %v (%v), want %v", regs.Rip, regs.Rsp, got, res.Stop, want)
		}
		if r, _ := o.Rule(regs.Rip); r != nil && r.FP == unwind.RegSaved && r.CFA == unwind.CFASP && int64(r.CFAOff)+int64(r.FPOff) < 0 {
			epilogues++
		}
	}
	if regs.Rsp <= entrySP {
		t.Fatalf("%s did not return within %d steps", entry, steps)
	}
	if epilogues == 0 {
		t.Fatalf("none of %d steps was past a pop of rbp whose save the table still names: the fixture no longer tests epilogues", steps)
	}
	t.Logf("%d steps walked, %d of them past a pop of rbp the table still names", steps, epilogues)
}

// stopAt starts bin traced and runs it to addr (a breakpoint, taken out once
// hit): its PID, its registers there, and a wait for its next SIGTRAP stop
// while stepping. The calling goroutine stays on its thread, the tracer,
// until the test ends.
func stopAt(t *testing.T, bin string, addr uint64) (int, unix.PtraceRegs, func()) {
	t.Helper()
	pid := startTraced(t, bin)
	return pid, runTo(t, pid, addr), func() { waitTrap(t, pid, true) }
}

// startTraced starts bin traced, with env added to its environment, and
// waits for its stop at its exec; it is killed when the test ends. The
// calling goroutine stays on its thread, the tracer, until then.
func startTraced(t *testing.T, bin string, env ...string) int {
	t.Helper()
	runtime.LockOSThread() // ptrace requests come from the tracing thread
	t.Cleanup(runtime.UnlockOSThread)
	cmd := exec.Command(bin)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	waitTrap(t, cmd.Process.Pid, false)
	return cmd.Process.Pid
}

// waitTrap waits for pid's next SIGTRAP stop, passing the other signals it
// stops for on (a fixture's SIGALRM, the Go runtime's own); while stepping
// it drops them (SIGURG: a preemption request, which Go may miss) and
// steps again.
func waitTrap(t *testing.T, pid int, step bool) {
	t.Helper()
	for range 100 {
		var ws unix.WaitStatus
		if _, err := unix.Wait4(pid, &ws, 0, nil); err != nil {
			t.Fatal(err)
		}
		if !ws.Stopped() {
			t.Fatalf("fixture: wait status %#x, want a stop", ws)
		}
		if ws.StopSignal() == unix.SIGTRAP {
			return
		}
		var err error
		if step {
			err = unix.PtraceSingleStep(pid)
		} else {
			err = unix.PtraceCont(pid, int(ws.StopSignal()))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("fixture: no SIGTRAP stop in 100")
}

// runTo runs pid, stopped, to addr by a breakpoint, taken out once hit, and
// returns its registers there, its PC set back to addr.
func runTo(t *testing.T, pid int, addr uint64) unix.PtraceRegs {
	t.Helper()
	orig := make([]byte, 1)
	if _, err := unix.PtracePeekText(pid, uintptr(addr), orig); err != nil {
		t.Fatal(err)
	}
	if _, err := unix.PtracePokeText(pid, uintptr(addr), []byte{0xcc}); err != nil {
		t.Fatal(err)
	}
	if err := unix.PtraceCont(pid, 0); err != nil {
		t.Fatal(err)
	}
	waitTrap(t, pid, false)
	var regs unix.PtraceRegs
	if err := unix.PtraceGetRegs(pid, &regs); err != nil {
		t.Fatal(err)
	}
	if regs.Rip != addr+1 {
		t.Fatalf("stopped at %#x, want the breakpoint at %#x", regs.Rip, addr)
	}
	if _, err := unix.PtracePokeText(pid, uintptr(addr), orig); err != nil {
		t.Fatal(err)
	}
	regs.Rip = addr
	if err := unix.PtraceSetRegs(pid, &regs); err != nil {
		t.Fatal(err)
	}
	return regs
}

// stackMapping returns the bounds of pid's [stack] mapping.
func stackMapping(t *testing.T, pid int) (lo, hi uint64) {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasSuffix(sc.Text(), "[stack]") {
			if _, err := fmt.Sscanf(sc.Text(), "%x-%x", &lo, &hi); err != nil {
				t.Fatal(err)
			}
			return lo, hi
		}
	}
	t.Fatalf("no [stack] in /proc/%d/maps", pid)
	return 0, 0
}

// namer returns a function naming the function o holds an address in
// ("?" outside every one).
func (o *fixtureObject) namer() func(uint64) string {
	var funcs []elf.Symbol
	for _, s := range o.funcs {
		funcs = append(funcs, s)
	}
	sort.Slice(funcs, func(i, j int) bool { return funcs[i].Value < funcs[j].Value })
	return func(pc uint64) string {
		i := sort.Search(len(funcs), func(i int) bool { return funcs[i].Value > pc }) - 1
		if i < 0 || pc >= funcs[i].Value+max(funcs[i].Size, 1) {
			return "?"
		}
		return funcs[i].Name
	}
}

// names names a walk's frames: the PC, then each return address minus one
// (the call).
func names(pcs []uint64, name func(uint64) string) []string {
	out := make([]string, len(pcs))
	for i, pc := range pcs {
		if i > 0 {
			pc--
		}
		out[i] = name(pc)
	}
	return out
}
