package sampler

import (
	"errors"
	"time"

	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// captureBatch captures the threads sampleThread chose, in one call when
// the backend allows it, then interns and counts their stacks.
func (s *Sampler) captureBatch(ts *targetState) {
	k := len(s.batchIDs)
	if k == 0 {
		return
	}
	for len(s.batchCaps) < k {
		s.batchCaps = append(s.batchCaps, target.NewCapture(s.cfg.MaxFrames, s.cfg.StackBytes))
		s.batchErrs = append(s.batchErrs, nil)
	}
	caps, errs := s.batchCaps[:k], s.batchErrs[:k]
	clear(errs)
	for _, c := range caps {
		// A backend that fills PCs without walking leaves Walk alone:
		// no hash from an earlier capture may stay behind.
		c.Walk, c.Time = unwind.Result{}, time.Time{}
	}
	if bc, ok := ts.t.(target.BatchCapturer); ok {
		bc.CaptureBatch(s.batchIDs, caps, errs)
	} else {
		for i, tid := range s.batchIDs {
			errs[i] = ts.t.Capture(tid, caps[i])
		}
	}
	pid := ts.t.PID()
	for i, c := range caps {
		th := s.batchState[i]
		if errs[i] != nil {
			if errors.Is(errs[i], target.ErrNoSample) && th.hasStack {
				// The kernel's next sample of this thread is due within
				// a period: its CPU time since is counted on the stack
				// of its last one rather than lost.
				s.count(pid, s.batchIDs[i], th, th.lastStack, s.batchN[i])
				continue
			}
			s.win.missed[profile.MissReasonOf(errs[i])]++
			if s.cfg.Mode == profile.ModeCPU {
				// The CPU time stays to be counted at the thread's
				// next capture, or when it is settled.
				th.pending += time.Duration(s.batchN[i]) * s.period
			}
			continue
		}
		s.internAndCount(pid, s.batchIDs[i], th, c, s.batchN[i])
		th.captured = ts.drainer != nil
	}
}
