//go:build linux && (amd64 || arm64)

package ptrace

import (
	"bufio"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/testprog"
)

// startTree starts sh with a tree of sleeping descendants below it, started
// from a subshell so that the tree is three levels deep, and returns the
// root and the PIDs the shells report.
func startTree(t *testing.T) (root int, want []int) {
	t.Helper()
	cmd := exec.Command("sh", "-c", `sleep 60 & echo $!; (sleep 60 & echo $!; wait) & echo $!; wait`)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, pid := range want {
			exec.Command("kill", strconv.Itoa(pid)).Run()
		}
		cmd.Process.Kill()
		cmd.Wait()
	})
	sc := bufio.NewScanner(out)
	for len(want) < 3 && sc.Scan() {
		pid, err := strconv.Atoi(strings.TrimSpace(sc.Text()))
		if err != nil {
			t.Fatalf("shell printed %q", sc.Text())
		}
		want = append(want, pid)
	}
	if len(want) < 3 {
		t.Fatalf("the shell reported %d PIDs, want 3", len(want))
	}
	slices.Sort(want)
	return cmd.Process.Pid, want
}

// waitTree polls Descendants until it lists want (forks take a moment to
// show up), failing after a few seconds.
func waitTree(t *testing.T, pt *ProcessTree, root int, want []int) {
	t.Helper()
	var got []int
	if !testprog.PollEvery(5*time.Second, 20*time.Millisecond, func() bool {
		got = pt.Descendants(root, got)
		slices.Sort(got)
		return slices.Equal(got, want)
	}) {
		t.Fatalf("Descendants(%d) = %v, want %v", root, got, want)
	}
}

func TestProcessTreeFindsEveryLevel(t *testing.T) {
	root, want := startTree(t)
	var pt ProcessTree
	waitTree(t, &pt, root, want)
	if pt.noFile {
		t.Fatal("this kernel has /proc/PID/task/TID/children, but the tree fell back to scanning /proc")
	}
	// The fallback scan agrees.
	fallback := ProcessTree{probed: true, noFile: true}
	waitTree(t, &fallback, root, want)
}

func TestProcessTreeSeesChildrenOfEveryThread(t *testing.T) {
	// The test binary starts children from whichever OS thread runs the
	// goroutine; children files are per thread, so all must be read.
	var cmds []*exec.Cmd
	for i := 0; i < 8; i++ {
		done := make(chan *exec.Cmd)
		go func() {
			c := exec.Command("sleep", "60")
			if err := c.Start(); err != nil {
				t.Error(err)
			}
			done <- c
		}()
		cmds = append(cmds, <-done)
	}
	t.Cleanup(func() {
		for _, c := range cmds {
			c.Process.Kill()
			c.Wait()
		}
	})
	var want []int
	for _, c := range cmds {
		want = append(want, c.Process.Pid)
	}
	var pt ProcessTree
	got := pt.Descendants(os.Getpid(), nil)
	for _, pid := range want {
		if !slices.Contains(got, pid) {
			t.Errorf("child %d missing from Descendants(self) = %v", pid, got)
		}
	}
}

func TestProcessTreeDoesNotAllocate(t *testing.T) {
	root, want := startTree(t)
	var pt ProcessTree
	waitTree(t, &pt, root, want)
	dst := make([]int, 0, 16)
	if n := testing.AllocsPerRun(20, func() { dst = pt.Descendants(root, dst) }); n != 0 {
		t.Fatalf("Descendants of a stable tree: %v allocations per call, want 0", n)
	}
}

func TestProcessTreeGoneRoot(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	var pt ProcessTree
	if got := pt.Descendants(cmd.Process.Pid, nil); len(got) != 0 {
		t.Fatalf("Descendants of an exited process = %v, want none", got)
	}
}

