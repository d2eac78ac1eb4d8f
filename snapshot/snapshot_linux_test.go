//go:build linux && (amd64 || arm64)

package snapshot

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/ptrace"
	"github.com/macprof/macprof/target"
	"golang.org/x/sys/unix"
)

// attach opens the Linux backend.
func attach(pid int, o target.Options) (target.Target, error) { return ptrace.Attach(pid, o) }

// euFrame is one frame eu-stack printed.
type euFrame struct {
	addr uint64
	name string
}

var (
	euTID  = regexp.MustCompile(`^TID (\d+):`)
	euLine = regexp.MustCompile(`^#(\d+)\s+0x([0-9a-f]+)\s*(\S*)`)
)

// euStack runs eu-stack on pid and returns its frames per thread.
func euStack(t *testing.T, pid int) map[uint64][]euFrame {
	t.Helper()
	bin, err := exec.LookPath("eu-stack")
	if err != nil {
		t.Fatal("eu-stack (elfutils) is needed as the oracle: apt-get install elfutils, or run scripts/install-deps.sh")
	}
	// eu-stack exits 1 when some thread could not be unwound completely
	// (Go's runtime threads end in frames without CFI); its output is
	// still complete for the others.
	out, _ := exec.Command(bin, "-p", strconv.Itoa(pid)).Output()
	res := map[uint64][]euFrame{}
	var cur uint64
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if m := euTID.FindStringSubmatch(line); m != nil {
			cur, _ = strconv.ParseUint(m[1], 10, 64)
			continue
		}
		if m := euLine.FindStringSubmatch(line); m != nil && cur != 0 {
			a, _ := strconv.ParseUint(m[2], 16, 64)
			res[cur] = append(res[cur], euFrame{addr: a, name: m[3]})
		}
	}
	if len(res) == 0 {
		t.Fatalf("eu-stack printed no stacks for PID %d:\n%s", pid, out)
	}
	return res
}

// compareWithEuStack snapshots a spinning test program with macprof and with
// eu-stack and checks that, for every thread spinning in the program's own
// code (built with frame pointers), the frames agree one for one: the same
// function at every depth and the same return address for every caller.
//
// The two snapshots are taken one after the other, so a thread may be
// elsewhere for the second one (a Go thread parked for a moment by the
// garbage collector, say): threads that are not spinning in both are
// compared again in a new pair of snapshots, up to five times.
func compareWithEuStack(t *testing.T, bin string, threads, depth int, args ...string) {
	p := testprog.Start(t, bin, args...)
	exe := filepath.Base(bin)
	isSpin := func(name string) bool { return strings.HasSuffix(name, "spin") }
	compared := map[uint64]bool{}
	for attempt := 0; attempt < 5 && len(compared) < threads; attempt++ {
		snap := takeComplete(t, p.PID)
		eu := euStack(t, p.PID)
		for _, th := range snap.Threads {
			if compared[th.TID] || len(th.Frames) == 0 || th.Frames[0].Image != exe || !isSpin(th.Frames[0].Function) {
				continue
			}
			ef, ok := eu[th.TID]
			if !ok || len(ef) == 0 || !isSpin(ef[0].name) {
				continue // not spinning when eu-stack looked: try again
			}
			compared[th.TID] = true
			matched := 0
			// eu-stack (without -i) prints physical frames only:
			// compare macprof's frames less those inlined into
			// the next (from the Go pclntab's inline tree).
			var phys []Frame
			for _, f := range th.Frames {
				if !f.Inlined {
					phys = append(phys, f)
				}
			}
			for i, f := range phys {
				if f.Image != exe || i >= len(ef) {
					break
				}
				addr, _ := strconv.ParseUint(strings.TrimPrefix(f.Address, "0x"), 16, 64)
				if i > 0 && addr != ef[i].addr {
					t.Errorf("thread %d frame #%d: macprof %#x %s, eu-stack %#x %s", th.TID, i, addr, f.Function, ef[i].addr, ef[i].name)
					break
				}
				// macprof drops Go's ABI suffix, as Go's tools do.
				if f.Function != strings.TrimSuffix(ef[i].name, ".abi0") {
					t.Errorf("thread %d frame #%d: macprof %q, eu-stack %q", th.TID, i, f.Function, ef[i].name)
					break
				}
				matched++
			}
			if matched < depth+2 {
				t.Errorf("thread %d: only %d frames matched eu-stack, want at least %d (spin, recurse x%d, the thread function)\nmacprof: %v\neu-stack: %v",
					th.TID, matched, depth+2, depth+1, th.Frames, ef)
			}
		}
	}
	if len(compared) != threads {
		t.Fatalf("compared %d threads spinning in the program in both snapshots, want %d", len(compared), threads)
	}
}

// stopRetries is how many times takeComplete takes a snapshot again when
// a thread did not stop in time.
const stopRetries = 5

