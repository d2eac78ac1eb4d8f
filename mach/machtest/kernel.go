// Package machtest is a model of the xnu kernel's Mach and BSD surface that
// the darwin backend calls (mach.Kernel), so that the backend's logic runs
// on Linux against tasks, threads, port rights and memory that behave as
// xnu's do. Each behaviour cites the xnu (xnu-11417), dyld (dyld-1378) or
// Libc/libsyscall source it follows; where Apple publishes no source
// (Rosetta 2) the comment says so. A Kernel also counts every call and
// byte read, and Check asserts that the profiler left no port right, no
// kernel-allocated array and no suspension behind.
package machtest

import (
	"fmt"
	"os"
	"sync"
	"syscall"

	"github.com/macprof/macprof/mach"
)

// Call names a Kernel method, for counting and fault injection.
type Call int

// The calls a Kernel counts.
const (
	CallTaskForPID Call = iota
	CallTaskReadForPID
	CallTaskThreads
	CallTaskSuspend2
	CallTaskResume2
	CallTaskInfo
	CallThreadSuspend
	CallThreadResume
	CallThreadGetState
	CallThreadInfo
	CallVMReadOverwrite
	CallVMRegion
	CallPortDeallocate
	CallVMDeallocate
	CallThreadSelf
	NumCalls
)

var callNames = [NumCalls]string{"task_for_pid", "task_read_for_pid", "task_threads", "task_suspend2",
	"task_resume2", "task_info", "thread_suspend", "thread_resume", "thread_get_state", "thread_info",
	"mach_vm_read_overwrite", "mach_vm_region", "mach_port_deallocate", "vm_deallocate", "mach_thread_self"}

func (c Call) String() string { return callNames[c] }

// Counts are the calls made and bytes read so far.
type Counts struct {
	Calls     [NumCalls]int
	BytesRead int64
	// LargestRead is the most bytes one mach_vm_read_overwrite copied.
	LargestRead int64
}

// Total is the number of Mach calls counted.
func (c Counts) Total() int {
	n := 0
	for _, v := range c.Calls {
		n += v
	}
	return n
}

// Kernel is the model. Its zero value is not usable: call New.
type Kernel struct {
	mu sync.Mutex
	// self is the profiler's own task: its port space holds the rights the
	// profiler is given.
	self     *Task
	selfName uint32
	tasks    map[int]*Task
	space    map[uint32]*entry
	names    map[any]uint32 // object -> the name of our send right to it
	// Port names are index << 8 | generation (osfmk/ipc/ipc_entry.h
	// MACH_PORT_MAKE, IE_BITS_GEN); freed indices are reused last freed
	// first with the generation advanced (ipc_entry.c ipc_entry_claim,
	// ipc_entry_dealloc), so a name's value comes back after 64 reuses.
	nextIdx  uint32
	freeIdx  []uint32
	gens     []uint32
	freeEnts []*entry
	arrays   map[uintptr][]uint32 // task_threads arrays in our address space
	// virtualCopies are the reads that clipped a task's map entries.
	virtualCopies []string
	nextArr       uintptr
	nextPID       int
	nextTID       uint64
	step          int64
	counts        Counts

	launchable map[string]func(*Kernel) *Task

	// GOARCHValue is the architecture the profiler's code runs as, and
	// ProfilerTranslated whether it runs under Rosetta 2
	// (sysctl.proc_translated).
	GOARCHValue        string
	ProfilerTranslated bool
	// VABits is machdep.virtual_address_size (0: absent, as on Intel).
	VABits uint32
	// EUID and EGID are the profiler's (0: root), Env its environment
	// (Getenv), and Users the accounts LookupUser finds.
	EUID, EGID int
	Env        map[string]string
	Users      map[int]mach.UserInfo
	// CurrentThread is the thread the profiler calls from (Self mode).
	CurrentThread *Thread
	// PanicIn makes the next call of that kind panic, as a profiler that
	// crashes inside a capture; -1 for none.
	PanicIn Call
	// ExitIn makes ExitTask exit inside the next call of that kind (the
	// task is killed while the profiler is in the call); -1 for none. A
	// call that takes a task or thread port has converted it by then and
	// holds a reference, as a call that races with task_terminate_internal
	// does: it finds the task or thread inactive (see convert).
	ExitIn   Call
	ExitTask *Task
	// exitArmed: ExitIn came, for a call that converts a port first.
	exitArmed bool
	// DieIn makes the profiler die inside the next call of that kind
	// (see Die); -1 for none.
	DieIn Call
	// hooks run once, at the start of the next call of their kind (see
	// OnCall).
	hooks [NumCalls]func()
	// dead: the profiler died. Its port space is empty, so the calls
	// the test's deferred code still makes after the "death" name
	// nothing and change nothing (MACH_SEND_INVALID_DEST,
	// KERN_INVALID_NAME), as a dead process makes no calls at all.
	dead bool
}

