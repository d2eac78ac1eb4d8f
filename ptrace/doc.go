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
//     Options.Kernel.Period): each thread gets a perf_event whose ring the
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
// # How each mechanism works
//
//   - Continuous (`record`, `agent`): a thread is attached only for the time of its capture:
//     `PTRACE_SEIZE`, `PTRACE_INTERRUPT`, a blocking `wait4` until it stops, `GETREGS`, one
//     `process_vm_readv` of the stack, the walk, `PTRACE_DETACH` (re-injecting a signal that arrived
//     meanwhile). Between samples nothing is traced, so the target's own signals (a Go program's
//     SIGURG preemption, timers) are never held up by the profiler, another debugger can attach, and
//     a launched command's exit goes to its parent as usual. Any OS thread can be the tracer for one
//     capture, so `CaptureBatch` captures a tick's threads on the sampler's own goroutine, locked to
//     its thread for the batch, with raw system calls (a regular system call lets Go's sysmon hand
//     the P away, which costs more in context switches than the call), except the wait4 that may
//     block for a stop: it hands its P off first, as the runtime does for calls it knows will
//     block (`entersyscallblock`), so that sysmon sleeps rather than polling and preempting
//     the waiting goroutine every 10 ms while the tracee takes its time. Threads are listed from
//     `/proc/PID/task` (a directory kept open, read with raw `getdents`); threads in uninterruptible
//     sleep (`D`) are skipped rather than waited for; a thread that exits meanwhile is reported as
//     gone. The wait for a stop is bounded: a thread can still enter uninterruptible sleep (a vfork
//     parent waiting for its child, a read from a hung disk) in the microseconds between that check
//     and the interrupt, and would then stop only when the sleep ends. `wait4` has no timeout, so a
//     POSIX timer signals the waiting thread itself (`SIGEV_THREAD_ID`) after 50 ms with a real-time
//     signal (61) whose action, the Go runtime's handler that ignores it, has had `SA_RESTART`
//     cleared: `wait4` returns `EINTR` and the capture reports "thread did not stop in time" (two
//     `timer_settime` calls per blocking wait, no wake-up). The timer repeats every 5 ms after it
//     first fires: on a loaded machine the first signal can arrive before the thread has entered
//     `wait4` and interrupt nothing. Such a thread stays attached with its
//     interrupt pending ("stuck"); only the OS thread that attached it can detach it, so the
//     capturing goroutine stays locked to that thread while any is stuck, later ticks skip it, and
//     the first tick after it stopped lets it go. `Close` waits up to 250 ms for stuck threads; one
//     still asleep after that stays attached until the OS thread that attached it ends, when the
//     kernel detaches it. `record` and `agent` close a target only when it has exited (its stuck
//     threads are dead and reaped then) or when macprof is about to exit. Tested with a
//     vfork parent whose child stops itself (`ptrace/target_linux_test.go`, the state check bypassed
//     as the race would). The same `stat` read
//     gives the CPU the thread last ran on: a running thread on another CPU stops within
//     microseconds of the interrupt, so the capture polls `wait4(WNOHANG)` for up to 50 µs before
//     it sleeps (a sleep and wake-up of the capturing thread cost more); a thread on the capturing
//     thread's own CPU can only stop once that thread sleeps, so it is waited for at once. The
//     stack copy starts at 8 KiB per thread and doubles (up to `StackBytes`) for a thread whose
//     walk had to read frame records past it. Every ptrace-stop would also send SIGCHLD to macprof
//     (a signal delivery and a handler run per capture): while only continuous targets are open,
//     the SIGCHLD action carries `SA_NOCLDSTOP` (the runtime's handler is kept; only that flag
//     changes; a persistent target clears it while it is open, because it needs the signals).
//   - Kernel samples (continuous mode with `target.Options.Kernel.Period`, which `record`
//     sets in cpu mode unless `--capture stop`): a thread is not stopped at all. On its first capture
//     it gets a perf_event of its own (`PERF_COUNT_SW_TASK_CLOCK`, one sample per sampling period of
//     its CPU time, `PERF_SAMPLE_TID | TIME | REGS_USER | STACK_USER`: the frame pointer, stack pointer and
//     PC, and 8 KiB of stack from SP, copied by the kernel in the thread's own timer interrupt on
//     its own CPU, and the time on `CLOCK_MONOTONIC`, `use_clockid`, which `sampleClock` turns into
//     `target.Capture.Time` for timelines) and a ring mapped into macprof; the ring has no sample yet, so that one capture
//     stops the thread (a thread that lives for one tick is still sampled).
//   - Drained, not polled (`target.SampleDrainer`): the kernel keeps every sample until it is
//     read, so while every thread of every target is kernel-sampled the sampler wakes only as often
//     as the target's rings need (`SampleDrainer.DrainInterval`, from `target.DrainInterval`): ten
//     periods while any ring copies stacks (as many as `MaxDrainInterval` takes, up to a hundred in
//     a ring of at most 2 MiB, else thirty, where locked memory is not budgeted, `CAP_IPC_LOCK`,
//     while the target's rings stay within 8 MiB: `stackDrainPeriods`, a drain every 100 ms rather
//     than 10 at 999 Hz), a hundred while all take callchains (below; up to a
//     thousand, as many as `MaxDrainInterval` takes, where locked memory is not budgeted and the
//     target's rings stay within 8 MiB: `chainDrainPeriods`) or the
//     target has no ring with stack copies (an idle shell does not hold other targets to its
//     interval), but at
//     most `target.Options.Kernel.MaxDrainInterval` (1 s for `record`, 5 s for the agent, whose
//     windows last 15 s and which a half-full ring wakes) and at least one period: 1 s at 99 Hz and 999 Hz with callchains
//     (as root), 10 ms at 999 Hz with stack copies (30 as root), 526 ms to 5 s for the agent at 19 Hz.
//     `record` holds drains to 100 ms unless no process or thread was created on the system
//     since the last tick (`sampler.Config.Settled`, below). A
//     ring with stack copies shortens the interval only if, at the rate of its last drain, it
//     would fill within twice the long one; a ring with callchains is drained as often as half the
//     time it took to fill at its last drain's rate (in bytes, as callchains vary in length) if
//     that is longer than its interval, but within what it holds should its thread turn busy with
//     samples as large as the largest drained yet (`chainFill`); a drain due after a window's end
//     is brought forward to it, so windows keep their length.
//   - Woken at half full (`ringwake_linux.go`, with `target.Options.Kernel.SamplesWaiting`, which
//     `record` sets to `Sampler.DrainSoon`): the kernel marks a ring's file readable when its
//     records pass half of it (without a watermark asked for, `ring_buffer_init` in
//     `kernel/events/ring_buffer.c` sets the mark at half the data area; `TestRingWakesWhenHalfFull`
//     sees it). A goroutine per ring with callchains waits for that through the Go runtime's poller
//     (on a duplicate of the event's file: no thread of its own, and the sampler's own wait in
//     `epoll_pwait` is what wakes), checks the ring is half full (an exiting thread's file is
//     readable too) and asks the sampler to drain at once. Such a ring does not shorten the drain
//     interval, so a thread's first ring with callchains is small (128 KiB, a hundred periods of
//     the largest samples) and grows four times, up to what the longest interval's largest
//     samples need (2 MiB), at a drain that shows it filling within twice the longest interval
//     (`growChainRing`, where rings may grow): on the demo at 999 Hz the two workers' rings end at
//     512 KiB and the idle threads' stay at 128 KiB, where each had 2 MiB before (the kernel's
//     clearing of them was a third of macprof's CPU in the command's first 50 ms). Closing a ring
//     ends its goroutine before the ring is unmapped. New threads are found at drains. `DrainSamples` takes each sample taken since, oldest first:
//     no system call (`data_head` and `data_tail` through atomics), no stop. Each sample counts one period. The ring holds an
//     interval's samples and four more (`perfRingBytes`: 128 KiB at 99 Hz and 999 Hz with 8 KiB
//     copies). Samples the kernel dropped for want of room are counted from its `PERF_RECORD_LOST`
//     records (`Target.LostSamples`, written once a drain made room, so read a drain later) as
//     `[lost: buffer full]`; CPU time still unaccounted for at the next listing beyond the one
//     period the kernel's next sample may be due in (an event reopened mid-period, an unreadable
//     sample, kernel time excluded) as `[lost: no sample]` (`profile.Stack.Lost`): counts still add
//     up to CPU time, and no stack of the program's gets time it was not seen in. A thread that
//     exits with samples in its ring stays listed (`Target.departed` in the kernel-sample state, its last CPU time as its
//     info) for up to two more listings so they are drained; a target found exited has its
//     threads drained once more. A thread that cannot be kernel-sampled puts the sampler back on a
//     tick every period (`KernelSampled` reports it). Fewer wake-ups are the point: what this
//     saves is in bench/RESULTS.md.
//   - Each sample is walked on its stack copy where the kernel wrote it in the ring (copied out
//     first only when it wraps around the ring's end; the ring is consumed after the walk), with a
//     walker that has no fallback reader: the thread
//     has run on since, so memory past the copy is no longer the sample's. A walk that needs it
//     reads it from the process now (`aftersample_linux.go`, `unwind.Stack.After`: the outer
//     frames of a deep stack rarely change), accepts each frame found so only where its return
//     address follows a call and its CFA rises, and puts `unwind.AfterSampleMark` (exporters'
//     `[read after sample]`) before them; one that fails there is marked truncated. A thread's ring also takes the kernel's `comm` records:
//     one marked as an exec, read in order with the samples, moves those after it to the next
//     program's images (`execgens_linux.go`: one image set per program, the set read with a new
//     executable filed under the exec the rings show next), with whose unwind tables they are
//     walked and which they carry (`target.Capture.Images`). A thread whose walks ran past the copy has its event
//     reopened, once its ring is drained, with a larger copy and a ring to match (`growRing`):
//     at once the power of two that holds what its walks read after the sample (an 8 KiB copy
//     of a 40 KiB stack becomes 64 KiB), else twice the copy, up to `perfMaxStackBytes`, 65528
//     bytes, the kernel's limit (`Options.Kernel.StackBytes`, record's `--stack-bytes`, lowers
//     it); a thread's first ring, opened after its first capture (a stop), copies at once the
//     power of two that holds what that capture's walk read (`copyFirstWalk`); the new event starts its first
//     period afresh (that part period is counted as lost). Where the thread has run on, a frame
//     read after the sample is a guess that the checks above often reject: a recursion that moves
//     up and down by more than 64 KiB of stack within a millisecond (biome formatting brackets
//     200 deep) leaves at the read most of a copy's last 4 KiB rewritten, and perf's 64 KiB copy
//     walks to the root in 16% of its samples there (bench/RESULTS.md). Rings grow only where their
//     locked memory is not budgeted (`CAP_IPC_LOCK`, root), and not once any ring was refused or
//     reduced: under a user's budget a few grown rings would leave none for new threads. Go puts
//     fixed-size `make`s of up to 64 KiB on the stack, so the demo's workers need 32 KiB: the
//     samples taken before the copy grew are truncated (their share is in bench/RESULTS.md).
//   - Callchains where frame pointers suffice (`callchain_linux.go`): the kernel can walk a
//     thread's frame records itself in the sampling interrupt (`PERF_SAMPLE_CALLCHAIN`, user part
//     only, what `perf record -g` takes), copying 16 bytes per frame instead of 8-32 KiB of stack.
//     That walk is right only through frames that keep a frame record, which the unwind tables
//     tell (`unwind.CheckChain`: the frame-record rule CFA = FP + 16 with the return address and
//     the caller's FP saved below it, or an object known to keep frame pointers, Go). With
//     `--unwind auto` a thread's first ring is opened after its first capture: with callchains when
//     every frame of that capture lies in an object known to keep frame pointers (Go), else with
//     stack copies in a probe ring of 256 KiB drained as often as it holds (`probeRingSpec`: it
//     usually lives for the walks that move it, and the kernel clears and maps a ring's every page
//     as it opens), reopened at the size of other rings of copies after 64 samples that moved it
//     nowhere (`endProbe`); after 32 walks in a row that frame
//     records alone get exactly right, it is reopened with callchains (and no stack). A callchain
//     in which the tables find a frame without a record (a frameless leaf, code built without
//     frame pointers) is cut after that frame, marked `StopNoFrameRecord` (truncated), and the ring
//     goes back to stack copies, to try again after twice as many exact walks (up to 4,096). A
//     thread in code without tables (JIT) keeps what it has: such frames are walked by frame
//     records either way. With `--unwind fp` rings take callchains from the start; with
//     `--unwind cfi` they always copy stacks. A callchain ring holds a hundred periods' samples
//     (at most 127 frames each, `kernel.perf_event_max_stack`) in the same 128 KiB. So a Go
//     program, or C built with frame pointers throughout, is sampled as cheaply as by `perf -g`,
//     while python3 or gzip keep their stack copies and whole stacks.
//   - Hybrid samples (`hybrid_linux.go`): a thread whose walks are not exact by frame records but
//     need at most 4 KiB of copy (what they read, or less where the callchain gives the callers
//     past a point: `copyReach`) is reopened, after 32 such walks in a row, with samples that carry
//     the callchain and a copy of that size (`PERF_SAMPLE_CALLCHAIN | STACK_USER`). The walk
//     unwinds the copy with the tables and, where it needs more, takes the callers from the chain
//     where that is what a whole copy's walk gives (`unwind.Stack.Chain`); a walk that can do
//     neither is cut there (`StopReadFailed`) and the ring goes back to whole copies, to try again
//     after twice as many walks.
//   - Process rings (`processrings_linux.go`, its samples in `processsamples_linux.go`, `target.Options.Kernel.ProcessRings`, which `record`
//     sets): a launched command whose code all keeps frame pointers (a statically linked Go
//     binary: Go keeps them and no other code is loaded; or any command with `--unwind fp`) is
//     sampled as `perf record -g` samples a command. It is started with `PTRACE_TRACEME` from the
//     thread that holds it (`heldThread`, which also carries its `PDEATHSIG`) and stops at its
//     exec, before its first instruction. There macprof opens one task-clock event per online CPU
//     on it, inherited by every thread (and child) it will create, with `TID | TIME | CALLCHAIN`
//     (user callchain only) and records of forks, execs (`comm` with `comm_exec`) and executable
//     mappings (`mmap2` with build IDs; the `mmap` bit too, without which the kernel writes none
//     unless another event asked), maps their rings (512 KiB each, less on machines
//     with many CPUs, within 8 MiB; halved while the locked-memory budget refuses them), attaches
//     without the usual check stop (it is traced already), reads its images and builds its
//     tables, and only then lets it run (`PTRACE_DETACH`, its exec's `SIGTRAP` not passed on).
//     No thread is then ever stopped or given a ring of its own, and a thread is sampled from its
//     first period. While the command runs, macprof does what `perf record` does: it copies what
//     the rings hold, as the kernel wrote it, into its own memory (`target.SampleKeeper`:
//     `Target.Keep`, which the sampler calls instead of listing and draining the threads; the
//     first 8 MiB faulted in before the command runs, as a page first touched while it runs costs
//     a fault; up to 16 MiB, half a minute of two busy threads 30 frames deep at 999 Hz, after
//     which one listing parses it all into arrays sized once for it and keeping starts again in
//     the same chunks: the heap these samples take stays within 48 MiB, `keptBound`,
//     `TestProcessRingsMemoryBound`), looking only at each record's header for
//     executable mappings. It wakes when a ring is half full and at least once a second (ten
//     times while processes start on the machine, to find the command's children), and a
//     `waitid` on its child, which reads no `/proc` file, tells the exit. Once the command exited (or
//     the recording ends), one listing (`Threads`) moves every record kept and in the rings into
//     one array with a list per thread (sorted by time only where a thread's samples from two CPUs' rings interleave), and `DrainSamples` hands a thread's out;
//     chains the tables vouched for whole are remembered by hash (`exactChains`), as most
//     samples repeat a stack. The listing that finds the process exited still gives its threads,
//     departed, with `ErrExited` (the sampler drains what they left before it counts the target
//     gone); those never listed alive (with `Keep`, all but the main thread) have as much CPU
//     time as periods they have samples. Every process the command starts inherits the events,
//     so its children's samples come too, each with its PID (`target.Capture.PID`; their threads
//     are listed departed with `ThreadInfo.PID`, apart from the command's CPU time), and `record`
//     does not follow the children of such a target (`target.DescendantSampler`): a child of
//     20 ms is sampled from its first period. Each thread they list is named from the records as
//     `perf report` names it (`threadnames_linux.go`): its last comm record (an exec,
//     `prctl(PR_SET_NAME)`), else its creator's name at its fork; `/proc/PID/task/TID/comm` is
//     read once, only for a thread the records leave unnamed, so that a thread that ended before
//     the listing keeps its name. Each sample is looked up in the images its process
//     had at its time (`imageversions_linux.go`): the records, sorted by time, give each process
//     versions of its images (a fork starts with its parent's at the fork, an exec with none, a
//     mapping adds its file), so the program before and after an exec, a child's own library or
//     a library mapped later each name their own samples; a sample carries its version's set
//     (`target.Capture.Images`, `Executable`), and its chain is checked against that version's
//     unwind tables, waiting for their build (a child's first chains, checked before it, passed
//     as whole): the chains of a child without frame records where it runs (a C program's
//     glibc `qsort` and `start_thread` under a Go command, `macprof record -- macprof record --
//     ./cbusy`) are cut there and marked `[truncated]`, as `perf record -g` cannot walk them
//     either. `Images` reads `/proc/PID/maps` again only after the rings showed a new
//     executable mapping of the process. Where the kernel refuses the events the command is let
//     go at once and sampled thread by thread, as above.
//   - Descendant rings (`descendantRingsFit`, `Target.useDescendantRings`): any other command
//     `record` launches in cpu mode (C, Python, `--unwind auto` or `cfi`) is held at its exec too
//     and gets per-CPU inherited events like those, whose samples of the command's own process are
//     dropped, in the kernel by a BPF program on each event where one can be loaded
//     (`kidsfilter_linux.go`: nothing copied for them), else by `collect`
//     (`processRings.kidsOnly`; its threads keep their own rings with stack copies and
//     whole-table walks): they sample its descendants from their first period, read at each
//     listing of its threads (`Threads`; `DrainInterval` drains at least as often as one busy
//     thread fills half a CPU's ring while a ring holds records or a collect read samples in the
//     last `busyRingHold`, and `record`'s rings wake the sampler when half full, whose tick then
//     lists the threads, so that empty rings hold no drain to their fill time), each descendant
//     thread listed departed under its PID. Their samples copy the
//     user registers and 16 KiB of stack (`processRings.stack`), as `perf record --call-graph
//     dwarf` does with 8 KiB, into 2 MiB rings per CPU (within 8 MiB; halved while the
//     locked-memory budget refuses them, with the copies down to 8 KiB): `collect` first reads the records of forks, execs and
//     mappings, then walks each copy where the kernel wrote it with the unwind tables of its
//     process's image version at its time (`collectStacks`, no allocation in steady state), so a
//     child without frame pointers (`sh -c python3 ...`, `make` running compilers) is walked
//     whole, to the end of the copy. With `inherit_stat` the kernel writes
//     a descendant thread's count (its CPU time) at its exit (`PERF_RECORD_READ`), which becomes its
//     CPU time where it is more than its samples' periods, so the part period a short child ends
//     with is counted (on its last stack or as lost) rather than missing, up to a period more
//     than the samples for each CPU's event that counted any: with another profiler's
//     inherited events on the same tasks (`perf record` run under `record`), the kernel's counts
//     at exit are not the thread's (600 ms for a thread that used 3 ms; the samples agree with
//     schedstat and rusage), which added up to 161% of the tree's CPU time; the kernel writes none
//     for a task that holds the command's own events when it exits (a parent and child swap
//     contexts on one CPU), about a third of `forker`'s children, whose CPU time is then their
//     samples'. `record` then does not look for children (`target.DescendantSampler`). 300
//     children of 20 ms: 95% of the tree's rusage in the profile, against 43-78% when they were
//     found every 100 ms; `sh -c python3`: 96-97% of samples reach `Py_BytesMain`, none with
//     callchains (bench/RESULTS.md). The price: a copy is not grown as a thread's own ring's
//     is, so a child deeper than 16 KiB (Python's imports) is cut there (`[truncated]`), and
//     the command's own samples are copied too before they are dropped.
//   - `Capture` and `CaptureBatch` on such a target still take the newest sample (a capture that
//     finds none newer counts the thread's CPU time since on its last stack).
//   - Where `perf_event_open` or the ring's `mmap` fails (`perf_event_paranoid` 3, a container's
//     seccomp profile), that thread is captured by stopping it, as above; `Target.KernelSampleError`
//     keeps the first reason. An unprivileged user's locked-memory budget for rings
//     (`perf_event_mlock_kb`, 516 KiB per user, then `RLIMIT_MEMLOCK`) that refuses a full ring gets
//     a 32 KiB one (three samples: the CPU time of samples that did not fit is counted on the last
//     stack), reported by `Target.KernelSampleWarning`; one that refuses even that stops the thread.
//     Without the right to sample kernel mode (`perf_event_paranoid` 2 for a user) the event
//     excludes it, and a thread interrupted in a system call is then not sampled. Rings are closed
//     with their threads' other files when the listing no longer shows them (after the drain of
//     what is left), and when a thread has had no sample in 5 s (used less than a period of CPU),
//     so that the locked memory and files follow the threads that run, not every thread that ever
//     ran: such a thread is stopped for its captures, and gets a ring again (with the callchains
//     or the stack copy it had) when two of its captures come within 2.5 s. A target has at most 256 rings (`maxRings`):
//     beyond that threads are stopped and `KernelSampleWarning` says so. A busy thread costs one
//     perf fd and 128 KiB of locked memory (more once its copy grew, as root); every
//     listed thread holds one `/proc` file (`schedstat`, read each tick), and `stat` is opened only
//     for threads whose state is read (stop-mode captures, the leader's exit check). Wall mode needs stacks of threads that are not running, which the kernel does
//     not sample, so it always stops threads.
//   - Persistent (`snapshot`): every thread is seized (`PTRACE_O_TRACECLONE | TRACEEXEC`, never
//     `EXITKILL`) and stays attached until `Close`; all ptrace requests come from one goroutine
//     locked to its OS thread (the tracer). `CaptureAll` interrupts every thread first, waits for each,
//     captures all and resumes all: one consistent stop (`CaptureAllAndDetach`, a snapshot's, detaches
//     each from that stop instead, so that `Close` need not stop it again, and with unwind tables walks
//     nothing during it, `WalkCopies` walking the copies after; the copies and frames of all threads
//     are packed one after another in one buffer). The tracer starts the first `Images` beside the
//     attach, and then the unwind tables of a process of at most 8 objects (`startTables`). Unsolicited stops (signals, new threads'
//     first stops, exec) are serviced when SIGCHLD arrives (one `waitid(P_ALL, WNOWAIT)` peek tells
//     whether anything is pending); signals are re-injected, group-stops resumed with
//     `PTRACE_LISTEN`. `Close` detaches the held threads and ends the tracer thread; the kernel
//     detaches the running ones without stopping them again.
//
// Both: `PTRACE_SEIZE` injects no `SIGSTOP`, so a profiler that dies (SIGKILL, tested 25 times a
// run) leaves nothing pending and its target running. The kernel refuses to seize a thread that has
// exited with `EPERM`, as it refuses a forbidden one: a process whose main thread has exited and
// whose other threads have too, or have SIGKILL pending or are in `do_exit`, is reported as exited
// (`target.ErrExited`), never as a permission problem; a main thread that exited alone (the others
// run on) is skipped. `Threads`, `Info` (CPU time from
// `schedstat`, kept open per thread and read with one `pread`; the costlier `stat` file is read only
// before a capture, to skip threads in uninterruptible sleep) and `Images`
// (`/proc/PID/maps`, build IDs read once per file) run on the caller's goroutine. Stack bounds come
// from the mapping that holds SP, never from a `[stack]` label (Go goroutine stacks live in heap
// arenas). The tracer threads ask for nice -10 where allowed (the target waits for them while
// stopped), and `snapshot` raises all of macprof's threads.
//
// `record` follows a launched command's children (when the kernel refused it descendant or
// process rings, or with `--capture stop` or wall mode) by reading `/proc/PID/task/TID/children` of
// every process in the tree (raw `open`/`pread`, no allocation for a stable tree; a scan of every
// `/proc/PID/stat` only on kernels without those files), every 100 ms of recording (or at each
// tick, when ticks are further apart), after a tick on the sampler's goroutine. While sampling, `record` raises its threads to nice -10 (where
// allowed; after the command was started, so that the command does not inherit it) and runs with
// GOMAXPROCS 1 (set before the command starts, as the change stops the world): with a second P idle,
// every timer wake-up of the sampler also woke a second runtime thread to look for work. On a 2-vCPU machine whose two CPUs the target keeps busy, every wake-up
// of any macprof thread is a context switch taken from the target, so the design counts wake-ups:
// one timer wake-up per tick, and per captured thread one stop (plus one sleep of macprof's
// thread, only when the target shares its CPU).
//
// The package builds only on Linux; on other systems it is empty.
package ptrace
