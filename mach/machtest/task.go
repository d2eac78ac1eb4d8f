package machtest

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/fixture"
	"github.com/macprof/macprof/mach"
	"github.com/macprof/macprof/unwind"
)

// The life of a thread or task as its callers see it through its port.
const (
	// phaseAlive: the calls work.
	phaseAlive = iota
	// phaseTerminating: thread->active (task->active) is false, the
	// port still converts: thread_act.c answers KERN_TERMINATED.
	phaseTerminating
	// phaseDisabled: ipc_thread_disable / ipc_task_disable
	// (osfmk/kern/ipc_tt.c) cleared the port's kobject: MIG converts it
	// to THREAD_NULL / TASK_NULL and the routine answers
	// KERN_INVALID_ARGUMENT.
	phaseDisabled
	// phaseDead: ipc_thread_terminate / ipc_task_terminate deallocated
	// the port: our right is a dead name, a send fails with
	// MACH_SEND_INVALID_DEST.
	phaseDead
)

// region is a VM map entry.
type region struct {
	addr uint64
	data []byte
	prot int32
}

// Task is a modelled task: its process, memory (real Mach-O images and
// stacks), threads and suspension holds.
type Task struct {
	k          *Kernel
	PID        int
	Path       string
	Translated bool // P_TRANSLATED: an x86_64 program run by Rosetta 2
	// DenyRead and DenyControl refuse task_read_for_pid (EPERM) and
	// task_for_pid (KERN_FAILURE); NullReadPort and NullControlPort make
	// them succeed with MACH_PORT_NULL (see TaskReadForPID); HidePath
	// makes proc_pidpath fail; FlagsErr makes kern.proc.pid fail.
	DenyRead, DenyControl, NullReadPort, NullControlPort, HidePath bool
	FlagsErr                                                       syscall.Errno

	token   *token   // the suspension token object, reused
	arrAddr uintptr  // the task's last task_threads array
	arrBuf  []uint32 // and its memory

	// Cred is who a spawned task runs as, Env its environment.
	Cred mach.SpawnCred
	Env  []string

	Threads []*Thread
	mem     []region // sorted by addr

	holds   int  // task_suspend2 tokens and the spawn hold
	stopped bool // SSTOP from POSIX_SPAWN_START_SUSPENDED
	phase   int
	child   bool
	reaped  bool
	exited  chan struct{}
	status  syscall.WaitStatus

	// dyld's registration: TASK_DYLD_INFO.
	dyldAddr, dyldSize uint64
	infos              *fixture.Task
	// dyldPlan is what dyld does after the task is continued, in model
	// steps: see PlanDyldStart.
	dyldPlan []dyldEvent
}

type dyldEvent struct {
	at int64
	do func()
}

// Thread is a modelled thread: its id, name, CPU time and the stacks it
// moves between.
type Thread struct {
	task     *Task
	ID       uint64
	Name     string
	Busy     bool // running on CPU whenever not suspended
	UserStop int  // user_stop_count (thread_act.c)
	phase    int
	cpu      time.Duration
	last     time.Time

	stackLo, stackHi uint64
	Stacks           []*Stack
	cur              int
	// SwitchEvery is how many model steps the thread stays on one stack
	// while it runs.
	SwitchEvery int64
	ranSteps    int64
	// exitAt, when non-zero, is the model step at which the thread
	// starts terminating (then disabled and dead a few steps later).
	exitAt int64
}

func (k *Kernel) newTask(pid int, path string) *Task {
	t := &Task{k: k, PID: pid, Path: path, exited: make(chan struct{})}
	k.tasks[pid] = t
	return t
}

// NewTask adds a running task whose memory holds the given Mach-O images
// laid out by dyld (fixture.NewTask: a dyld_all_image_infos, its image
// array and paths), registered with the kernel as TASK_DYLD_INFO.
func (k *Kernel) NewTask(t testing.TB, path string, imgs []fixture.TaskImage) *Task {
	t.Helper()
	k.mu.Lock()
	defer k.mu.Unlock()
	k.nextPID++
	tk := k.newTask(k.nextPID, path)
	tk.setImages(t, imgs)
	return tk
}

