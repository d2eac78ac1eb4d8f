//go:build linux && (amd64 || arm64)

package ptrace

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/macprof/macprof/internal/procstat"
	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/target"
)

// helperEnv makes the test binary act as a profiler that attaches to a PID
// and captures in a loop until it is killed.
const helperEnv = "MACPROF_PTRACE_TEST_HELPER"

func TestMain(m *testing.M) {
	if pid := os.Getenv(helperEnv); pid != "" {
		os.Exit(captureForever(pid))
	}
	os.Exit(m.Run())
}

// helperContinuousEnv makes the helper capture in continuous mode, by
// stopping each thread, as `record --capture stop` does.
const helperContinuousEnv = "MACPROF_PTRACE_TEST_HELPER_CONTINUOUS"

func captureForever(pidStr string) int {
	pid, _ := strconv.Atoi(pidStr)
	continuous := os.Getenv(helperContinuousEnv) != ""
	t, err := Attach(pid, target.Options{Continuous: continuous})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("attached")
	c := target.NewCapture(512, 64<<10)
	var tids []target.ThreadID
	for {
		tids, _ = t.Threads(tids)
		for _, id := range tids {
			t.Capture(id, c)
		}
		if !continuous {
			t.CaptureAll(nil)
		}
	}
}

// startHelper starts the test binary as a profiler capturing pid in a loop,
// with env added, and returns once it has attached.
func startHelper(t *testing.T, pid int, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), helperEnv+"="+strconv.Itoa(pid)), env...)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	buf := make([]byte, 9)
	if _, err := io.ReadFull(out, buf); err != nil || string(buf) != "attached\n" {
		t.Fatalf("helper did not attach: %q %v", buf, err)
	}
	return cmd
}

// TestSIGTSTPedProfilerHoldsNoThread stops a profiler capturing by stopping
// threads with SIGTSTP, 20 times, and checks that no thread of the target
// is left held while it is stopped.
func TestSIGTSTPedProfilerHoldsNoThread(t *testing.T) {
	p := testprog.Start(t, testprog.BuildC(t, "deep.c"), "3", "20")
	helper := startHelper(t, p.PID, helperContinuousEnv+"=1")
	hpid := helper.Process.Pid
	held := 0
	for round := range 20 {
		time.Sleep(time.Duration(1+round*7%20) * time.Millisecond)
		if err := unix.Kill(hpid, unix.SIGTSTP); err != nil {
			t.Fatal(err)
		}
		testprog.WaitFor(t, 10*time.Second, func() bool { return allStopped(hpid) },
			fmt.Sprintf("round %d: the profiler to stop on SIGTSTP", round))
		if tids := heldThreads(p.PID); len(tids) > 0 {
			held++
			t.Errorf("round %d: threads %v of the target held while the profiler is stopped", round, tids)
		}
		if err := unix.Kill(hpid, unix.SIGCONT); err != nil {
			t.Fatal(err)
		}
	}
	if held > 0 {
		t.Fatalf("%d of 20 stops left a target thread held", held)
	}
}

// allStopped reports whether every thread of pid is stopped (T).
func allStopped(pid int) bool {
	tasks, err := listTasks(pid)
	if err != nil || len(tasks) == 0 {
		return false
	}
	for _, tid := range tasks {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/stat", pid, tid))
		if st, _, ok := parseStat(b); !ok || st != 'T' {
			return false
		}
	}
	return true
}

// heldThreads returns the threads of pid in a ptrace-stop (t).
func heldThreads(pid int) []int { return threadsIn(pid, "t") }

// stoppedThreads returns the threads of pid in a ptrace-stop or stopped.
func stoppedThreads(pid int) []int { return threadsIn(pid, "tT") }

// threadsIn returns the threads of pid whose state is one of states.
func threadsIn(pid int, states string) []int {
	var in []int
	tasks, _ := listTasks(pid)
	for _, tid := range tasks {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/stat", pid, tid))
		if st, _, ok := parseStat(b); ok && strings.IndexByte(states, st) >= 0 {
			in = append(in, tid)
		}
	}
	return in
}

