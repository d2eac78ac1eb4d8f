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

// TestWalkCFIFromFrameWithoutCFI stops a real process in a function that
// keeps a frame record but has no CFI, as JIT code (testdata/nocfi:
// jitlike, built by clang with -fno-asynchronous-unwind-tables
// -fno-unwind-tables -fno-omit-frame-pointer), called by a function with
// CFI and no frame pointer (caller, gcc -fomit-frame-pointer), and walks
// its stack at every instruction of jitlike's body (after its push %rbp;
// mov %rsp, %rbp, up to its pop %rbp) as a kernel sample holds it: the
// walk takes jitlike's frame record, then the tables again, through
// caller and main to _start. A frame-pointer walk loses caller's callers.
func TestWalkCFIFromFrameWithoutCFI(t *testing.T) {
	cc, err := exec.LookPath("clang")
	if err != nil {
		t.Fatal("clang is needed to build testdata/nocfi/nocfi.c: apt-get install clang, or run scripts/install-deps.sh")
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Fatal("gcc is needed to build testdata/nocfi/caller.c: apt-get install gcc, or run scripts/install-deps.sh")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "nocfi")
	for _, c := range [][]string{
		{cc, "-O2", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables", "-fno-omit-frame-pointer", "-c", filepath.Join("testdata", "nocfi", "nocfi.c"), "-o", filepath.Join(dir, "nocfi.o")},
		{gcc, "-O2", "-fomit-frame-pointer", "-c", filepath.Join("testdata", "nocfi", "caller.c"), "-o", filepath.Join(dir, "caller.o")},
		{gcc, "-static", "-no-pie", filepath.Join(dir, "nocfi.o"), filepath.Join(dir, "caller.o"), "-o", bin},
	} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s (a static build needs libc6-dev)", c, err, out)
		}
	}
	o := loadObject(t, bin, unwind.ArchAMD64)
	name := o.namer()
	start := o.funcs["jitlike"].Value
	if start == 0 {
		t.Fatal("no function jitlike in the fixture")
	}
	if r, _ := o.Rule(start + 4); r != nil {
		t.Fatalf("jitlike has a rule, %v: the fixture no longer lacks CFI", r)
	}
	body := start + 4 // after push %rbp; mov %rsp, %rbp
	if got := o.code[start-o.text.Addr : body-o.text.Addr]; !slices.Equal(got, []byte{0x55, 0x48, 0x89, 0xe5}) {
		t.Fatalf("jitlike starts % x, not push %%rbp; mov %%rsp, %%rbp", got)
	}

	pid, regs, wait := stopAt(t, bin, body)
	lo, hi := stackMapping(t, pid)
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	w := unwind.MustWalker(t, unwind.Config{Arch: unwind.ArchAMD64})
	buf := make([]byte, 32<<10)
	dst := make([]uint64, 0, 64)
	stack := func() (*unwind.Stack, unwind.Regs) {
		t.Helper()
		n := min(uint64(len(buf)), hi-regs.Rsp)
		if _, err := mem.ReadAt(buf[:n], int64(regs.Rsp)); err != nil {
			t.Fatal(err)
		}
		return &unwind.Stack{Base: regs.Rsp, Data: buf[:n], Lo: lo, Hi: hi}, unwind.Regs{PC: regs.Rip, SP: regs.Rsp, FP: regs.Rbp}
	}
	steps := 0
	for ; steps < 300; steps++ { // the loop's body many times over
		if name(regs.Rip) != "jitlike" || o.code[regs.Rip-o.text.Addr] == 0x5d {
			break // returned, or at its pop %rbp
		}
		st, r := stack()
		pcs, res := w.WalkCFI(r, st, o, dst)
		got := names(pcs, name)
		if len(got) < 4 || !slices.Equal(got[:3], []string{"jitlike", "caller", "main"}) || got[len(got)-1] != "_start" || res.Stop != unwind.StopEnd {
			t.Fatalf("at %#x: walk %v (%v), want jitlike, caller, main, ..., _start", regs.Rip, got, res.Stop)
		}
		if steps == 0 {
			fp, _ := w.Walk(r, st, dst)
			if got := names(fp, name); len(got) >= 3 && got[len(got)-1] == "_start" {
				t.Errorf("the frame-pointer walk reaches _start too (%v): the fixture does not show the tables taken again", got)
			}
		}
		if err := unix.PtraceSingleStep(pid); err != nil {
			t.Fatal(err)
		}
		wait()
		if err := unix.PtraceGetRegs(pid, &regs); err != nil {
			t.Fatal(err)
		}
	}
	if steps < 10 {
		t.Fatalf("only %d steps walked in jitlike's body", steps)
	}
	t.Logf("%d steps in jitlike's body walked to _start", steps)
}