// SetImages lays the images out in the task's memory (as NewTask), for
// the profiler's own task in Self-mode tests.
func (k *Kernel) SetImages(t testing.TB, tk *Task, imgs []fixture.TaskImage) {
	k.mu.Lock()
	defer k.mu.Unlock()
	tk.setImages(t, imgs)
}

func (tk *Task) setImages(t testing.TB, imgs []fixture.TaskImage) {
	ft := fixture.NewTask(t, imgs, nil)
	tk.infos = ft
	ft.Mem.Each(func(addr uint64, data []byte) {
		// A copy: the fixture's Infos keeps what dyld wrote, for
		// SetInfoArrayUpdating to restore.
		tk.mapRegion(addr, append([]byte(nil), data...), mach.VMProtRead)
	})
	tk.dyldAddr, tk.dyldSize = ft.InfosAddr, images.DyldAllImageInfosSize
}

// Holds is the number of suspension holds on the task (task_suspend2
// tokens, and the spawn's until SIGCONT).
func (tk *Task) Holds() int {
	tk.k.mu.Lock()
	defer tk.k.mu.Unlock()
	return tk.holds
}

// Loads are the images' load addresses, in the order given to NewTask.
func (tk *Task) Loads() []uint64 { return tk.infos.Loads }

func (tk *Task) mapRegion(addr uint64, data []byte, prot int32) {
	tk.mem = append(tk.mem, region{addr, data, prot})
	sort.Slice(tk.mem, func(i, j int) bool { return tk.mem[i].addr < tk.mem[j].addr })
}

// clip splits the entry holding addr in two at addr, as vm_map_clip_start
// does (osfmk/vm/vm_map.c); both pieces keep the same memory.
func (tk *Task) clip(addr uint64) {
	i := sort.Search(len(tk.mem), func(i int) bool { return tk.mem[i].addr > addr }) - 1
	if i < 0 || addr == tk.mem[i].addr || addr-tk.mem[i].addr >= uint64(len(tk.mem[i].data)) {
		return
	}
	r := tk.mem[i]
	off := addr - r.addr
	tk.mem = slices.Insert(tk.mem, i+1, region{addr, r.data[off:], r.prot})
	tk.mem[i].data = r.data[:off:off]
}

// pageSize is the task's map page size: 16 KiB for a 64-bit task on an
// arm64 kernel, 4 KiB for one run by Rosetta (PMAP_CREATE_FORCE_4K_PAGES)
// and on an x86_64 kernel (bsd/kern/mach_loader.c load_machfile,
// vm_map_set_page_shift).
func (tk *Task) pageSize(k *Kernel) uint64 {
	if (k.GOARCHValue == "arm64" || k.ProfilerTranslated) && !tk.Translated {
		return 16 << 10
	}
	return 4 << 10
}

// write copies b to addr, across entries (the pieces of a clipped one).
func (tk *Task) write(addr uint64, b []byte) {
	for len(b) > 0 {
		r := tk.regionAt(addr)
		n := copy(r.data[addr-r.addr:], b)
		b, addr = b[n:], addr+uint64(n)
	}
}

func (tk *Task) unmap(addr uint64) {
	for i, r := range tk.mem {
		if r.addr == addr {
			tk.mem = append(tk.mem[:i], tk.mem[i+1:]...)
			return
		}
	}
}

// read copies len(dst) bytes at addr, which may span adjacent entries.
func (tk *Task) read(addr uint64, dst []byte) mach.KernReturn {
	end := addr + uint64(len(dst))
	if end < addr {
		return mach.KernInvalidAddress
	}
	// vm_map_copyin_internal checks the whole range before copying.
	for a := addr; a < end; {
		r := tk.regionAt(a)
		if r == nil {
			return mach.KernInvalidAddress
		}
		if r.prot&mach.VMProtRead == 0 {
			return mach.KernProtectionFailure
		}
		a = r.addr + uint64(len(r.data))
	}
	for a := addr; a < end; {
		r := tk.regionAt(a)
		n := copy(dst[a-addr:], r.data[a-r.addr:])
		a += uint64(n)
	}
	return mach.KernSuccess
}

func (tk *Task) regionAt(a uint64) *region {
	i := sort.Search(len(tk.mem), func(i int) bool { return tk.mem[i].addr > a }) - 1
	if i >= 0 && a-tk.mem[i].addr < uint64(len(tk.mem[i].data)) {
		return &tk.mem[i]
	}
	return nil
}

