//go:build darwin

package mach

// Integration tests: they need a Mac and a C compiler (cc, from the Xcode
// command line tools); those that launch or attach need root and skip
// without it (requireRoot), so that go test ./mach/ passes as a normal
// user. .github/workflows/macos.yml runs them with sudo on macos-15 (arm64)
// and macos-15-intel (x86_64). They have never run on the Linux machine
// this package was written on.

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/symcache"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// buildSpin compiles testdata/spin.c.
func buildSpin(t *testing.T) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Fatalf("these tests need a C compiler: cc not found in PATH (install the Xcode command line tools): %v", err)
	}
	out := filepath.Join(t.TempDir(), "spin")
	cmd := exec.Command(cc, "-O0", "-g", "-fno-omit-frame-pointer", "-o", out, filepath.Join("testdata", "spin.c"))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cc spin.c: %v\n%s", err, b)
	}
	return out
}

// requireRoot skips a test that needs the task port of another process
// unless it runs as root (sudo).
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for task_for_pid: run the test binary with sudo (as .github/workflows/macos.yml does)")
	}
}

func launchSpin(t *testing.T) *Target {
	t.Helper()
	requireRoot(t)
	tg, err := Launch([]string{buildSpin(t)}, nil, target.Options{})
	if err != nil {
		t.Fatalf("Launch: %v (run the tests as root: sudo go test ./mach/)", err)
	}
	t.Cleanup(func() {
		syscallKill(tg.PID())
		tg.Release()
	})
	return tg
}

func syscallKill(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}

// threadNamed waits until the target has a thread with the given name.
func threadNamed(t *testing.T, tg *Target, name string) target.ThreadID {
	t.Helper()
	var named target.ThreadID
	testprog.WaitFor(t, 5*time.Second, func() bool {
		ids, err := tg.Threads(nil)
		if err != nil {
			t.Fatalf("Threads: %v", err)
		}
		for _, id := range ids {
			if info, err := tg.Info(id); err == nil && info.Name == name {
				named = id
				return true
			}
		}
		return false
	}, fmt.Sprintf("a thread named %q", name))
	return named
}

// symbolize returns the function names of a stack, innermost first.
func symbolize(t *testing.T, set *images.Set, cache *symcache.Cache, pcs []uint64) []string {
	t.Helper()
	var names []string
	for i, pc := range pcs {
		img := set.Lookup(pc)
		if img == nil {
			names = append(names, "?")
			continue
		}
		for _, f := range cache.Symbolize(img, pc, i > 0) {
			names = append(names, f.Function)
		}
	}
	return names
}

func TestLaunchSampleAndSymbolize(t *testing.T) {
	requireRoot(t)
	tg := launchSpin(t)
	id := threadNamed(t, tg, "macprof-spin")
	info, err := tg.Info(id)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	info2, err := tg.Info(id)
	if err != nil {
		t.Fatal(err)
	}
	if info2.CPUTime <= info.CPUTime {
		t.Errorf("CPU time of the spinning thread did not grow: %v -> %v", info.CPUTime, info2.CPUTime)
	}
	set, err := tg.Images()
	if err != nil {
		t.Fatalf("Images: %v", err)
	}
	again, err := tg.Images()
	if err != nil || again != set {
		t.Errorf("Images read again with nothing loaded: %p vs %p, %v", again, set, err)
	}
	cache := symcache.New(symcache.Options{})
	c := target.NewCapture(unwind.DefaultMaxFrames, target.DefaultStackBytes)
	found := false
	var last []string
	for i := 0; i < 50 && !found; i++ {
		if err := tg.Capture(id, c); err != nil {
			t.Fatalf("Capture: %v", err)
		}
		if c.Stopped <= 0 || c.Stopped > time.Second {
			t.Errorf("Stopped = %v", c.Stopped)
		}
		if len(c.Stack) == 0 || c.StackBase != c.Regs.SP {
			t.Errorf("no bulk stack copy: %d bytes at %#x, SP %#x", len(c.Stack), c.StackBase, c.Regs.SP)
		}
		names := symbolize(t, set, cache, c.PCs)
		last = names
		s := strings.Join(names, " ")
		found = strings.Contains(s, "macprof_spin_leaf") && strings.Contains(s, "macprof_spin_middle") && strings.Contains(s, "main")
	}
	if !found {
		t.Errorf("no stack macprof_spin_leaf <- macprof_spin_middle <- main in 50 captures; last: %v", last)
	}
}

func TestCaptureAllSnapshot(t *testing.T) {
	requireRoot(t)
	tg := launchSpin(t)
	spin := threadNamed(t, tg, "macprof-spin")
	idle := threadNamed(t, tg, "macprof-idle")
	caps, err := tg.CaptureAll(nil)
	if err != nil {
		t.Fatalf("CaptureAll: %v", err)
	}
	seen := map[target.ThreadID]bool{}
	for _, c := range caps {
		if c.Err != nil {
			t.Errorf("thread %d: %v", c.Thread, c.Err)
		}
		if len(c.PCs) == 0 {
			t.Errorf("thread %d: empty stack", c.Thread)
		}
		seen[c.Thread] = true
	}
	if !seen[spin] || !seen[idle] {
		t.Errorf("snapshot misses threads: %v (want %d and %d)", seen, spin, idle)
	}
	// The target runs again afterwards.
	a, _ := tg.Info(spin)
	time.Sleep(100 * time.Millisecond)
	b, _ := tg.Info(spin)
	if b.CPUTime <= a.CPUTime {
		t.Error("target did not resume after CaptureAll")
	}
}