// takeComplete takes a snapshot of pid that misses nothing. A thread that
// did not stop within the stop bound (target.ErrStopTimeout), which a
// loaded machine may cause, is the snapshot working as designed: it is
// taken again, up to stopRetries times. Anything else missing fails.
func takeComplete(t *testing.T, pid int) *Snapshot {
	t.Helper()
	for retry := 0; ; retry++ {
		snap, err := Take(Config{PID: pid, Attach: attach})
		if err != nil {
			t.Fatalf("snapshot: %v", err)
		}
		if len(snap.Missing) == 0 {
			return snap
		}
		timeouts := 0
		for _, m := range snap.Missing {
			if strings.HasSuffix(m, ": "+target.ErrStopTimeout.Error()) {
				timeouts++
			}
		}
		if timeouts < len(snap.Missing) || retry == stopRetries {
			t.Fatalf("snapshot incomplete (after %d retries for threads that did not stop in time): %v", retry, snap.Missing)
		}
		t.Logf("snapshot incomplete, threads did not stop in time (a loaded machine): %v; taking it again (retry %d of %d)", snap.Missing, retry+1, stopRetries)
	}
}

func TestSnapshotMatchesEuStackC(t *testing.T) {
	bin := testprog.BuildC(t, "deep.c")
	compareWithEuStack(t, bin, 4, 10, "4", "10")
}

func TestSnapshotMatchesEuStackGo(t *testing.T) {
	bin := testprog.BuildGo(t, "godeep")
	compareWithEuStack(t, bin, 2, 10, "2", "10")
}

// TestSnapshotWalksCodeWithoutFramePointers: Debian's python3 and libc keep
// no frame pointers, so a snapshot walks them with their unwind tables,
// built for the code the stacks meet once the threads run again (the walk
// during the stop waits for no table): a python3 asleep in time.sleep has
// the same frames as eu-stack gives, every return address, down to _start.
func TestSnapshotWalksCodeWithoutFramePointers(t *testing.T) {
	py, err := exec.LookPath("/usr/bin/python3")
	if err != nil {
		t.Fatal("Debian's python3 is needed (apt-get install python3)")
	}
	p := testprog.Start(t, py, "-c", "import time; print('ready', flush=True); time.sleep(120)")
	waitInSyscall(t, p.PID, unix.SYS_CLOCK_NANOSLEEP)
	snap := takeComplete(t, p.PID)
	eu := euStack(t, p.PID)
	var th *Thread
	for i := range snap.Threads {
		if snap.Threads[i].TID == uint64(p.PID) {
			th = &snap.Threads[i]
		}
	}
	ef := eu[uint64(p.PID)]
	if th == nil || len(ef) < 8 {
		t.Fatalf("main thread: macprof %v, eu-stack %v", th, ef)
	}
	if len(th.Frames) != len(ef) || th.Frames[len(th.Frames)-1].Function != "_start" {
		t.Errorf("macprof %d frames, eu-stack %d; want the same, down to _start\nmacprof: %v\neu-stack: %v", len(th.Frames), len(ef), th.Frames, ef)
	}
	for i := 1; i < min(len(th.Frames), len(ef)); i++ {
		addr, _ := strconv.ParseUint(strings.TrimPrefix(th.Frames[i].Address, "0x"), 16, 64)
		if addr != ef[i].addr {
			t.Errorf("frame #%d: macprof %#x %s, eu-stack %#x %s", i, addr, th.Frames[i].Function, ef[i].addr, ef[i].name)
		}
	}
}

// waitInSyscall waits until pid's main thread is in system call nr (it
// printed "ready" before the call, and a snapshot can be faster than the
// few instructions between the two on a loaded machine).
func waitInSyscall(t *testing.T, pid int, nr int) {
	t.Helper()
	want := strconv.Itoa(nr) + " "
	var got []byte
	if !testprog.Poll(10*time.Second, func() bool {
		got, _ = os.ReadFile("/proc/" + strconv.Itoa(pid) + "/syscall")
		return bytes.HasPrefix(got, []byte(want))
	}) {
		t.Fatalf("PID %d not in system call %d after 10 s: /proc/PID/syscall says %q", pid, nr, got)
	}
}

// TestSnapshotOfThreadStorm snapshots a process that creates thousands of
// short-lived threads a second until three threads ended between a
// listing and their capture (20 snapshots or 10 s at most): such threads
// are Ended, never missing, so every snapshot is complete (a thread that
// did not stop in time on a loaded machine is the one thing forgiven).
func TestSnapshotOfThreadStorm(t *testing.T) {
	p := testprog.Start(t, testprog.BuildC(t, "threadstorm.c"), "5000")
	ended, i := 0, 0
	for start := time.Now(); i < 20 && ended < 3 && time.Since(start) < 10*time.Second; i++ {
		snap, err := Take(Config{PID: p.PID, Attach: attach, Options: target.Options{MaxFrames: 64}})
		if err != nil {
			t.Fatalf("snapshot %d: %v", i, err)
		}
		for _, m := range snap.Missing {
			if !strings.HasSuffix(m, ": "+target.ErrStopTimeout.Error()) {
				t.Fatalf("snapshot %d misses %q (all missing: %q)", i, m, snap.Missing)
			}
		}
		// (Thread IDs wrap at pid_max: the main thread need not be first.)
		if !slices.ContainsFunc(snap.Threads, func(th Thread) bool { return th.TID == uint64(p.PID) && len(th.Frames) > 0 }) {
			t.Fatalf("snapshot %d has no stack of the main thread: %+v", i, snap.Threads)
		}
		ended += len(snap.Ended)
	}
	t.Logf("%d threads ended between listing and capture in %d snapshots", ended, i)
}