// AddThread adds a thread (xnu thread ids are system-wide and never
// reused: osfmk/kern/thread.c thread_create_internal, thread_unique_id).
func (tk *Task) AddThread(name string) *Thread {
	tk.k.nextTID++
	th := &Thread{task: tk, ID: tk.k.nextTID, Name: name, SwitchEvery: 40, last: time.Now()}
	tk.Threads = append(tk.Threads, th)
	return th
}

// runnable reports whether the thread runs: neither it nor its task is
// held (osfmk/kern/thread_act.c thread_hold / task_hold: a thread runs
// only when its suspend count and its task's are zero).
func (th *Thread) runnable() bool {
	return th.phase == phaseAlive && th.UserStop == 0 && th.task.holds == 0
}

// advance moves the task's clock to step: due dyld events happen,
// running threads use CPU and move between their stacks, and threads due
// to exit go through their phases.
func (tk *Task) advance(step int64) {
	for len(tk.dyldPlan) > 0 && tk.dyldPlan[0].at <= step && tk.holds == 0 {
		ev := tk.dyldPlan[0]
		tk.dyldPlan = tk.dyldPlan[1:]
		ev.do()
	}
	now := time.Now()
	for _, th := range tk.Threads {
		if th.runnable() {
			if th.Busy {
				th.cpu += now.Sub(th.last)
			}
			th.ranSteps++
			if len(th.Stacks) > 1 && th.SwitchEvery > 0 && th.ranSteps%th.SwitchEvery == 0 {
				th.setStack((th.cur + 1) % len(th.Stacks))
			}
		}
		th.last = now
		if th.exitAt != 0 && step >= th.exitAt {
			// A thread exits only when it runs: a suspended thread
			// stays in thread_act's hold until resumed.
			if th.phase == phaseAlive && th.runnable() {
				th.phase = phaseTerminating
			} else if th.phase > phaseAlive && th.phase < phaseDead && step >= th.exitAt+int64(2*th.phase) {
				th.phase++
				if th.phase == phaseDead {
					tk.k.destroyPort(th)
				}
			}
		}
	}
}

// ExitThreadAfter makes th start exiting after n more model steps, going
// through KERN_TERMINATED, KERN_INVALID_ARGUMENT and
// MACH_SEND_INVALID_DEST two steps apart.
func (k *Kernel) ExitThreadAfter(th *Thread, n int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	th.exitAt = k.step + n
}

// DisableThread makes th exit up to the point where thread_terminate_self
// has disabled its port (ipc_thread_disable, osfmk/kern/thread.c) and
// thread_terminate_queue_invoke has not yet taken it off task->threads:
// task_threads lists it as MACH_PORT_NULL, and calls on a right to it get
// KERN_INVALID_ARGUMENT.
func (k *Kernel) DisableThread(th *Thread) {
	k.mu.Lock()
	defer k.mu.Unlock()
	th.phase = phaseDisabled
}

// Exit ends the task at once (SIGKILL, or its last thread's exit):
// threads and task go through task->active = false and ipc_task_disable
// (osfmk/kern/task.c task_terminate_internal), and it becomes a zombie
// until Wait4 reaps it.
func (k *Kernel) Exit(tk *Task, status int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	tk.exit(syscall.WaitStatus(uint32(status) << 8))
}

func (tk *Task) exit(ws syscall.WaitStatus) {
	if tk.phase != phaseAlive {
		return
	}
	tk.phase = phaseDisabled
	for _, th := range tk.Threads {
		th.phase = phaseDisabled
	}
	tk.status = ws
	close(tk.exited)
}

// Reap destroys the task's ports as ipc_task_terminate does once the
// task is gone: our rights become dead names.
func (k *Kernel) Reap(tk *Task) {
	k.mu.Lock()
	defer k.mu.Unlock()
	tk.phase = phaseDead
	for _, th := range tk.Threads {
		th.phase = phaseDead
		k.destroyPort(th)
	}
	k.destroyPort(portObj{task: tk})
	k.destroyPort(portObj{task: tk, read: true})
}

// --- dyld ---