// RosettaRuntimePC is the PC the model's ARM_THREAD_STATE64 of a Rosetta
// thread holds: an address in no image of the program.
const RosettaRuntimePC = 0x7ff8_0000_1000

// Died is the panic value of a profiler that "died" in a call (DieIn).
const Died = "machtest: the profiler died"

// New returns a model kernel whose profiler is an arm64 process (pid
// os.Getpid()) with one thread, the caller's.
func New() *Kernel {
	k := &Kernel{
		tasks:       make(map[int]*Task),
		space:       make(map[uint32]*entry),
		names:       make(map[any]uint32),
		arrays:      make(map[uintptr][]uint32),
		nextIdx:     1,
		gens:        []uint32{0},
		nextArr:     0x600000000000,
		nextPID:     40000,
		nextTID:     0x1000,
		GOARCHValue: "arm64",
		VABits:      47,
		PanicIn:     -1,
		DieIn:       -1,
		ExitIn:      -1,
	}
	k.self = k.newTask(os.Getpid(), "/usr/local/bin/macprof")
	k.CurrentThread = k.self.AddThread("macprof-main")
	// mach_task_self_ is a send right the task holds for its life; the
	// model never counts it as leaked.
	k.selfName = k.copyoutSend(portObj{task: k.self})
	return k
}

// Self is the profiler's own task, for Self-mode tests.
func (k *Kernel) Self() *Task { return k.self }

// Counts returns the calls and bytes counted so far.
func (k *Kernel) Counts() Counts {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.counts
}

// enter counts a call, advances the model's clock (threads that run move
// between their stacks and threads scheduled to exit do), and panics if
// the call is PanicIn. It returns with k.mu held.
func (k *Kernel) enter(c Call) {
	k.mu.Lock()
	if f := k.hooks[c]; f != nil {
		k.hooks[c] = nil
		k.mu.Unlock()
		f()
		k.mu.Lock()
	}
	k.counts.Calls[c]++
	k.step++
	for _, t := range k.tasks {
		t.advance(k.step)
	}
	if k.ExitIn == c && k.ExitTask != nil {
		// task_terminate_internal (osfmk/kern/task.c) of a task that is
		// being read: the call sees the task and its threads inactive.
		k.ExitIn = -1
		if convertsPort(c) {
			k.exitArmed = true
		} else {
			k.ExitTask.exit(syscall.WaitStatus(uint32(syscall.SIGKILL)))
		}
	}
	if k.PanicIn == c {
		k.PanicIn = -1
		k.mu.Unlock()
		panic(fmt.Sprintf("machtest: the profiler crashed inside %v", c))
	}
	if k.DieIn == c {
		k.DieIn = -1
		k.die()
		k.mu.Unlock()
		panic(Died)
	}
}

// OnCall runs f once, at the start of the next call of kind c, before
// the call does anything: what another goroutine of the profiler does
// while one of its threads is inside that call. f may call the Kernel.
func (k *Kernel) OnCall(c Call, f func()) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.hooks[c] = f
}

// ErrorString implements mach.Kernel with the constant's name.
func (k *Kernel) ErrorString(kr mach.KernReturn) string { return "(model) " + kr.String() }

// Die models the profiler's death: the kernel destroys its port space
// (osfmk/ipc/ipc_space.c ipc_space_terminate), so every suspension token
// it held is released (osfmk/kern/task.c task_suspension_no_senders /
// task_suspension_send_once), while the user_stop_count its
// thread_suspend calls raised stays (thread_act.c: nothing owns it).
func (k *Kernel) Die() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.die()
}

func (k *Kernel) die() {
	k.dead = true
	for name, e := range k.space {
		if tk, ok := e.obj.(*token); ok {
			tk.task.holds--
		}
		if name != k.selfName {
			k.freeName(name)
		}
	}
	clear(k.names)
	k.names[portObj{task: k.self}] = k.selfName
	clear(k.arrays)
}

func put64(w []uint32, v uint64) {
	w[0], w[1] = uint32(v), uint32(v>>32)
}

var _ mach.Kernel = (*Kernel)(nil)
