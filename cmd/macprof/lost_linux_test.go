//go:build linux && (amd64 || arm64)

package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/testprog"
)

// TestRecordStoppedLosesSamplesNotStacks records at 999 Hz a thread whose
// CPU time is spread evenly over 40 stacks (phases.c: 2.5% each) while
// macprof is stopped again and again (kill -STOP/CONT, as a CPU quota
// does) while the target runs: the kernel's buffers fill and drop samples. The samples lost are
// shown as [lost: ...] and said in the summary, and no stack of the
// program's holds more than twice its share (the lost time was counted on
// the stack last seen, up to three times its share in one run).
func TestRecordStoppedLosesSamplesNotStacks(t *testing.T) {
	macprof, _ := macprofBinary(t)
	p := testprog.Start(t, testprog.BuildC(t, "phases.c"))
	out := filepath.Join(t.TempDir(), "p.folded")
	cmd := exec.Command(macprof, "record", "-F", "999", "-d", "6", "-p", strconv.Itoa(p.PID), "-o", out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var waitErr error
	exited := false
	t.Cleanup(func() {
		if !exited {
			cmd.Process.Kill()
			<-done
		}
	})
	stops := 0
	time.Sleep(500 * time.Millisecond)
	for !exited {
		if stops++; stops > 30 {
			t.Fatalf("macprof record -d 6 still runs after %d stops:\n%s", stops, stderr.String())
		}
		// Stopped until the target has run 1.2 s (1,200 samples, more
		// than a thread's ring holds at 999 Hz: a second's with
		// callchains, as root, less with stack copies) or for 4 s: a
		// fixed stop overflows no ring when a loaded machine gives the
		// target little CPU.
		_ = cmd.Process.Signal(syscall.SIGSTOP)
		from := procCPU(t, p.PID)
		testprog.Poll(4*time.Second, func() bool { return procCPU(t, p.PID)-from >= 1200*time.Millisecond })
		_ = cmd.Process.Signal(syscall.SIGCONT)
		select {
		case waitErr = <-done:
			exited = true
		case <-time.After(500 * time.Millisecond):
		}
	}
	if waitErr != nil {
		t.Fatalf("macprof record: %v\n%s", waitErr, stderr.String())
	}
	total, lost, top, topStack := foldedCounts(t, out)
	t.Logf("%d samples, %d lost, %d stops; the largest stack %d:\n%s\n%s", total, lost, stops, top, topStack, stderr.String())
	if total < 200 {
		t.Fatalf("%d samples in 6 s at 999 Hz: the target hardly ran", total)
	}
	// Whether a loss reads "buffer full" or "no sample" depends on the
	// kernel writing its lost record before the recording ends
	// (TestDrainSamplesTellsTheSamplesTheKernelLost checks the record).
	if lost == 0 || !strings.Contains(stderr.String(), "in these parts:") || !strings.Contains(stderr.String(), "shown as [lost: ") {
		t.Errorf("no samples shown as lost (%d) or said lost in the summary, while macprof was stopped for 1.2 s of the target's CPU at a time", lost)
	}
	if share := float64(top) / float64(total); share > 0.05 {
		t.Errorf("a stack holds %.1f%% of the samples, twice its share of 2.5%% or more: %s", 100*share, topStack)
	}
}

// foldedCounts reads a folded profile: its samples, those on [lost: ...]
// stacks, and the largest count of a program's stack, with that stack.
func foldedCounts(t *testing.T, path string) (total, lost, top int64, topStack string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		i := strings.LastIndexByte(line, ' ')
		stack, count := line[:max(i, 0)], line[i+1:]
		n, err := strconv.ParseInt(count, 10, 64)
		if err != nil {
			t.Fatalf("folded line %q: %v", sc.Text(), err)
		}
		total += n
		frames := strings.Split(stack, ";")
		switch leaf := frames[len(frames)-1]; {
		case strings.HasPrefix(leaf, "[lost"):
			lost += n
		case strings.HasPrefix(leaf, "["): // [unsampled]
		case n > top:
			top, topStack = n, stack
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return total, lost, top, topStack
}

// TestRecordLosesNoSampleOfThreadsStartedLate records at 999 Hz a command
// whose two busy threads start 300 ms in, once the sampler's first
// listings are over and it lists threads only every 500 ms while nothing
// changes: the rings their first captures open are drained from the next
// tick on, so no sample is lost (before, they waited for the next
// listing, and a ring holding ~125 samples lost ~370 of each thread's).
func TestRecordLosesNoSampleOfThreadsStartedLate(t *testing.T) {
	macprof, _ := macprofBinary(t)
	prog := testprog.BuildC(t, "latestart.c")
	out := filepath.Join(t.TempDir(), "p.folded")
	cmd := exec.Command(macprof, "record", "-F", "999", "-o", out, "--", prog, "300", "2", "1500")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("macprof record: %v\n%s", err, stderr.String())
	}
	total, lost, _, _ := foldedCounts(t, out)
	t.Logf("%d samples, %d lost\n%s", total, lost, stderr.String())
	if total < 2000 {
		t.Fatalf("%d samples of 3 s of CPU time at 999 Hz", total)
	}
	if share := float64(lost) / float64(total); share > 0.03 {
		t.Errorf("%.1f%% of the samples lost (%d of %d); want under 3%%", 100*share, lost, total)
	}
}

// holdsRE reads the summary's share of the CPU time the profile holds.
var holdsRE = regexp.MustCompile(`the profile holds \S+ of the \S+ of CPU time .*\(([0-9.]+)%, rusage\)`)

// TestRecordCountsThreadsEndingBetweenListingsOnce records at 999 Hz a
// command whose two busy threads end 0.5 s and 1.5 s in, between the
// listings (500 ms apart while nothing changes): the profile holds the
// CPU time they used once. Before, the CPU time of a thread's last part,
// which its samples counted, was counted again as [unsampled], or on the
// main thread's stack, once the thread was gone: 101.5-108.6%.
func TestRecordCountsThreadsEndingBetweenListingsOnce(t *testing.T) {
	macprof, _ := macprofBinary(t)
	prog := testprog.BuildC(t, "latestart.c")
	out := filepath.Join(t.TempDir(), "p.folded")
	cmd := exec.Command(macprof, "record", "-F", "999", "-o", out, "--", prog, "0", "2", "500", "1000")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("macprof record: %v\n%s", err, stderr.String())
	}
	m := holdsRE.FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("the summary says no share of the CPU time:\n%s", stderr.String())
	}
	share, _ := strconv.ParseFloat(m[1], 64)
	total, lost, top, topStack := foldedCounts(t, out)
	t.Logf("holds %.1f%%: %d samples, %d lost, largest stack %d: %s\n%s", share, total, lost, top, topStack, stderr.String())
	if share > 101 || share < 95 {
		t.Errorf("the profile holds %.1f%% of the CPU time the command used; want 95-101%%", share)
	}
}