// offInfoArrayCount, offInfoArray and offTimestamp are the offsets of
// infoArrayCount, infoArray and infoArrayChangeTimestamp in struct
// dyld_all_image_infos, offCacheFields that of sharedCacheSlide, which
// sharedCacheUUID and sharedCacheBaseAddress follow up to the timestamp
// (dyld include/mach-o/dyld_images.h; images/dyld_layout_test.go checks
// them).
const (
	offInfoArrayCount = 4
	offInfoArray      = 8
	offCacheFields    = 152
	offTimestamp      = 184
)

// SetInfoArrayUpdating sets infoArray to NULL, as dyld does while it
// changes the image list ("set infoArray to NULL to denote it is in-use",
// dyld/ExternallyViewableState.cpp), or restores it.
func (k *Kernel) SetInfoArrayUpdating(tk *Task, updating bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	tk.setInfoArrayUpdating(updating)
}

func (tk *Task) setInfoArrayUpdating(updating bool) {
	b := tk.infosBytes()
	if updating {
		binary.LittleEndian.PutUint64(b[offInfoArray:], 0)
		return
	}
	binary.LittleEndian.PutUint64(b[offInfoArray:], binary.LittleEndian.Uint64(tk.infos.Infos[offInfoArray:]))
	ts := binary.LittleEndian.Uint64(b[offTimestamp:]) + 1
	binary.LittleEndian.PutUint64(b[offTimestamp:], ts)
}

func (tk *Task) infosBytes() []byte {
	if r := tk.regionAt(tk.dyldAddr); r != nil {
		return r.data[tk.dyldAddr-r.addr:]
	}
	return nil
}

// MoveDyldInfos models dyld moving dyld_all_image_infos into the dyld in
// the shared cache right after exec (dyld/ExternallyViewableState.cpp
// prepareInCacheDyldAllImageInfos: the fields are copied to the in-cache
// dyld's __all_image_info and proc_set_dyld_all_image_info registers the
// new address, which TASK_DYLD_INFO then returns) and unmapping the
// on-disk dyld with the old copy (dyld/dyldMain.cpp: "unload disk based
// dyld now that we are running with one in the dyld cache", munmap of every
// segment, __DATA_DIRTY included once the new process info is in use).
func (k *Kernel) MoveDyldInfos(tk *Task, to uint64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	tk.moveDyldInfos(to)
}

func (tk *Task) moveDyldInfos(to uint64) {
	old := tk.infosBytes()
	moved := append([]byte(nil), old[:images.DyldAllImageInfosSize]...)
	tk.unmap(tk.dyldAddr)
	tk.mapRegion(to, moved, mach.VMProtRead|mach.VMProtWrite)
	tk.dyldAddr = to
}

// PlanDyldStart schedules what dyld does once a spawned task is continued:
// the image list is "in use" (infoArray NULL) for the first nullSteps
// model steps, then filled, and at moveStep the structure moves to to.
func (tk *Task) PlanDyldStart(nullSteps, moveStep int64, to uint64) {
	tk.setInfoArrayUpdating(true)
	tk.dyldPlan = []dyldEvent{
		{at: nullSteps, do: func() { tk.setInfoArrayUpdating(false) }},
		{at: moveStep, do: func() { tk.moveDyldInfos(to) }},
	}
}

// continued rebases the dyld plan on the step at which SIGCONT came.
func (tk *Task) continued(step int64) {
	for i := range tk.dyldPlan {
		tk.dyldPlan[i].at += step
	}
}

// Launchable registers a program Spawn can start: mk builds its task.
func (k *Kernel) Launchable(path string, mk func(k *Kernel) *Task) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.launchable == nil {
		k.launchable = make(map[string]func(*Kernel) *Task)
	}
	k.launchable[path] = mk
}

// SpawnedTask builds, for a Launchable function, a child task with the
// given images.
func (k *Kernel) SpawnedTask(t testing.TB, path string, imgs []fixture.TaskImage) *Task {
	k.nextPID++
	tk := k.newTask(k.nextPID, path)
	tk.child = true
	tk.setImages(t, imgs)
	return tk
}

// --- stacks ---

