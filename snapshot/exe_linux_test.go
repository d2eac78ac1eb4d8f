package snapshot

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/procstat"
	"github.com/macprof/macprof/internal/testprog"
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
	testprog.WaitFor(t, 10*time.Second, func() bool {
		s, err := procstat.Read(pid)
		return err == nil && s.State == 'Z'
	}, "the child to become a zombie")
	want := fmt.Sprintf("process %d (true) has exited: it is a zombie until its parent (PID %d) reaps it", pid, os.Getpid())
	if err := exited(pid); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("exited(zombie) = %v, want %q...", err, want)
	}
	if err := exited(os.Getpid()); err != nil {
		t.Errorf("exited(self) = %v", err)
	}
}
