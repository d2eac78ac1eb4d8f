package snapshot

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/procstat"
)

// TestExitedNamesZombieAndParent: a child that exited and is not reaped
// is refused with its name and the parent that must reap it; a live
// process is not.
func TestExitedNamesZombieAndParent(t *testing.T) {
	z := exec.Command("true")
	if err := z.Start(); err != nil {
		t.Fatal(err)
	}
	defer z.Wait()
	pid := z.Process.Pid
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if s, err := procstat.Read(pid); err == nil && s.State == 'Z' {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the child did not become a zombie in 10 s")
		}
	}
	want := fmt.Sprintf("process %d (true) has exited: it is a zombie until its parent (PID %d) reaps it", pid, os.Getpid())
	if err := exited(pid); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("exited(zombie) = %v, want %q...", err, want)
	}
	if err := exited(os.Getpid()); err != nil {
		t.Errorf("exited(self) = %v", err)
	}
}
