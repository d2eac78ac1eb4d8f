package mach_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/mach/machtest"
	"github.com/macprof/macprof/target"
)

// TestCloseDuringCapture: a second Ctrl-C closes the Target from another
// goroutine while the sampler is inside a capture, here inside
// thread_get_state with the thread suspended. Close must wait for the
// capture: had it released the thread's port first, the deferred
// thread_resume would name nothing (MACH_SEND_INVALID_DEST) and the thread
// would stay suspended. Run under -race, the test also catches Close and
// the capture touching the thread table at once.
func TestCloseDuringCapture(t *testing.T) {
	for _, how := range []string{"Capture", "CaptureBatch", "CaptureAll"} {
		t.Run(how, func(t *testing.T) {
			w := newWorld(t, "arm64", []chain{chainA}, []chain{chainB})
			tg := w.attach(t, target.Options{Continuous: true, Unattended: how == "CaptureBatch"})
			ids, err := tg.Threads(nil)
			if err != nil || len(ids) != 2 {
				t.Fatalf("Threads: %v, %v", ids, err)
			}
			closed := make(chan struct{})
			w.k.OnCall(machtest.CallThreadGetState, func() {
				go func() {
					tg.Close()
					close(closed)
				}()
				// A Close that does not wait for the capture is done in
				// microseconds; one that waits returns only after this
				// capture: the bound only lets a wrong Close finish.
				select {
				case <-closed:
					t.Error("Close returned while a capture held a suspended thread")
				case <-time.After(300 * time.Millisecond):
				}
			})
			var errs []error
			switch how {
			case "Capture":
				errs = append(errs, tg.Capture(ids[0], target.NewCapture(64, 4096)))
			case "CaptureBatch":
				caps := []*target.Capture{target.NewCapture(64, 4096), target.NewCapture(64, 4096)}
				errs = make([]error, 2)
				tg.CaptureBatch(ids, caps, errs)
			case "CaptureAll":
				caps, err := tg.CaptureAll(nil)
				errs = append(errs, err)
				for _, c := range caps {
					errs = append(errs, c.Err)
				}
			}
			<-closed
			for i, err := range errs {
				if err != nil {
					t.Errorf("capture %d under way when Close came: %v", i, err)
				}
			}
			for _, th := range w.task.Threads {
				if th.UserStop != 0 {
					t.Errorf("thread %d left suspended (user_stop_count %d)", th.ID, th.UserStop)
				}
			}
			// Close released every thread port; the task port stays for
			// symbols until Release.
			if r := w.k.Rights(); len(r) != 1 || !strings.Contains(r[0], "task_read(") {
				t.Errorf("rights after Close: %v, want the task port alone", r)
			}
			if err := tg.Capture(ids[0], target.NewCapture(64, 4096)); !errors.Is(err, target.ErrClosed) {
				t.Errorf("Capture after Close: %v, want ErrClosed", err)
			}
		})
	}
}
