// Package ptrace is the Linux backend: a target.Target built on ptrace(2),
// perf_event_open(2), process_vm_readv(2) and /proc.
//
// A Target captures threads by one of three mechanisms:
//
//   - Persistent tracing, for snapshot (Options.Continuous false): every
//     thread is seized at Attach, new threads are followed with
//     PTRACE_O_TRACECLONE, and all stay attached until Close. Every ptrace
//     request for a tracee must come from the OS thread that attached it,
//     so all of the work runs on one goroutine locked to its OS thread (the
//     tracer), which services the stops the target reports between
//     captures (signals, new threads, exec) as soon as SIGCHLD says there
//     are some. CaptureAll stops every thread together: one consistent
//     picture (persistent_linux.go).
//   - Stop-per-capture, for record and agent (Options.Continuous): nothing
//     is attached between captures, so the target's own signals are never
//     held up. A capture seizes one thread, interrupts it, waits in wait4
//     for its stop (bounded by a timer signal), copies its stack, walks it
//     and detaches, on the caller's own OS thread; a thread that does not
//     stop in time stays attached ("stuck") until it does
//     (stopcapture_linux.go).
//   - Kernel samples, for record in cpu mode (Options.Continuous with
//     KernelSamplePeriod): each thread gets a perf_event whose ring the
//     kernel fills with its registers and a stack copy every period of its
//     CPU time, and the sampler drains the rings (DrainSamples) without
//     stopping anyone. A thread's first capture, and every capture of a
//     thread whose ring cannot be opened, stops it instead
//     (kernelsample_linux.go, perfsample_linux.go).
//
// The mode is fixed at Attach and cannot be mixed: one Target type holds
// each mechanism's state in a struct of its own (persist, or stop with
// kernel), set only in the mode that uses it. One type rather than one per
// mode, because the modes share the public API, the thread table, /proc
// and the images, the commands choose a mode by an option, and kernel
// samples need stop-per-capture as their fallback. CaptureAll, which only
// persistent tracing can serve, returns an error on a continuous target.
//
// Threads are attached with PTRACE_SEIZE in every mode: no SIGSTOP is ever
// injected, so a profiler that dies leaves nothing pending (the kernel
// detaches its tracees and they run on). Every system call goes through
// raw_linux.go.
//
// The package builds only on Linux; on other systems it is empty.
package ptrace
