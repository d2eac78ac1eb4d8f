package sampler

import (
	"errors"
	"time"

	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// drainBatch is how many kernel samples are drained per DrainSamples call.
// maxDrained bounds the samples drained from one thread in one tick, far
// above what a kernel buffer holds, so that a backend that never runs dry
// cannot hold the sampler; maxKeptDrained is the bound for a SampleKeeper,
// which hands out at once what it kept since the process started (up to
// its memory's worth).
const (
	drainBatch     = 8
	maxDrained     = 4096
	maxKeptDrained = 1 << 22
)

// drainListed drains the kernel samples of ts's threads drained or
// captured at its last listing, on a tick that only drains
// (drainPolicy.drainOnly).
func (s *Sampler) drainListed(ts *targetState) {
	for tid, th := range ts.threads {
		if th.drained || th.captured {
			th.drained, th.captured = s.drain(ts, tid, th, false), false
		}
	}
}

// drainAtExit drains what the kernel sampled of ts's threads since the
// last drain, once ts has exited (tick n found it gone): of the threads
// the exit's listing still gives (a SampleKeeper's, all it kept), and of
// those listed before. A target without kernel samples has none.
func (s *Sampler) drainAtExit(ts *targetState, n int64) {
	if ts.drainer == nil {
		return
	}
	for _, tid := range s.tids {
		s.sampleThread(ts, tid, n)
	}
	for tid, th := range ts.threads {
		s.drain(ts, tid, th, true)
	}
}

// drain counts the kernel samples of a thread taken since the previous
// tick, one period of its CPU time each, taking their periods off its
// pending CPU time, and reports whether the thread is sampled by the kernel
// (false: it is to be captured the usual way, which starts its samples).
// Samples the kernel reports it dropped (its buffer was full) are counted
// as lost, and so is CPU time no sample accounts for beyond the one period
// the kernel's next sample may still be due in: on a [lost] stack of their
// own, never on the thread's, so that counts add up to the CPU time without
// making any stack hotter than it was. At a target's exit (last), threads
// already gone are not counted as missed.
func (s *Sampler) drain(ts *targetState, tid target.ThreadID, th *threadState, last bool) bool {
	w := s.win
	pid := ts.t.PID()
	for len(s.drainCaps) < drainBatch {
		s.drainCaps = append(s.drainCaps, target.NewCapture(s.cfg.MaxFrames, s.cfg.StackBytes))
	}
	most := maxDrained
	if ts.keeper != nil {
		most = maxKeptDrained
	}
	for drained := 0; drained < most; {
		for _, c := range s.drainCaps {
			// A backend sets PID and Images only for a sample of
			// another process or program: none may stay behind from
			// an earlier drain of another thread.
			c.Walk, c.Time = unwind.Result{}, time.Time{}
			c.PID, c.Images, c.Executable = 0, nil, ""
		}
		k, err := ts.drainer.DrainSamples(tid, s.drainCaps)
		if errors.Is(err, target.ErrNotKernelSampled) {
			return false
		}
		if err != nil {
			if !last {
				w.missed[profile.MissReasonOf(err)]++
			}
			return true
		}
		k = max(0, min(k, len(s.drainCaps)))
		drained += k
		for _, c := range s.drainCaps[:k] {
			th.pending -= s.period
			s.internAndCount(pid, tid, th, c, 1)
		}
		if k < len(s.drainCaps) {
			break
		}
	}
	if ts.loss != nil {
		if n := ts.loss.LostSamples(tid); n > 0 {
			s.count(pid, tid, th, lostStack(profile.LostBufferFull), n)
			th.pending -= time.Duration(n) * s.period
		}
	}
	// The kernel tells of samples it dropped only once the buffer has
	// room again and the thread ran on, after the drain that made room:
	// CPU time no sample accounts for is counted as lost with no sample
	// only when it was still unaccounted for at the previous listing
	// (listEvery before; a tick that only drains has not listed the
	// thread since, and its pending CPU time is as read then).
	if listed := th.seenTick != ts.lastTick; listed || last {
		surplus := max(0, int64(th.pending/s.period)-1)
		if n := min(surplus, th.unaccounted, int64(s.cfg.Hz)); n > 0 {
			s.count(pid, tid, th, lostStack(profile.LostNoSample), n)
			th.pending -= time.Duration(n) * s.period
			surplus -= n
		}
		th.unaccounted = surplus
	}
	// The kernel's samples run ahead of the CPU time read (the two are
	// read at different moments, and schedstat lags a running thread by
	// up to a scheduler tick, and drains up to a second apart take
	// samples from a whole interval after the read): the next reads make
	// it up. Up to two seconds' worth is carried.
	th.pending = max(th.pending, -2*time.Duration(s.cfg.Hz)*s.period)
	return true
}
