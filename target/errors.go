package target

import "errors"

// The errors every backend returns, wrapped with detail; callers test them
// with errors.Is. The sampler counts each capture error as a missed sample
// under its own reason (profile.MissReason).
var (
	// ErrExited reports that the target process has exited.
	ErrExited = errors.New("target process exited")
	// ErrNoThread reports a thread id that is not (or no longer) in the
	// target.
	ErrNoThread = errors.New("no such thread in the target")
	// ErrClosed reports a call on a closed Target.
	ErrClosed = errors.New("target is closed")
	// ErrStopTimeout reports a thread that did not stop in time.
	ErrStopTimeout = errors.New("thread did not stop in time")
	// ErrThreadBlocked reports a thread in uninterruptible sleep, which
	// is not stopped for a sample.
	ErrThreadBlocked = errors.New("thread in uninterruptible sleep")
	// ErrNoSample reports a thread the kernel has taken no sample of since
	// the previous capture (Options.Kernel.Period).
	ErrNoSample = errors.New("no kernel sample of the thread yet")
	// ErrNotKernelSampled reports, from SampleDrainer.DrainSamples, a
	// thread that has no kernel samples to drain: not sampled by the
	// kernel yet, or refused.
	ErrNotKernelSampled = errors.New("thread not sampled by the kernel")
)
