package sampler

import (
	"time"

	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/target"
)

// sampleThread reads a thread's CPU time and decides how many samples it
// stands for this tick: in CPU mode one per period of CPU time used, in
// wall mode one per period of wall time (wallSamples). A thread to be captured joins the tick's batch; one that
// needs no capture (kernel-sampled, idle in wall mode) is counted here.
func (s *Sampler) sampleThread(ts *targetState, tid target.ThreadID, tick int64) {
	w := s.win
	th := ts.threads[tid]
	if th == nil {
		th = &threadState{lastCPU: -1, lateSeen: s.lateTicks}
		ts.threads[tid] = th
	}
	th.seenTick, th.captured = tick, false
	info, err := ts.t.Info(tid)
	if err != nil {
		w.missed[profile.MissThreadGone]++
		if s.cfg.Mode == profile.ModeCPU {
			s.settle(ts, tid, th)
		}
		return
	}
	if info.Name != "" {
		th.name = info.Name
	}
	pid := ts.t.PID()
	if th.lastCPU < 0 {
		// First sight. A thread that was there when the target was added
		// brings CPU time from before, unless the process started since
		// sampling began (AddStarted); one that appeared since started
		// after the previous tick, so all of its CPU time is new.
		th.lastCPU = info.CPUTime
		if ts.ticks > 1 || ts.fresh {
			th.lastCPU = 0
		}
	}
	used := info.CPUTime - th.lastCPU
	th.lastCPU = info.CPUTime
	if used > 0 || info.Running {
		// (Running: or runnable, waiting for a CPU a loaded machine
		// does not give it, where the backend can tell.)
		th.ranAt = ts.listedAt
	}
	if info.PID == 0 || info.PID == pid {
		// A descendant's thread is no part of the process's CPU time.
		ts.seenCPU += used
	}
	var n int64 = 1
	if s.cfg.Mode == profile.ModeCPU {
		// One sample per period of CPU time the thread used, the remainder
		// carried over: a thread that ran less than a period is not
		// stopped, and the samples add up to the CPU time, as a
		// CPU-clock profiler's do.
		th.pending += used
		th.drained = ts.drainer != nil && s.drain(ts, tid, th, false)
		if th.drained {
			return
		}
		// After late ticks the backlog is counted on the stack seen now,
		// up to a second's worth a tick; the rest is carried, so that
		// totals stay true.
		n = min(int64(th.pending/s.period), int64(s.cfg.Hz))
		if n == 0 {
			return
		}
		th.pending -= time.Duration(n) * s.period
	} else {
		n = s.wallSamples(th)
		w.wallDue++
		if used <= 0 && th.hasStack {
			// Wall mode, idle since the last tick: count its last
			// stack again without stopping it. (A thread never
			// captured yet is captured once, idle or not.)
			s.count(pid, tid, th, th.lastStack, n)
			return
		}
	}
	s.batchIDs = append(s.batchIDs, tid)
	s.batchN = append(s.batchN, n)
	s.batchState = append(s.batchState, th)
}

// wallSamples returns how many samples th stands for at this tick in wall
// mode: one, and one more for each tick the loop skipped, late, since it
// was last counted (or first seen). Ticks that came late (a loaded
// machine) thus leave none of the thread's time out of the profile, as CPU
// mode counts a late tick's CPU time on the stack seen then.
func (s *Sampler) wallSamples(th *threadState) int64 {
	n := 1 + s.lateTicks - th.lateSeen
	th.lateSeen = s.lateTicks
	return n
}
