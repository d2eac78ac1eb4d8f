//go:build linux && (amd64 || arm64)

package ptrace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/target"
)

// LaunchWithStuckThread is Launch that then captures the first thread of
// the command found in uninterruptible sleep, bypassing the state check as
// a thread that enters the sleep just after it would be: the capture times
// out and leaves that thread attached and stuck, on the caller's OS thread,
// as a capture on a starved machine can (tests outside the package).
func LaunchWithStuckThread(args []string, opts target.Options) (*Launched, error) {
	l, err := Launch(args, opts)
	if err != nil {
		return nil, err
	}
	l.stop.skipBlockedCheck = true
	defer func() { l.stop.skipBlockedCheck = false }()
	// Every millisecond: such a sleep may last little longer.
	if !testprog.PollEvery(10*time.Second, time.Millisecond, func() bool {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", l.PID()))
		for _, p := range tasks {
			b, _ := os.ReadFile(p)
			st, _, ok := parseStat(b)
			if !ok || st != 'D' {
				continue
			}
			var tid int
			fmt.Sscanf(filepath.Base(filepath.Dir(p)), "%d", &tid)
			l.Threads(nil)
			c := target.NewCapture(64, 64<<10)
			if cerr := l.Capture(target.ThreadID(tid), c); !errors.Is(cerr, target.ErrStopTimeout) {
				err = fmt.Errorf("capture of thread %d in uninterruptible sleep: %v, want a timeout", tid, cerr)
			}
			return true
		}
		return false
	}) {
		err = errors.New("no thread entered an uninterruptible sleep")
	}
	return l, err
}
