package unwind_test

import (
	"bufio"
	"bytes"
	"debug/elf"
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
	"time"

	"github.com/macprof/macprof/unwind"
	"github.com/macprof/macprof/unwind/cfi"
	"golang.org/x/sys/unix"
)

// TestWalkCFIAcrossGoStackSwitch samples a real Go program's main thread
// (testdata/goswitch, built by the test) while it is in the vDSO, which Go
// calls on g0's stack, its callers' frame records being in the goroutine's
// stack, and walks each sample as --unwind cfi does: the vDSO's frames by
// its own .eh_frame (read from the process), the Go code by its frame
// records. Each walk must cross to the goroutine's stack and go on to
// main.main and runtime.main, with the other stack read through the
// fallback reader (a stopped thread) and through Stack.After (a kernel
// sample: marked as read after the sample).
func TestWalkCFIAcrossGoStackSwitch(t *testing.T) {
	bin := buildTestdataGo(t, "goswitch")
	prog := loadGoProgram(t, bin)

	runtime.LockOSThread() // ptrace requests come from the tracing thread
	defer runtime.UnlockOSThread()
	cmd := exec.Command(bin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	// stop waits for the main thread's next stop with sig, passing the
	// Go runtime's own signals (SIGURG) on.
	stop := func(sig syscall.Signal) {
		t.Helper()
		for {
			var ws unix.WaitStatus
			if _, err := unix.Wait4(pid, &ws, 0, nil); err != nil {
				t.Fatal(err)
			}
			if !ws.Stopped() {
				t.Fatalf("goswitch: wait status %#x, want a stop", ws)
			}
			if ws.StopSignal() == sig {
				return
			}
			if err := unix.PtraceCont(pid, int(ws.StopSignal())); err != nil {
				t.Fatal(err)
			}
		}
	}
	stop(unix.SIGTRAP) // at its exec
	if err := unix.PtraceCont(pid, 0); err != nil {
		t.Fatal(err)
	}
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	reader := fileMem{mem}

	var tabs *goTables
	exact := unwind.MustWalker(t, unwind.Config{Arch: unwind.ArchAMD64, TablesOnly: true, Fallback: reader})
	after := unwind.MustWalker(t, unwind.Config{Arch: unwind.ArchAMD64, TablesOnly: true})
	buf := make([]byte, 8<<10)
	dst := make([]uint64, 0, 128)
	const want = 8
	samples := 0
	for tries := 0; samples < want; tries++ {
		if tries == 5000 {
			t.Fatalf("%d of %d stops in the vDSO", samples, tries)
		}
		time.Sleep(time.Millisecond)
		if err := unix.Tgkill(pid, pid, unix.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		stop(unix.SIGSTOP)
		if tabs == nil {
			tabs = goTablesOf(t, pid, prog, mem)
		}
		var regs unix.PtraceRegs
		if err := unix.PtraceGetRegs(pid, &regs); err != nil {
			t.Fatal(err)
		}
		if regs.Rip >= tabs.vdsoLo && regs.Rip < tabs.vdsoHi {
			samples++
			n := min(uint64(len(buf)), tabs.stackHi-regs.Rsp)
			if _, err := mem.ReadAt(buf[:n], int64(regs.Rsp)); err != nil {
				t.Fatal(err)
			}
			r := unwind.Regs{PC: regs.Rip, SP: regs.Rsp, FP: regs.Rbp}
			for _, c := range []struct {
				name  string
				w     *unwind.Walker
				after unwind.MemoryReader
			}{{"fallback", exact, nil}, {"after", after, reader}} {
				st := &unwind.Stack{Base: regs.Rsp, Data: buf[:n], Lo: tabs.stackLo, Hi: tabs.stackHi, After: c.after}
				pcs, res := c.w.WalkCFI(r, st, tabs, dst)
				got := tabs.names(pcs)
				i := slices.Index(got, "time.now")
				if res.Stop != unwind.StopEnd || res.StackSwitches != 1 || i < 1 || !slices.Contains(got[i:], "main.main") || !strings.HasPrefix(got[len(got)-1], "runtime.goexit") {
					t.Fatalf("%s: walk at %#x (SP %#x, FP %#x): %v, %v, %d stack switches; want the vDSO's frames, time.now, ..., main.main, runtime.main, runtime.goexit, one switch", c.name, regs.Rip, regs.Rsp, regs.Rbp, got, res.Stop, res.StackSwitches)
				}
				if marked := slices.Contains(pcs, unwind.AfterSampleMark); marked != (c.after != nil) || (res.AfterSampleFrames > 0) != marked {
					t.Errorf("%s: %v, %d frames read after the sample", c.name, got, res.AfterSampleFrames)
				}
				if res.LeftCopy() {
					t.Errorf("%s: the walk says a larger copy would have served it (LeftCopy): the goroutine's stack is not in it", c.name)
				}
			}
		}
		if err := unix.PtraceCont(pid, 0); err != nil {
			t.Fatal(err)
		}
	}
}

// fileMem reads a process's memory through its /proc/PID/mem.
type fileMem struct{ f *os.File }

func (m fileMem) ReadMemory(addr uint64, dst []byte) error {
	_, err := m.f.ReadAt(dst, int64(addr))
	return err
}

// goProgram is a Go executable's code and function symbols.
type goProgram struct {
	textLo, textHi uint64
	funcs          []elf.Symbol // sorted by address
}

func loadGoProgram(t *testing.T, path string) *goProgram {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := &goProgram{}
	for _, ph := range f.Progs {
		if ph.Type == elf.PT_LOAD && ph.Flags&elf.PF_X != 0 {
			p.textLo, p.textHi = ph.Vaddr, ph.Vaddr+ph.Memsz
		}
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			p.funcs = append(p.funcs, s)
		}
	}
	sort.Slice(p.funcs, func(i, j int) bool { return p.funcs[i].Value < p.funcs[j].Value })
	return p
}

// goTables is the unwind.Tables of a Go program's process as a profiler
// has them: its [vdso]'s table and the Go executable, which keeps frame
// pointers.
type goTables struct {
	prog             *goProgram
	vdso             *cfi.Table
	vdsoLo, vdsoHi   uint64
	stackLo, stackHi uint64
}

// goTablesOf reads pid's map and builds the table of its [vdso] from the
// bytes mapped there.
func goTablesOf(t *testing.T, pid int, prog *goProgram, mem *os.File) *goTables {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g := &goTables{prog: prog}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var lo, hi uint64
		if _, err := fmt.Sscanf(sc.Text(), "%x-%x", &lo, &hi); err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.HasSuffix(sc.Text(), "[vdso]"):
			g.vdsoLo, g.vdsoHi = lo, hi
		case strings.HasSuffix(sc.Text(), "[stack]"):
			g.stackLo, g.stackHi = lo, hi
		}
	}
	if g.vdsoHi == 0 || g.stackHi == 0 {
		t.Fatalf("no [vdso] or [stack] in /proc/%d/maps", pid)
	}
	b := make([]byte, g.vdsoHi-g.vdsoLo)
	if _, err := mem.ReadAt(b, int64(g.vdsoLo)); err != nil {
		t.Fatal(err)
	}
	e, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("[vdso]: %v", err)
	}
	if g.vdso, err = cfi.FromELF(e); err != nil {
		t.Fatalf("[vdso]: %v", err)
	}
	return g
}