// Stack is one call chain a thread can be in: PCs[0] the interrupted
// instruction, PCs[i] the return address into the i-th caller, laid out as
// real frame records in the thread's stack memory.
type Stack struct {
	PCs []uint64
	// LeafFrame says whether the interrupted function has pushed its own
	// frame record (false: a leaf, its caller only in LR on arm64).
	LeafFrame bool
	// Layout, when set, replaces the generated frame records (PCs and
	// LeafFrame are then ignored): an opt-in for stacks that are not a
	// chain of records, such as an x86_64 frameless leaf whose return
	// address is at RSP.
	Layout *Layout

	regs unwind.Regs
	mem  []byte
}

// Layout is a stack exactly as a program's own code left it when the
// thread was interrupted. What a program keeps on its stack is what its
// instructions stored there, not a kernel behaviour: a test that builds
// a Layout follows the program's code (and should cite its disassembly).
// The model only hands the layout back the way xnu does: Regs through
// thread_get_state (see Kernel.ThreadGetState), Words through
// mach_vm_read_overwrite of the thread's stack region.
type Layout struct {
	// Regs are the interrupted thread's registers: PC, SP, FP (x29 on
	// arm64, RBP on x86_64) and, on arm64, LR (x30).
	Regs unwind.Regs
	// Words are the 8-byte words the program stored, little-endian, by
	// address; the rest of the stack region reads as zero. Every word
	// must lie in the region SetStacks gives the thread.
	Words map[uint64]uint64
}

// SetStacks gives th a stack region [hi-size, hi) and the call chains it
// moves between; arch decides the frame-record layout: [fp, lr] at x29 on
// arm64 (AAPCS64 frame records), [rbp, return address] on x86_64, the
// return address pushed by call just above the saved rbp. A Stack with a
// Layout is put in the region as its Layout says, whatever arch.
func (th *Thread) SetStacks(arch unwind.Arch, hi uint64, size int, stacks ...*Stack) {
	lo := hi - uint64(size)
	th.stackLo, th.stackHi = lo, hi
	for _, s := range stacks {
		s.build(arch, lo, hi)
	}
	th.Stacks = stacks
	th.task.mapRegion(lo, make([]byte, size), mach.VMProtRead|mach.VMProtWrite)
	th.setStack(0)
}

func (th *Thread) setStack(i int) {
	th.cur = i
	th.task.write(th.stackLo, th.Stacks[i].mem)
}

func (th *Thread) regs() unwind.Regs {
	if len(th.Stacks) == 0 {
		return unwind.Regs{}
	}
	return th.Stacks[th.cur].regs
}

// Current is the stack the thread is on.
func (th *Thread) Current() *Stack { return th.Stacks[th.cur] }

func (s *Stack) build(arch unwind.Arch, lo, hi uint64) {
	mem := make([]byte, hi-lo)
	le := binary.LittleEndian
	if l := s.Layout; l != nil {
		for a, v := range l.Words {
			if a < lo || a > hi-8 {
				panic(fmt.Sprintf("machtest: Layout word at %#x outside the stack region [%#x, %#x)", a, lo, hi))
			}
			le.PutUint64(mem[a-lo:], v)
		}
		s.regs, s.mem = l.Regs, mem
		return
	}
	// Frame records from the top of the stack down, 64 bytes apart
	// (locals between them); the outermost record is [0, 0], which ends
	// a walk as a thread's first frame does: a user thread starts with its
	// registers zeroed, fp included (xnu osfmk/arm64/status.c
	// machine_thread_state_initialize), so the entry function saves a
	// zero caller frame.
	callers := s.PCs[1:]
	fp := hi - 64
	le.PutUint64(mem[fp-lo:], 0)
	le.PutUint64(mem[fp-lo+8:], 0)
	// records[i] is the frame of the function that called callers[i]'s
	// callee, i.e. the record holding callers[i] as return address.
	for i := len(callers) - 1; i >= 0; i-- {
		next := fp
		fp -= 64
		le.PutUint64(mem[fp-lo:], next)
		le.PutUint64(mem[fp-lo+8:], callers[i])
	}
	s.regs = unwind.Regs{PC: s.PCs[0], FP: fp, SP: fp - 32}
	if arch == unwind.ArchARM64 {
		if len(callers) > 0 {
			s.regs.LR = callers[0]
		}
		if !s.LeafFrame && len(callers) > 0 {
			// A leaf has not pushed a record: FP is still its caller's,
			// and its return address is only in LR.
			s.regs.FP = le.Uint64(mem[fp-lo:])
		}
	}
	s.mem = mem
}