func TestCaptureDoesNotAllocate(t *testing.T) {
	requireRoot(t)
	tg := launchSpin(t)
	id := threadNamed(t, tg, "macprof-spin")
	c := target.NewCapture(unwind.DefaultMaxFrames, target.DefaultStackBytes)
	for i := 0; i < 3; i++ {
		if err := tg.Capture(id, c); err != nil {
			t.Fatal(err)
		}
	}
	ids := make([]target.ThreadID, 0, 64)
	n := testing.AllocsPerRun(200, func() {
		if err := tg.Capture(id, c); err != nil {
			t.Fatal(err)
		}
		ids, _ = tg.Threads(ids)
		if _, err := tg.Info(id); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Errorf("Capture+Threads+Info allocate %v times per call", n)
	}
}

// portCount counts the port names of this process.
func portCount(t *testing.T) int {
	t.Helper()
	var names, types unsafe.Pointer
	var nn, nt uint32
	if k := machPortNames(Darwin.TaskSelf(), &names, &nn, &types, &nt); k != KernSuccess {
		t.Fatalf("mach_port_names: %v", k)
	}
	vmDeallocate(Darwin.TaskSelf(), uintptr(names), uint64(nn)*4)
	vmDeallocate(Darwin.TaskSelf(), uintptr(types), uint64(nt)*4)
	return int(nn)
}

func TestPortsReleased(t *testing.T) {
	requireRoot(t)
	bin := buildSpin(t)
	runtime.LockOSThread() // keep MIG reply ports of other threads out of the count
	defer runtime.UnlockOSThread()
	before := portCount(t)
	for round := 0; round < 5; round++ {
		tg, err := Launch([]string{bin}, nil, target.Options{})
		if err != nil {
			t.Fatalf("Launch: %v", err)
		}
		id := threadNamed(t, tg, "macprof-spin")
		c := target.NewCapture(unwind.DefaultMaxFrames, target.DefaultStackBytes)
		for i := 0; i < 100; i++ {
			tg.Threads(nil)
			tg.Capture(id, c)
			tg.Info(id)
		}
		tg.CaptureAll(nil)
		tg.Images()
		syscallKill(tg.PID())
		tg.Wait()
		tg.Release()
	}
	after := portCount(t)
	// 5 rounds x 100 calls: a leak per call shows as hundreds of ports. A
	// few may appear for runtime threads created meanwhile.
	if after-before > 8 {
		t.Errorf("port names grew from %d to %d", before, after)
	}
}

func TestAttachErrors(t *testing.T) {
	if _, err := Attach(99999999, target.Options{}); !errors.Is(err, target.ErrExited) {
		t.Errorf("Attach(missing PID) = %v, want target.ErrExited", err)
	}
	_, err := Attach(1, target.Options{}) // launchd, /sbin/launchd
	if err == nil {
		t.Fatal("attached to launchd")
	}
	if !errors.Is(err, ErrProtected) && !errors.Is(err, ErrPermission) {
		t.Errorf("Attach(1) = %v, want ErrProtected or ErrPermission", err)
	}
	t.Logf("Attach(1): %v", err)
}

func TestLaunchExitStatus(t *testing.T) {
	requireRoot(t)
	tg, err := Launch([]string{buildSpin(t), "exit", "3"}, nil, target.Options{})
	if err != nil {
		t.Fatalf("Launch: %v", err)
	}
	defer tg.Release()
	ws, err := tg.Wait()
	if err != nil || ws.ExitStatus() != 3 {
		t.Errorf("Wait = %v, %v; want exit status 3", ws, err)
	}
	if _, err := tg.Threads(nil); err == nil {
		t.Error("Threads of an exited task succeeded")
	}
	c := target.NewCapture(8, 1024)
	if err := tg.Capture(12345, c); !errors.Is(err, target.ErrNoThread) {
		t.Errorf("Capture of an unknown thread = %v, want target.ErrNoThread", err)
	}
}

var selfSpinning atomic.Bool

//go:noinline
func machTestSelfSpin(stop *atomic.Bool) {
	x := 0
	for !stop.Load() {
		for i := 0; i < 1000; i++ {
			x += i
		}
	}
	_ = x
}

func TestSelf(t *testing.T) {
	var stop atomic.Bool
	defer stop.Store(true)
	go func() {
		runtime.LockOSThread()
		selfSpinning.Store(true)
		machTestSelfSpin(&stop)
	}()
	testprog.WaitFor(t, 10*time.Second, selfSpinning.Load, "the spinning goroutine to start")
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tg, err := Self(target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Release()
	set, err := tg.Images()
	if err != nil {
		t.Fatalf("Images of self: %v", err)
	}
	cache := symcache.New(symcache.Options{})
	c := target.NewCapture(unwind.DefaultMaxFrames, target.DefaultStackBytes)
	found := false
	for round := 0; round < 100 && !found; round++ {
		ids, err := tg.Threads(nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			if err := tg.Capture(id, c); err != nil {
				if errors.Is(err, target.ErrNoThread) {
					continue
				}
				t.Fatalf("Capture(%d): %v", id, err)
			}
			if strings.Contains(strings.Join(symbolize(t, set, cache, c.PCs), " "), "machTestSelfSpin") {
				found = true
				break
			}
		}
	}
	if !found {
		t.Error("no thread of this process was seen in machTestSelfSpin")
	}
}