// Rule is the vDSO's rule at pc (mapped from its file offset 0), or the
// Go executable's frame pointers.
func (g *goTables) Rule(pc uint64) (*unwind.Rule, bool) {
	switch {
	case pc >= g.vdsoLo && pc < g.vdsoHi:
		return g.vdso.Find(pc - g.vdsoLo), false
	case pc >= g.prog.textLo && pc < g.prog.textHi:
		return nil, true
	}
	return nil, false
}

// names names a walk's frames ([vdso], "?" outside every function, the
// AfterSampleMark left out).
func (g *goTables) names(pcs []uint64) []string {
	var out []string
	for i, pc := range pcs {
		if pc == unwind.AfterSampleMark {
			continue
		}
		if i > 0 {
			pc--
		}
		name := "?"
		if pc >= g.vdsoLo && pc < g.vdsoHi {
			name = "[vdso]"
		} else if j := sort.Search(len(g.prog.funcs), func(j int) bool { return g.prog.funcs[j].Value > pc }) - 1; j >= 0 && pc < g.prog.funcs[j].Value+max(g.prog.funcs[j].Size, 1) {
			name = g.prog.funcs[j].Name
		}
		out = append(out, name)
	}
	return out
}

// buildTestdataGo builds the Go program in testdata/name and returns its
// path.
func buildTestdataGo(t *testing.T, name string) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build testdata/%s: %v", name, err)
	}
	bin := filepath.Join(t.TempDir(), name)
	build := exec.Command(goTool, "build", "-o", bin, ".")
	build.Dir = filepath.Join("testdata", name)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build testdata/%s: %v\n%s", name, err, out)
	}
	return bin
}