// captureStop captures id, again while the thread does not stop in time: on
// a loaded machine a capture can time out (a missed sample), and a later
// capture lets the thread go once it stopped.
func captureStop(t *testing.T, tg *Target, id target.ThreadID, c *target.Capture) error {
	t.Helper()
	var err error
	testprog.Poll(30*time.Second, func() bool {
		err = tg.Capture(id, c)
		// EPERM: Attach's access check may still hold the thread, where
		// it did not stop in time (a loaded machine); it lets go soon.
		if !errors.Is(err, target.ErrStopTimeout) && !errors.Is(err, unix.EPERM) {
			return true
		}
		// A first capture opens the thread's ring before it stops the
		// thread: the retry is to stop it again, not read the ring.
		if tg.kernel != nil {
			tg.hotMu.Lock()
			tg.stateMu.Lock()
			if th := tg.threads[int(id)]; th != nil {
				th.kernel.closeRing()
			}
			tg.stateMu.Unlock()
			tg.hotMu.Unlock()
		}
		return false
	})
	return err
}

// startDeep starts deep.c with args and attaches to it with opts; the target
// is closed, then the process killed, when the test ends.
func startDeep(t *testing.T, opts target.Options, args ...string) (*testprog.Proc, *Target) {
	t.Helper()
	p := testprog.Start(t, testprog.BuildC(t, "deep.c"), args...)
	tg, err := Attach(p.PID, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return p, tg
}

// workers returns the threads of tids other than tg's main thread, in the
// order listed: a test program's spinning threads. The main thread is not
// always listed first: thread IDs wrap around at pid_max (32768 on the CI
// machine, reached in a run of the tests).
func workers(tg *Target, tids []target.ThreadID) []target.ThreadID {
	var w []target.ThreadID
	for _, tid := range tids {
		if int(tid) != tg.PID() {
			w = append(w, tid)
		}
	}
	return w
}

// worker returns the last of tids' workers: a test program's one spinning
// thread.
func worker(t *testing.T, tg *Target, tids []target.ThreadID) target.ThreadID {
	t.Helper()
	w := workers(tg, tids)
	if len(w) == 0 {
		t.Fatalf("threads %v: none but the main thread %d", tids, tg.PID())
	}
	return w[len(w)-1]
}

func cpuTicks(t *testing.T, pid int) (state byte, ticks uint64) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatalf("target died: %v", err)
	}
	st, ticks, ok := parseStat(b)
	if !ok {
		t.Fatalf("bad stat %q", b)
	}
	return st, ticks
}

func TestAttachMissingPID(t *testing.T) {
	_, err := Attach(1<<22+12345, target.Options{})
	if err == nil || !strings.Contains(err.Error(), "no process with PID") {
		t.Fatalf("err = %v, want 'no process with PID'", err)
	}
}

func TestAttachAlreadyTraced(t *testing.T) {
	p := testprog.Start(t, testprog.BuildC(t, "deep.c"), "2", "3")
	a, err := Attach(p.PID, target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	// A second tracer (another process) must be told who holds the target.
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+strconv.Itoa(p.PID))
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "already being traced by PID "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second attach said %q, want it to name the tracer (PID %d)", out, os.Getpid())
	}
}