// TestProcessTreeReusesTheLastWalk checks that while no process is created
// the answer comes from the last walk (at most reuseWalks times in a row),
// and that a process started meanwhile is found by the very next call.
func TestProcessTreeReusesTheLastWalk(t *testing.T) {
	root, want := startTree(t)
	var pt ProcessTree
	waitTree(t, &pt, root, want)
	if pt.lastAllocatedPID() == 0 {
		t.Fatal("the last allocated PID could not be read from /proc/loadavg")
	}
	// Other processes on the machine may fork between two calls: look
	// for a run of calls that reused the walk.
	var got []int
	reused := false
	for i := 0; i < 2000 && !reused; i++ {
		before := pt.reused
		got = pt.Descendants(root, got)
		reused = pt.reused == before+1
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("Descendants(%d) = %v, want %v", root, got, want)
		}
	}
	if !reused {
		t.Fatal("2000 calls on a stable tree all walked it: the last walk is never reused")
	}
	// The bound on reuse, and the root: with the last allocated PID held
	// still, every reuseWalks+1-th call walks, and a call for another
	// root walks at once.
	pt.pidSource = func() int { return 1234 }
	got = pt.Descendants(root, got)
	for i := 1; i <= 3*(reuseWalks+1); i++ {
		wantReused := i % (reuseWalks + 1)
		if got = pt.Descendants(root, got); pt.reused != wantReused {
			t.Fatalf("call %d after a walk: reused %d times in a row, want %d", i, pt.reused, wantReused)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("call %d: Descendants(%d) = %v, want %v", i, root, got, want)
		}
	}
	if got = pt.Descendants(want[0], got); len(got) != 0 || pt.reused != 0 {
		t.Fatalf("Descendants(%d) (a sleep) = %v after reuse %d: the last walk was for another root", want[0], got, pt.reused)
	}
}

// TestProcessTreeFindsANewChildAtOnce checks that a process created after
// a walk is found by the next call, however recently the tree was walked.
func TestProcessTreeFindsANewChildAtOnce(t *testing.T) {
	cmd := exec.Command("sh", "-c", `read x; sleep 60 & echo $!; wait`)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var child int
	t.Cleanup(func() {
		if child > 0 {
			exec.Command("kill", strconv.Itoa(child)).Run()
		}
		cmd.Process.Kill()
		cmd.Wait()
	})
	var pt ProcessTree
	if got := pt.Descendants(cmd.Process.Pid, nil); len(got) != 0 {
		t.Fatalf("Descendants before the fork = %v, want none", got)
	}
	in.Write([]byte("go\n"))
	sc := bufio.NewScanner(out)
	if !sc.Scan() {
		t.Fatal("the shell printed no PID")
	}
	child, _ = strconv.Atoi(strings.TrimSpace(sc.Text()))
	if got := pt.Descendants(cmd.Process.Pid, nil); !slices.Equal(got, []int{child}) {
		t.Fatalf("Descendants right after the fork = %v, want [%d]", got, child)
	}
}

// TestLastPIDReadsOneFileKeptOpen: the PID watch and the process tree read
// /proc/loadavg at every tick through one descriptor opened once (an open
// and close per read cost twice the read), and a read of it at offset 0
// still sees the PIDs allocated since the last.
func TestLastPIDReadsOneFileKeptOpen(t *testing.T) {
	var buf [128]byte
	first := readLastPID(buf[:])
	if first <= 0 {
		t.Fatalf("readLastPID: %d", first)
	}
	before := loadavgDescriptors(t)
	for range 3 {
		readLastPID(buf[:])
	}
	if after := loadavgDescriptors(t); before != 1 || after != 1 {
		t.Fatalf("descriptors open on /proc/loadavg: %d after a read, %d after three more; want 1 and 1", before, after)
	}
	if err := exec.Command("true").Run(); err != nil {
		t.Fatal(err)
	}
	if pid := readLastPID(buf[:]); pid == first {
		t.Fatalf("the last PID allocated is still %d after starting a process", pid)
	}
}

// loadavgDescriptors counts this process's descriptors open on /proc/loadavg.
func loadavgDescriptors(t *testing.T) int {
	return openFiles(t, func(link string) bool { return link == "/proc/loadavg" })
}
