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
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		got = pt.Descendants(root, got)
		slices.Sort(got)
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Descendants(%d) = %v, want %v", root, got, want)
		}
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