func TestCaptureAndDetachLeavesTargetRunning(t *testing.T) {
	p := testprog.Start(t, testprog.BuildC(t, "deep.c"), "3", "8")
	tg, err := Attach(p.PID, target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tids, err := tg.Threads(nil)
	if err != nil || len(tids) != 4 {
		t.Fatalf("threads = %v, %v; want 4", tids, err)
	}
	c := target.NewCapture(512, 64<<10)
	spinning := 0
	for _, id := range tids {
		if err := captureStop(t, tg, id, c); err != nil {
			t.Fatalf("capture %d: %v", id, err)
		}
		if len(c.PCs) >= 10 {
			spinning++
		}
		if c.Stopped <= 0 {
			t.Errorf("capture %d: stopped time %v", id, c.Stopped)
		}
	}
	if spinning != 3 {
		t.Errorf("%d threads had deep stacks, want 3", spinning)
	}
	if err := tg.Close(); err != nil {
		t.Fatal(err)
	}
	if err := tg.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := tg.Threads(nil); !errors.Is(err, target.ErrClosed) {
		t.Errorf("Threads after Close: %v, want target.ErrClosed", err)
	}
	_, before := cpuTicks(t, p.PID)
	time.Sleep(200 * time.Millisecond)
	st, after := cpuTicks(t, p.PID)
	if st == 't' || st == 'T' || after <= before {
		t.Fatalf("target not running after detach: state %c, CPU ticks %d -> %d", st, before, after)
	}
	if v, _ := procStatusField(p.PID, "TracerPid"); v != "0" {
		t.Fatalf("target still traced by %s", v)
	}
}

// bothModes runs f with the persistent backend (all threads attached while
// the Target is open, as snapshot uses it) and the continuous one (each
// thread attached only for its capture, as record and agent use it).
func bothModes(t *testing.T, f func(t *testing.T, opts target.Options)) {
	t.Run("persistent", func(t *testing.T) { f(t, target.Options{}) })
	t.Run("continuous", func(t *testing.T) { f(t, target.Options{Continuous: true}) })
}

// TestCaptureAllNeedsPersistent checks that CaptureAll, a snapshot call, is
// refused by a continuous target, whose threads are not attached.
func TestCaptureAllNeedsPersistent(t *testing.T) {
	_, tg := startDeep(t, target.Options{Continuous: true}, "1", "5")
	caps, err := tg.CaptureAll(nil)
	if !errors.Is(err, errNotPersistent) || len(caps) != 0 {
		t.Fatalf("CaptureAll on a continuous target: %d captures, %v; want none, errNotPersistent", len(caps), err)
	}
	if _, err := tg.Threads(nil); err != nil {
		t.Fatalf("Threads after CaptureAll: %v", err)
	}
}

func TestCaptureDoesNotAllocate(t *testing.T) { bothModes(t, testCaptureDoesNotAllocate) }

func testCaptureDoesNotAllocate(t *testing.T, opts target.Options) {
	_, tg := startDeep(t, opts, "1", "20")
	tids, _ := tg.Threads(nil)
	c := target.NewCapture(512, 64<<10)
	id := worker(t, tg, tids)
	tg.Capture(id, c) // warm up: reads the memory map once
	allocs := testing.AllocsPerRun(200, func() {
		// (A stop timeout, a missed sample on a loaded machine,
		// allocates its error: too rarely to count in the average.)
		if err := tg.Capture(id, c); err != nil && !errors.Is(err, target.ErrStopTimeout) {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("Capture allocates %.1f times per call", allocs)
	}
	if len(c.PCs) < 20 {
		t.Fatalf("captured %d frames, want >= 20", len(c.PCs))
	}
	buf := make([]target.ThreadID, 0, 16)
	if a := testing.AllocsPerRun(100, func() { buf, _ = tg.Threads(buf) }); a != 0 {
		t.Errorf("Threads allocates %.1f times per call", a)
	}
	if a := testing.AllocsPerRun(100, func() { tg.Info(id) }); a != 0 {
		t.Errorf("Info allocates %.1f times per call", a)
	}
}

func TestThreadsComeAndGo(t *testing.T) { bothModes(t, testThreadsComeAndGo) }

func testThreadsComeAndGo(t *testing.T, opts target.Options) {
	p := testprog.Start(t, testprog.BuildC(t, "churn.c"), "4")
	tg, err := Attach(p.PID, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	fdsBefore := countFDs(t)
	c := target.NewCapture(512, 64<<10)
	var tids []target.ThreadID
	captured, gone, missed := 0, 0, 0
	seen := map[target.ThreadID]bool{}
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		tids, err = tg.Threads(tids)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range tids {
			seen[id] = true
			switch err := tg.Capture(id, c); {
			case err == nil:
				captured++
			case errors.Is(err, target.ErrNoThread):
				gone++
			case errors.Is(err, target.ErrStopTimeout), errors.Is(err, target.ErrThreadBlocked):
				// A thread the loaded machine did not let stop in
				// time, or one asleep in the kernel: a missed
				// sample, as the sampler counts it.
				missed++
			default:
				t.Fatalf("capture %d: %v", id, err)
			}
		}
		if opts.Continuous {
			continue
		}
		if _, err := tg.CaptureAll(nil); err != nil && !errors.Is(err, target.ErrStopTimeout) {
			t.Fatalf("CaptureAll: %v", err)
		}
	}
	if len(seen) < 20 {
		t.Errorf("saw only %d distinct threads; new threads are not followed", len(seen))
	}
	if captured == 0 {
		t.Fatal("no capture succeeded")
	}
	if d := countFDs(t) - fdsBefore; d > 16 {
		t.Errorf("open file descriptors grew by %d while threads came and went", d)
	}
	t.Logf("captured %d, gone %d, missed %d, distinct threads %d", captured, gone, missed, len(seen))
}

func countFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

func TestTargetExitsMidCapture(t *testing.T) { bothModes(t, testTargetExitsMidCapture) }

func testTargetExitsMidCapture(t *testing.T, opts target.Options) {
	p, tg := startDeep(t, opts, "2", "5")
	go func() {
		time.Sleep(100 * time.Millisecond)
		p.Cmd.Process.Kill()
	}()
	c := target.NewCapture(512, 64<<10)
	// No pause between rounds: a capture is under way when the kill comes.
	if !testprog.PollEvery(10*time.Second, 0, func() bool {
		tids, err := tg.Threads(nil)
		if errors.Is(err, target.ErrExited) {
			return true
		}
		for _, id := range tids {
			if err := tg.Capture(id, c); err != nil && !errors.Is(err, target.ErrNoThread) && !errors.Is(err, target.ErrExited) && !errors.Is(err, target.ErrStopTimeout) {
				t.Fatalf("capture: unexpected error %v", err)
			}
		}
		if opts.Continuous {
			return false
		}
		_, err = tg.CaptureAll(nil)
		return errors.Is(err, target.ErrExited)
	}) {
		t.Fatal("capture kept succeeding 10 s after the target was killed")
	}
	if _, err := tg.Images(); !errors.Is(err, target.ErrExited) {
		t.Errorf("Images after exit: %v, want target.ErrExited", err)
	}
}

func TestTargetExecsMidCapture(t *testing.T) {
	p := testprog.Start(t, testprog.BuildC(t, "churn.c"), "1", "exec")
	tg, err := Attach(p.PID, target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	c := target.NewCapture(512, 64<<10)
	if !testprog.PollEvery(15*time.Second, 20*time.Millisecond, func() bool {
		tids, err := tg.Threads(nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range tids {
			if err := tg.Capture(id, c); err != nil && !errors.Is(err, target.ErrNoThread) {
				t.Fatalf("capture: %v", err)
			}
		}
		set, err := tg.Images()
		if errors.Is(err, target.ErrExited) {
			// Its memory map is empty for a moment while it execs
			// (seen in a loaded run): look again.
			return false
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range set.Images() {
			if strings.HasSuffix(im.Path, "/sleep") {
				return true
			}
		}
		return false
	}) {
		t.Fatal("never saw the exec'd image")
	}
	if err := tg.Close(); err != nil {
		t.Fatal(err)
	}
	if v, _ := procStatusField(p.PID, "TracerPid"); v != "0" {
		t.Fatalf("target still traced by %s after exec and close", v)
	}
}

// TestSIGKILLedProfilerLeavesTargetRunning kills a capturing profiler with
// SIGKILL many times at random moments and checks the target runs on.
func TestSIGKILLedProfilerLeavesTargetRunning(t *testing.T) {
	p := testprog.Start(t, testprog.BuildC(t, "deep.c"), "3", "20")
	rounds := 25
	if testing.Short() {
		rounds = 5
	}
	for i := 0; i < rounds; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"="+strconv.Itoa(p.PID))
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 9)
		if _, err := out.Read(buf); err != nil || string(buf) != "attached\n" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("round %d: helper did not attach: %q %v", i, buf, err)
		}
		time.Sleep(time.Duration(1+i*7%40) * time.Millisecond)
		cmd.Process.Signal(os.Kill)
		cmd.Wait()
		time.Sleep(20 * time.Millisecond)
		// The target runs on: its CPU time grows (within whatever time
		// a loaded machine takes to give it a CPU) and no thread is
		// stopped.
		_, before := cpuTicks(t, p.PID)
		if !testprog.Poll(10*time.Second, func() bool {
			_, after := cpuTicks(t, p.PID)
			return after > before
		}) {
			t.Fatalf("round %d: target stopped after the profiler was killed: no CPU time in 10 s; threads in a stop: %v", i, stoppedThreads(p.PID))
		}
		if tids := stoppedThreads(p.PID); len(tids) > 0 {
			t.Fatalf("round %d: threads %v of the target stopped after the profiler was killed", i, tids)
		}
		if v, _ := procStatusField(p.PID, "TracerPid"); v != "0" {
			t.Fatalf("round %d: target still traced by %s", i, v)
		}
	}
}

// TestContinuousLeavesTargetUntracedBetweenCaptures checks that in
// continuous mode no thread stays attached between captures, so the
// target's signals are never intercepted, and that captures still walk
// full stacks.
func TestContinuousLeavesTargetUntracedBetweenCaptures(t *testing.T) {
	_, tg := startDeep(t, target.Options{Continuous: true}, "2", "15")
	c := target.NewCapture(512, 64<<10)
	deep := 0
	for round := 0; round < 50; round++ {
		tids, err := tg.Threads(nil)
		if err != nil || len(tids) != 3 {
			t.Fatalf("threads %v, %v", tids, err)
		}
		for _, id := range tids {
			if err := captureStop(t, tg, id, c); err != nil {
				t.Fatalf("capture %d: %v", id, err)
			}
			if len(c.PCs) >= 15 {
				deep++
			}
			for _, tid := range tids {
				if v, _ := procStatusField(int(tid), "TracerPid"); v != "0" {
					t.Fatalf("thread %d still traced (by %s) after a capture", tid, v)
				}
			}
		}
	}
	if deep < 90 {
		t.Fatalf("%d of 100 captures of the recursing threads had deep stacks", deep)
	}
}

func TestContinuousStackCopyGrowsForDeepStacks(t *testing.T) {
	// 1000 frames of recurse() take about 32 KiB of stack: more than the
	// first copy, less than the 64 KiB bound.
	_, tg := startDeep(t, target.Options{Continuous: true, MaxFrames: 2048}, "1", "1000")
	tids, _ := tg.Threads(nil)
	id := worker(t, tg, tids)
	c := target.NewCapture(2048, 64<<10)
	if err := captureStop(t, tg, id, c); err != nil {
		t.Fatal(err)
	}
	first, frames := c.Walk.FallbackReads, len(c.PCs)
	if first == 0 || len(c.Stack) != initialStackCopy {
		t.Fatalf("first capture copied %d bytes with %d fallback reads; want %d bytes and fallback reads", len(c.Stack), first, initialStackCopy)
	}
	if frames < 1000 {
		t.Fatalf("first capture walked %d frames, want >= 1000 (through fallback reads)", frames)
	}
	for i := 0; i < 4; i++ {
		if err := captureStop(t, tg, id, c); err != nil {
			t.Fatal(err)
		}
	}
	if c.Walk.FallbackReads != 0 || len(c.PCs) != frames {
		t.Fatalf("after growing: %d fallback reads, %d frames (copy %d bytes); want 0 and %d", c.Walk.FallbackReads, len(c.PCs), len(c.Stack), frames)
	}
	if len(c.Stack) >= 64<<10 {
		t.Errorf("copy grew to the whole bound (%d bytes) for a 32 KiB stack", len(c.Stack))
	}
}

func TestContinuousReleaseReapsThreadKilledWhileHeld(t *testing.T) {
	p, tg := startDeep(t, target.Options{Continuous: true}, "1", "5")
	tids, _ := tg.Threads(nil)
	tid := int(worker(t, tg, tids))
	tg.stateMu.Lock()
	th := tg.threads[tid]
	tg.stateMu.Unlock()
	// Hold the spinning thread as a capture does, on this OS thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := seize(tid, 0); err != nil {
		t.Fatal(err)
	}
	if err := interrupt(tid); err != nil {
		t.Fatal(err)
	}
	if err := tg.awaitStopBlocking(th); err != nil {
		t.Fatal(err)
	}
	// Killed while held.
	p.Cmd.Process.Kill()
	time.Sleep(100 * time.Millisecond)
	if err := tg.release(th); !errors.Is(err, target.ErrNoThread) {
		t.Fatalf("release of a thread killed while held: %v, want target.ErrNoThread", err)
	}
	// The process can now finish exiting: its parent sees it (without
	// reaping it, for the test program's own cleanup).
	if _, _, ok := waitExited(p.PID, 5*time.Second); !ok {
		t.Fatalf("PID %d did not finish exiting: the killed thread is still traced", p.PID)
	}
}

// waitExited waits up to d for the process, a child of this test, to have
// exited, as exited says.
func waitExited(pid int, d time.Duration) (code, status int32, ok bool) {
	ok = testprog.Poll(d, func() bool {
		code, status, ok = exited(pid)
		return ok
	})
	return code, status, ok
}

// exited reports whether the process, a child of this test, has exited,
// without reaping it (the test program's own cleanup reaps it), and returns
// its si_code and si_status. A ptrace-stop is reported to this process (the
// tracer) too, even without WSTOPPED.
func exited(pid int) (code, status int32, ok bool) {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	if err != nil || siginfoPID(&info) != pid {
		return 0, 0, false
	}
	// si_status sits at 24 in a SIGCHLD siginfo.
	return siginfoCode(&info), *(*int32)(unsafe.Add(unsafe.Pointer(&info), 24)), true
}

// childOf waits for the process to have a child and returns its PID.
func childOf(t *testing.T, pid int) int {
	t.Helper()
	var child int
	testprog.WaitFor(t, 10*time.Second, func() bool {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		c, err := strconv.Atoi(strings.TrimSpace(string(b)))
		child = c
		return err == nil && c > 0
	}, fmt.Sprintf("PID %d to start a child", pid))
	return child
}

// startVforkParent starts vfork.c, attaches to it in continuous mode, and
// has its main thread enter the uninterruptible wait of a vfork parent. It
// returns the stopped child's PID (killed when the test ends).
func startVforkParent(t *testing.T) (*testprog.Proc, *Target, int) {
	t.Helper()
	p := testprog.Start(t, testprog.BuildC(t, "vfork.c"))
	tg, err := Attach(p.PID, target.Options{Continuous: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	if err := unix.Kill(p.PID, unix.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	child := childOf(t, p.PID)
	testprog.WaitFor(t, 10*time.Second, func() bool {
		st, _ := cpuTicks(t, p.PID)
		return st == 'D'
	}, fmt.Sprintf("PID %d to enter the vfork wait (child %d)", p.PID, child))
	t.Cleanup(func() { unix.Kill(child, unix.SIGKILL) })
	// The check captures make is bypassed, as a thread that enters the
	// sleep just after it would.
	tg.stop.skipBlockedCheck = true
	return p, tg, child
}

// awaitExit0 waits until the process, a child of this test, has exited with
// status 0: seen without reaping it (the test program's own cleanup reaps
// it), or reaped by the target's own wait for a stop, which keeps its
// status.
func awaitExit0(t *testing.T, tg *Target, pid int) {
	t.Helper()
	if !testprog.Poll(5*time.Second, func() bool {
		if ws, ok := tg.ExitStatus(); ok {
			if !ws.Exited() || ws.ExitStatus() != 0 {
				t.Fatalf("PID %d: reaped with status %#x, want an exit with status 0", pid, uint32(ws))
			}
			return true
		}
		code, status, ok := exited(pid)
		if ok && (code != cldExited || status != 0) {
			t.Fatalf("PID %d: wait reports code %d status %#x, want an exit with status 0 (CLD_EXITED %d); left stopped?", pid, code, status, cldExited)
		}
		return ok
	}) {
		st, _ := cpuTicks(t, pid)
		t.Fatalf("PID %d did not exit after its vfork wait ended (state %c): left stopped?", pid, st)
	}
}

func TestContinuousCaptureBoundsTheWaitForAStop(t *testing.T) {
	p, tg, child := startVforkParent(t)
	c := target.NewCapture(512, 64<<10)
	start := time.Now()
	err := tg.Capture(target.ThreadID(p.PID), c)
	took := time.Since(start)
	if !errors.Is(err, target.ErrStopTimeout) {
		t.Fatalf("capture of a thread in an uninterruptible wait: %v, want target.ErrStopTimeout", err)
	}
	if took < continuousStopTimeout || took > 20*continuousStopTimeout {
		t.Errorf("capture gave up after %v, want about %v", took, continuousStopTimeout)
	}
	// A thread still asleep is not waited for again.
	start = time.Now()
	if err := tg.Capture(target.ThreadID(p.PID), c); !errors.Is(err, target.ErrStopTimeout) {
		t.Fatalf("second capture: %v, want target.ErrStopTimeout", err)
	}
	if took := time.Since(start); took >= continuousStopTimeout {
		t.Errorf("second capture waited %v for a thread known not to stop", took)
	}
	if !tg.stop.pinned {
		t.Error("the capturing goroutine was let off the OS thread that attached the stuck thread")
	}
	// The wait ends; the thread stops on the interrupt it still has
	// pending, and the next capture call lets it go.
	if err := unix.Kill(child, unix.SIGCONT); err != nil {
		t.Fatal(err)
	}
	testprog.WaitFor(t, 5*time.Second, func() bool {
		st, _ := cpuTicks(t, p.PID)
		return st == 't'
	}, "the thread to reach its ptrace stop after its wait ended")
	tg.Capture(target.ThreadID(p.PID), c) // may find the process exiting
	if len(tg.stop.stuck) != 0 || tg.stop.pinned {
		t.Errorf("after the stop: %d threads stuck, pinned %v; want none, false", len(tg.stop.stuck), tg.stop.pinned)
	}
	awaitExit0(t, tg, p.PID)
}

func TestContinuousCloseLetsGoOfStuckThreads(t *testing.T) {
	t.Run("stops while Close waits", func(t *testing.T) {
		p, tg, child := startVforkParent(t)
		c := target.NewCapture(512, 64<<10)
		if err := tg.Capture(target.ThreadID(p.PID), c); !errors.Is(err, target.ErrStopTimeout) {
			t.Fatalf("capture: %v, want target.ErrStopTimeout", err)
		}
		// The vfork wait ends before Close: the thread then stops as
		// soon as it gets a CPU, which on a loaded machine can be
		// after Close started waiting, or (rarely) before. (Ending the
		// wait during Close made the test depend on the child being
		// run within Close's bound.)
		if err := unix.Kill(child, unix.SIGCONT); err != nil {
			t.Fatal(err)
		}
		testprog.WaitFor(t, 10*time.Second, func() bool {
			if _, err := os.Stat(fmt.Sprintf("/proc/%d/task/%d", p.PID, p.PID)); err != nil {
				return true
			}
			st, err := procstat.Read(child)
			return err != nil || st.State == 'Z'
		}, fmt.Sprintf("the vfork child %d to exit", child))
		tg.Close()
		if len(tg.stop.stuck) != 0 || tg.stop.pinned {
			t.Errorf("after Close: %d threads stuck, pinned %v; want none, false", len(tg.stop.stuck), tg.stop.pinned)
		}
		awaitExit0(t, tg, p.PID)
	})
	t.Run("still asleep after Close", func(t *testing.T) {
		p, tg, child := startVforkParent(t)
		// Capture and Close on a goroutine of their own: it ends pinned
		// to the OS thread that attached the thread, and its end ends
		// that OS thread, which detaches the thread. (Not the main
		// thread, which the runtime never ends: a goroutine that finds
		// itself there gives way to another.)
		done := make(chan error, 1)
		var tracer int // the OS thread that attached the target
		var capture func()
		capture = func() {
			runtime.LockOSThread()
			if unix.Gettid() == unix.Getpid() {
				go capture()
				runtime.UnlockOSThread()
				return
			}
			defer runtime.UnlockOSThread() // balances ours; the capture's pin stays
			tracer = unix.Gettid()
			c := target.NewCapture(512, 64<<10)
			err := tg.Capture(target.ThreadID(p.PID), c)
			tg.Close()
			if err == nil || !tg.stop.pinned {
				err = fmt.Errorf("capture: %v, pinned %v; want target.ErrStopTimeout, true", err, tg.stop.pinned)
			} else {
				err = nil
			}
			done <- err
		}
		go capture()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		// Until that thread has ended the target is still traced, and the
		// end of its vfork wait would be a ptrace-stop this process sees.
		testprog.WaitFor(t, 10*time.Second, func() bool {
			_, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", tracer))
			return err != nil
		}, fmt.Sprintf("the thread %d that attached PID %d to end", tracer, p.PID))
		if err := unix.Kill(child, unix.SIGCONT); err != nil {
			t.Fatal(err)
		}
		awaitExit0(t, tg, p.PID)
	})
}

func TestContinuousTargetEndsWhenOnlyAZombieLeaderIsLeft(t *testing.T) {
	// sh starts `sleep 0.3` and becomes `sleep 60`, which never reaps
	// it: when it exits it stays a zombie, its only thread.
	sh := exec.Command("sh", "-c", "sleep 0.3 & exec sleep 60")
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sh.Process.Kill(); sh.Wait() }()
	pid := childOf(t, sh.Process.Pid)
	tg, err := Attach(pid, target.Options{Continuous: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	var tids []target.ThreadID
	first := time.Now()
	if !testprog.Poll(5*time.Second, func() bool {
		tids, err = tg.Threads(tids)
		return errors.Is(err, target.ErrExited)
	}) {
		st, _ := cpuTicks(t, pid)
		t.Fatalf("PID %d (state %c) still listed as live: %v", pid, st, err)
	}
	if st, _ := cpuTicks(t, pid); st != 'Z' {
		t.Fatalf("PID %d is in state %c, want a zombie", pid, st)
	}
	// Its pidfd told the exit: the states were read once, at the first
	// listing, not every zombieCheckEvery (each read costs about 25 us
	// of kernel time).
	if took := time.Since(first); tg.tasks.statReads != 1 || took >= zombieStatEvery {
		t.Errorf("exit found %v after the first listing, with %d reads of the states; want it from the pidfd, with the first listing's read alone", took, tg.tasks.statReads)
	}
}

// TestContinuousTargetEndsWhenEveryThreadIsAZombie kills a process one of
// whose threads another tracer (this test's thread) holds attached, so that
// two zombies are left, the leader and the traced thread: the target is
// seen as exited, not only when a lone zombie leader is left.
func TestContinuousTargetEndsWhenEveryThreadIsAZombie(t *testing.T) {
	p := testprog.Start(t, testprog.BuildC(t, "spinexit.c"))
	tg, err := Attach(p.PID, target.Options{Continuous: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	tids, err := tg.Threads(nil)
	if err != nil || len(tids) != 2 {
		t.Fatalf("threads %v, %v; want the main thread and the spinning one", tids, err)
	}
	worker := int(worker(t, tg, tids))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := seize(worker, 0); err != nil {
		t.Fatal(err)
	}
	defer func() {
		var ws unix.WaitStatus
		wait4(worker, &ws, unix.WALL) // reap it: the process can then be reaped
	}()
	if err := p.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if !testprog.Poll(10*time.Second, func() bool {
		_, err = tg.Threads(nil)
		return errors.Is(err, target.ErrExited)
	}) {
		t.Fatalf("threads of a process whose every thread is a zombie (%v): %v, want target.ErrExited", stoppedThreads(p.PID), err)
	}
	for _, tid := range []int{p.PID, worker} {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/stat", p.PID, tid))
		if st, _, ok := parseStat(b); !ok || st != 'Z' {
			t.Errorf("thread %d: state %c, want a zombie", tid, st)
		}
	}
}
