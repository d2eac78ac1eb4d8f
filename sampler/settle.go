package sampler

import (
	"math"
	"slices"
	"time"

	"github.com/macprof/macprof/intern"
	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/target"
)

// unsampledStack is the stack under which CPU time that no stack could be
// found for is counted; the window shows it as a Stack with Unsampled set.
// The interner never issues it, as it counts up from 1.
const unsampledStack = intern.StackID(math.MaxUint64)

// lostStack returns the stack under which CPU time whose samples were lost
// for reason r is counted; the window shows it as a Stack with Lost set.
// They lie below spooledStack, far above any StackID the interner issues.
func lostStack(r profile.LostReason) intern.StackID {
	return spooledStack - 1 - intern.StackID(r)
}

// lostReason returns the reason id is the lostStack of, or NotLost.
func lostReason(id intern.StackID) profile.LostReason {
	if r := spooledStack - 1 - id; r > 0 && r < intern.StackID(profile.NumLostReasons) {
		return profile.LostReason(r)
	}
	return profile.NotLost
}

// unseenThread is the thread that CPU time used by no thread the sampler
// listed (threads that started and ended between two ticks) is counted on.
const unseenThread = target.ThreadID(0)

// settle counts the CPU time a thread used and that was not counted yet (a
// part of a period, or periods its captures failed to take): it is called
// when the thread is gone or the profile ends, so that a thread that never
// used a whole period is counted too. The time joins its target's rest,
// which is counted in whole periods, rounded to the nearest (what is left
// stays for the next thread settled), on the thread's last stack, or as
// [unsampled] when the thread was never captured. A thread whose samples
// counted more than its CPU time read (it ended after its last listing)
// takes the excess off the CPU time no thread was seen to use, which holds
// that time, rather than off another thread's.
func (s *Sampler) settle(ts *targetState, tid target.ThreadID, th *threadState) {
	if th.pending == 0 {
		return
	}
	if th.drained {
		// Kernel-sampled: what no sample accounts for beyond the
		// part period since the last is lost (drain).
		if n := int64(th.pending/s.period) - 1; n > 0 {
			s.count(ts.t.PID(), tid, th, lostStack(profile.LostNoSample), n)
			th.pending -= time.Duration(n) * s.period
		}
		th.unaccounted = 0
	}
	if th.pending < 0 {
		ts.carry += th.pending
		th.pending = 0
		return
	}
	ts.rest += th.pending
	th.pending = 0
	n := takeRounded(&ts.rest, s.period)
	if n == 0 {
		return
	}
	id := unsampledStack
	if th.hasStack {
		id = th.lastStack
	}
	s.count(ts.t.PID(), tid, th, id, n)
}

// settleAll settles every thread of a target whose profile ends (it
// exited, or the run is over), in thread order, then counts the CPU time
// no listed thread used and what is left of its carry, rounded, as
// [unsampled]. Only CPU mode counts CPU time.
//
// The threads come first: a target found exited had its threads' kernel
// samples since their last listing drained and counted, which took their
// periods off their pending CPU time (below zero), while the process's CPU
// time holds that time too; counted before, it would be counted twice.
func (s *Sampler) settleAll(ts *targetState) {
	if s.cfg.Mode != profile.ModeCPU {
		return
	}
	tids := make([]target.ThreadID, 0, len(ts.threads))
	for tid := range ts.threads {
		tids = append(tids, tid)
	}
	slices.Sort(tids)
	for _, tid := range tids {
		s.settle(ts, tid, ts.threads[tid])
	}
	s.countUnseen(ts)
	ts.carry += ts.rest
	ts.rest = 0
	if n := takeRounded(&ts.carry, s.period); n > 0 {
		s.count(ts.t.PID(), unseenThread, &s.unseenState, unsampledStack, n)
	}
}

// takeRounded takes from *d its whole periods, rounded to the nearest,
// and returns how many: what is left is within half a period of zero, so
// that rounding errors cancel rather than add up.
func takeRounded(d *time.Duration, period time.Duration) int64 {
	if *d < period/2 {
		return 0
	}
	n := int64((*d + period/2) / period)
	*d -= time.Duration(n) * period
	return n
}

// readProcBase reads the process's CPU time when a running target is
// added: what it uses from then until the first tick has read its threads
// (long with many threads or on a loaded machine) is counted as
// [unsampled] rather than lost. A process started since sampling began is
// counted from its start instead.
func (ts *targetState) readProcBase() {
	if ts.proc == nil || ts.fresh {
		return
	}
	if cpu, err := ts.proc.ProcessCPU(); err == nil {
		ts.procBase, ts.procRead = cpu, true
	}
}

// countUnseen adds to the carry the CPU time the process used that none of
// its listed threads did since the last call, and counts whole periods of
// the carry as [unsampled], less what its threads' kernel samples counted
// ahead of their CPU time read (negative pending): a thread that ended
// since its last listing has no CPU time read for its last part, which
// the process's CPU time holds, while its samples counted it already. It
// needs a target that reports its process's CPU time.
func (s *Sampler) countUnseen(ts *targetState) {
	if ts.proc == nil || s.cfg.Mode != profile.ModeCPU {
		return
	}
	cpu, err := ts.proc.ProcessCPU()
	if err != nil {
		return
	}
	if !ts.procRead {
		// The first reading: a process that started since sampling
		// began is counted from its start, as its threads are.
		ts.procRead = true
		if !ts.fresh {
			ts.procBase = cpu - ts.seenCPU
		}
	}
	unseen := cpu - ts.procBase - ts.seenCPU
	ts.carry += unseen - ts.unseen
	ts.unseen = unseen
	var ahead time.Duration
	for _, th := range ts.threads {
		if th.pid == 0 {
			ahead += min(th.pending, 0)
		}
	}
	if n := int64((ts.carry + ahead) / s.period); n > 0 {
		ts.carry -= time.Duration(n) * s.period
		s.count(ts.t.PID(), unseenThread, &s.unseenState, unsampledStack, n)
	}
}
