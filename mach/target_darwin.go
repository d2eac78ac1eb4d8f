//go:build darwin

package mach

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// maxThreads bounds the thread list a task may report.
const maxThreads = 1 << 16

// nameRefresh is how often a thread's name is read again.
const nameRefresh = time.Second

var (
	selfOnce sync.Once
	selfPort uint32
)

// selfTask returns mach_task_self(), read once: the name never changes
// for the life of the process.
func selfTask() uint32 {
	selfOnce.Do(func() { selfPort = machTaskSelf() })
	return selfPort
}

// taskMemory reads a task's memory. It outlives the Target's Close so that
// images whose symbols live in the target's memory can still be read at
// export time; the task port is released by Release or, failing that, when
// the last reference is gone.
type taskMemory struct {
	mu       sync.RWMutex
	task     uint32
	own      bool // the port is ours to release (not mach_task_self)
	released bool
	cleanup  runtime.Cleanup
}

// errUnreadable is returned by the walker's fallback reader; a constant so
// that a failing read does not allocate.
var errUnreadable = errors.New("mach_vm_read_overwrite failed")

func (m *taskMemory) ReadMemory(addr uint64, dst []byte) error {
	if len(dst) == 0 {
		return nil
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.released {
		return target.ErrClosed
	}
	var out uint64
	if k := machVMReadOverwrite(m.task, addr, uint64(len(dst)), unsafe.Pointer(&dst[0]), &out); k != KernSuccess {
		return &Error{Op: fmt.Sprintf("mach_vm_read_overwrite(%#x, %d)", addr, len(dst)), Code: k, Desc: machErrorString(k)}
	}
	if out != uint64(len(dst)) {
		return fmt.Errorf("mach_vm_read_overwrite(%#x, %d): short read of %d bytes", addr, len(dst), out)
	}
	return nil
}

func (m *taskMemory) release() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.released {
		return
	}
	m.released = true
	if m.own {
		m.cleanup.Stop()
		machPortDeallocate(selfTask(), m.task)
	}
}

// walkReader is the walker's fallback: single reads outside the bulk copy,
// without allocating on failure. The Target holds its taskMemory's read
// lock for the whole capture.
type walkReader struct{ m *taskMemory }

func (w walkReader) ReadMemory(addr uint64, dst []byte) error {
	if len(dst) == 0 {
		return nil
	}
	var out uint64
	if k := machVMReadOverwrite(w.m.task, addr, uint64(len(dst)), unsafe.Pointer(&dst[0]), &out); k != KernSuccess || out != uint64(len(dst)) {
		return errUnreadable
	}
	return nil
}

type thread struct {
	port    uint32
	id      target.ThreadID
	seen    uint64
	name    string
	nameAt  time.Time
	stackLo uint64 // the region that held SP last time (0, 0: unknown)
	stackHi uint64
}

// Target is a macOS task being profiled. Its methods are not safe for
// concurrent use, except ReadMemory.
type Target struct {
	pid     int
	self    bool // the calling process (Self)
	opts    target.Options
	flavor  StateFlavor
	mask    uint64
	walker  *unwind.Walker
	mem     *taskMemory
	closed  bool
	threads map[target.ThreadID]*thread
	byPort  map[uint32]*thread
	gen     uint64

	arm    ArmThreadState
	x86    X86ThreadState
	basic  ThreadBasicInfoData
	ext    ThreadExtendedInfoData
	ident  ThreadIdentifierInfoData
	region VMRegionBasicInfo64Data

	dyldAddr uint64
	imgKey   [3]uint64
	imgSet   *images.Set

	path string

	launched   bool
	waitDone   chan struct{}
	waitStatus syscall.WaitStatus
	waitErr    error
}

// Attach opens the task of process pid: a read port (task_read_for_pid)
// when the kernel grants one, a control port (task_for_pid) otherwise. The
// process keeps running. Attaching needs root, or a macprof signed with
// com.apple.security.cs.debugger (macprof setup) and a target that allows
// it; the error says which applies.
func Attach(pid int, opts target.Options) (*Target, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("invalid PID %d", pid)
	}
	if pid == os.Getpid() {
		return nil, errors.New("cannot attach to macprof's own process by PID: use mach.Self")
	}
	task, err := openTask(pid)
	if err != nil {
		return nil, err
	}
	t, err := newTarget(pid, task, true, false, opts)
	if err != nil {
		machPortDeallocate(selfTask(), task)
		return nil, err
	}
	return t, nil
}

// openTask returns a send right to pid's task, read port first.
func openTask(pid int) (uint32, error) {
	var task uint32
	k := taskReadForPID(selfTask(), pid, &task)
	op := "task_read_for_pid"
	if k != KernSuccess {
		task = 0
		if k2 := taskForPID(selfTask(), pid, &task); k2 == KernSuccess {
			return task, nil
		} else {
			op, k = "task_for_pid", k2
		}
		path, exists := processPath(pid)
		return 0, AttachError(AttachFacts{PID: pid, Op: op, Code: k, Desc: machErrorString(k), Exists: exists, Path: path, Root: os.Geteuid() == 0})
	}
	return task, nil
}

// processPath returns pid's executable and whether the process exists.
func processPath(pid int) (string, bool) {
	var buf [4 * 1024]byte // PROC_PIDPATHINFO_MAXSIZE
	n, e := procPIDPath(pid, buf[:])
	if n > 0 {
		return string(buf[:n]), true
	}
	if e == syscall.ESRCH {
		return "", false
	}
	// proc_pidpath may be refused (EPERM) for a process that exists.
	return "", syscall.Kill(pid, 0) != syscall.ESRCH
}

func newTarget(pid int, task uint32, own, self bool, opts target.Options) (*Target, error) {
	opts = opts.WithDefaults()
	t := &Target{
		pid:     pid,
		self:    self,
		opts:    opts,
		mem:     &taskMemory{task: task, own: own},
		threads: make(map[target.ThreadID]*thread),
		byPort:  make(map[uint32]*thread),
	}
	if own {
		t.mem.cleanup = runtime.AddCleanup(t.mem, func(port uint32) { machPortDeallocate(selfTask(), port) }, task)
	}
	translated := false
	if !self {
		tr, err := processTranslated(pid)
		if err != nil {
			return nil, err
		}
		translated = tr
	}
	t.flavor = FlavorFor(hostARM64(), translated)
	t.mask = AddrMask(virtualAddressBits())
	if t.flavor.Arch != unwind.ArchARM64 {
		t.mask = 0
	}
	w, err := unwind.NewWalker(unwind.Config{Arch: t.flavor.Arch, MaxFrames: opts.MaxFrames, AddrMask: t.mask, Fallback: walkReader{t.mem}})
	if err != nil {
		return nil, err
	}
	t.walker = w
	t.path, _ = processPath(pid)
	return t, nil
}

// PID returns the process id.
func (t *Target) PID() int { return t.pid }

// Arch returns the architecture of the target's threads.
func (t *Target) Arch() unwind.Arch { return t.flavor.Arch }

// Executable returns the path of the target's executable, when known.
func (t *Target) Executable() string { return t.path }

// Walker returns the walker used during captures.
func (t *Target) Walker() *unwind.Walker { return t.walker }

// taskAlive reports whether the task still answers.
func (t *Target) taskAlive() bool {
	var info TaskDyldInfoData
	count := uint32(TaskDyldInfoCount)
	return taskInfo(t.mem.task, TaskDyldInfo, unsafe.Pointer(&info), &count) == KernSuccess
}

// Threads lists the target's threads (their THREAD_IDENTIFIER_INFO ids) in
// the order task_threads gives. Every port and the array task_threads
// returns are released; the Target keeps one reference per live thread.
func (t *Target) Threads(dst []target.ThreadID) ([]target.ThreadID, error) {
	dst = dst[:0]
	if t.closed {
		return dst, target.ErrClosed
	}
	t.mem.mu.RLock()
	defer t.mem.mu.RUnlock()
	var list unsafe.Pointer
	var count uint32
	if k := taskThreads(t.mem.task, &list, &count); k != KernSuccess {
		e := ThreadError("task_threads", k, machErrorString(k), t.taskAlive())
		return dst, e
	}
	ports := unsafe.Slice((*uint32)(list), count)
	t.gen++
	var cur uint32
	if t.self {
		cur = machThreadSelf()
	}
	for i, p := range ports {
		if th := t.byPort[p]; th != nil {
			// We already hold a reference to this thread: drop the new one.
			machPortDeallocate(selfTask(), p)
			th.seen = t.gen
		} else if i < maxThreads {
			var count uint32 = ThreadIdentifierInfoCount
			if k := threadInfo(p, ThreadIdentifierInfo, unsafe.Pointer(&t.ident), &count); k != KernSuccess {
				machPortDeallocate(selfTask(), p) // it exited meanwhile
				continue
			}
			th := &thread{port: p, id: target.ThreadID(t.ident.ThreadID), seen: t.gen}
			if old := t.threads[th.id]; old != nil {
				// Same id under a new port name: keep the newest.
				delete(t.byPort, old.port)
				machPortDeallocate(selfTask(), old.port)
			}
			t.threads[th.id] = th
			t.byPort[p] = th
		} else {
			machPortDeallocate(selfTask(), p)
			continue
		}
		if t.self && p == cur {
			continue // never list the thread that samples
		}
		dst = append(dst, t.byPort[p].id)
	}
	if t.self {
		machPortDeallocate(selfTask(), cur)
	}
	if count > 0 {
		vmDeallocate(selfTask(), list, uint64(count)*4)
	}
	for id, th := range t.threads {
		if th.seen != t.gen {
			delete(t.threads, id)
			delete(t.byPort, th.port)
			machPortDeallocate(selfTask(), th.port)
		}
	}
	return dst, nil
}

func (t *Target) lookup(id target.ThreadID) (*thread, error) {
	if t.closed {
		return nil, target.ErrClosed
	}
	th := t.threads[id]
	if th == nil {
		return nil, fmt.Errorf("thread %d: %w", id, target.ErrNoThread)
	}
	return th, nil
}

// Info returns the thread's CPU time and run state (THREAD_BASIC_INFO) and
// its name (THREAD_EXTENDED_INFO pth_name, read at most once a second).
func (t *Target) Info(id target.ThreadID) (target.ThreadInfo, error) {
	th, err := t.lookup(id)
	if err != nil {
		return target.ThreadInfo{}, err
	}
	t.mem.mu.RLock()
	defer t.mem.mu.RUnlock()
	count := uint32(ThreadBasicInfoCount)
	if k := threadInfo(th.port, ThreadBasicInfo, unsafe.Pointer(&t.basic), &count); k != KernSuccess {
		return target.ThreadInfo{}, ThreadError("thread_info(THREAD_BASIC_INFO)", k, machErrorString(k), t.taskAlive())
	}
	now := time.Now()
	if th.nameAt.IsZero() || now.Sub(th.nameAt) >= nameRefresh {
		th.nameAt = now
		count := uint32(ThreadExtendedInfoCount)
		if threadInfo(th.port, ThreadExtendedInfo, unsafe.Pointer(&t.ext), &count) == KernSuccess {
			if b := t.ext.NameBytes(); string(b) != th.name {
				th.name = string(b)
			}
		}
	}
	return target.ThreadInfo{ID: id, Name: th.name, CPUTime: t.basic.CPUTime(), Running: t.basic.Running()}, nil
}

func resetCapture(c *target.Capture, id target.ThreadID) {
	c.Thread = id
	c.Regs = unwind.Regs{}
	c.PCs = c.PCs[:0]
	c.Stack = c.Stack[:0]
	c.StackBase = 0
	c.Walk = unwind.Result{}
	c.Stopped = 0
	c.Err = nil
}

// Capture suspends one thread (thread_suspend), reads its registers, copies
// its stack with one mach_vm_read_overwrite, walks it, and resumes it.
func (t *Target) Capture(id target.ThreadID, c *target.Capture) error {
	if t.self {
		return t.selfCapture(id, c)
	}
	th, err := t.lookup(id)
	if err != nil {
		return err
	}
	resetCapture(c, id)
	t.mem.mu.RLock()
	defer t.mem.mu.RUnlock()
	start := time.Now()
	if k := threadSuspend(th.port); k != KernSuccess {
		return ThreadError("thread_suspend", k, machErrorString(k), t.taskAlive())
	}
	err = t.captureStopped(th, c)
	k := threadResume(th.port)
	c.Stopped = time.Since(start)
	if k != KernSuccess && err == nil {
		err = ThreadError("thread_resume", k, machErrorString(k), t.taskAlive())
	}
	return err
}

// stackRegion returns the bounds of the memory region holding sp, from the
// thread's cache or mach_vm_region.
func (t *Target) stackRegion(th *thread, sp uint64) (lo, hi uint64, ok bool) {
	if sp >= th.stackLo && sp < th.stackHi {
		return th.stackLo, th.stackHi, true
	}
	addr, size := sp, uint64(0)
	count := uint32(VMRegionBasicInfoCount64)
	var object uint32
	k := machVMRegion(t.mem.task, &addr, &size, VMRegionBasicInfo64, unsafe.Pointer(&t.region), &count, &object)
	if object != 0 {
		machPortDeallocate(selfTask(), object)
	}
	if k != KernSuccess || addr > sp || sp-addr >= size {
		return 0, 0, false
	}
	th.stackLo, th.stackHi = addr, addr+size
	return th.stackLo, th.stackHi, true
}

// captureStopped fills c for a suspended thread.
func (t *Target) captureStopped(th *thread, c *target.Capture) error {
	count := t.flavor.Count
	var state unsafe.Pointer
	if t.flavor.Arch == unwind.ArchARM64 {
		state = unsafe.Pointer(&t.arm)
	} else {
		state = unsafe.Pointer(&t.x86)
	}
	if k := threadGetState(th.port, t.flavor.Flavor, state, &count); k != KernSuccess {
		e := ThreadError("thread_get_state", k, machErrorString(k), t.taskAlive())
		if e.Kind == nil && t.flavor.Arch == unwind.ArchAMD64 && hostARM64() {
			e.Advice = "the target runs under Rosetta 2 and this kernel does not give its x86_64 registers to a native profiler: " +
				"try the x86_64 build of macprof (arch -x86_64 macprof ...)"
		}
		return e
	}
	regs, ok := DecodeState(t.flavor, &t.arm, &t.x86, count, t.mask)
	if !ok {
		return fmt.Errorf("thread_get_state returned %d words, want %d", count, t.flavor.Count)
	}
	c.Regs = regs
	lo, hi, ok := t.stackRegion(th, regs.SP)
	if !ok {
		lo, hi = regs.SP, regs.SP
	}
	base, n := StackWindow(regs.SP, lo, hi, cap(c.Stack))
	if n > 0 {
		buf := c.Stack[:n]
		var out uint64
		if machVMReadOverwrite(t.mem.task, base, uint64(n), unsafe.Pointer(&buf[0]), &out) == KernSuccess && out <= uint64(n) {
			c.Stack = buf[:out]
			c.StackBase = base
		}
	}
	st := unwind.Stack{Base: c.StackBase, Data: c.Stack, Lo: lo, Hi: hi}
	c.PCs, c.Walk = t.walker.Walk(regs, &st, c.PCs)
	return nil
}

// CaptureAll suspends the whole task with task_suspend2 (whose token the
// kernel releases if macprof dies, so the target is never left frozen),
// captures every thread, and resumes it. When task_suspend2 is refused
// (a read port may not be enough), every thread is suspended one by one
// first instead: still a consistent snapshot.
func (t *Target) CaptureAll(dst []target.Capture) ([]target.Capture, error) {
	if t.self {
		return t.selfCaptureAll(dst)
	}
	ids, err := t.Threads(nil)
	if err != nil {
		return dst[:0], err
	}
	t.mem.mu.RLock()
	defer t.mem.mu.RUnlock()
	start := time.Now()
	var token uint32
	whole := taskSuspend2(t.mem.task, &token) == KernSuccess
	var held []*thread
	if !whole {
		for _, id := range ids {
			if th := t.threads[id]; th != nil && threadSuspend(th.port) == KernSuccess {
				held = append(held, th)
			}
		}
		if len(held) == 0 && len(ids) > 0 {
			if !t.taskAlive() {
				return dst[:0], target.ErrExited
			}
		}
	}
	dst = dst[:0]
	for _, id := range ids {
		c := t.nextCapture(&dst)
		resetCapture(c, id)
		th := t.threads[id]
		if th == nil {
			c.Err = fmt.Errorf("thread %d: %w", id, target.ErrNoThread)
			continue
		}
		if !whole && !contains(held, th) {
			c.Err = fmt.Errorf("thread %d could not be suspended: %w", id, target.ErrNoThread)
			continue
		}
		c.Err = t.captureStopped(th, c)
	}
	if whole {
		if k := taskResume2(token); k != KernSuccess {
			err = &Error{Op: "task_resume2", Code: k, Desc: machErrorString(k)}
		}
	}
	for _, th := range held {
		threadResume(th.port)
	}
	stopped := time.Since(start)
	for i := range dst {
		dst[i].Stopped = stopped
	}
	return dst, err
}

// nextCapture grows *dst by one Capture, reusing the buffers of one that
// was there before.
func (t *Target) nextCapture(dst *[]target.Capture) *target.Capture {
	d := *dst
	if len(d) < cap(d) {
		d = d[:len(d)+1]
	} else {
		d = append(d, target.Capture{})
	}
	c := &d[len(d)-1]
	if cap(c.PCs) == 0 {
		c.PCs = make([]uint64, 0, t.opts.MaxFrames)
	}
	if cap(c.Stack) == 0 {
		c.Stack = make([]byte, 0, t.opts.StackBytes)
	}
	*dst = d
	return c
}

func contains(ths []*thread, th *thread) bool {
	for _, x := range ths {
		if x == th {
			return true
		}
	}
	return false
}

// Images returns the target's loaded images, read through
// task_info(TASK_DYLD_INFO) and dyld_all_image_infos. The list is read
// again only when infoArrayChangeTimestamp (or the array itself) changed.
// Each image reads its symbols from the target's memory, which stays
// readable after Close until Release.
func (t *Target) Images() (*images.Set, error) {
	if t.dyldAddr == 0 {
		var info TaskDyldInfoData
		count := uint32(TaskDyldInfoCount)
		t.mem.mu.RLock()
		k := taskInfo(t.mem.task, TaskDyldInfo, unsafe.Pointer(&info), &count)
		t.mem.mu.RUnlock()
		if k != KernSuccess {
			return t.imgSet, ThreadError("task_info(TASK_DYLD_INFO)", k, machErrorString(k), false)
		}
		if info.AllImageInfoFormat != TaskDyldAllImageInfo64 {
			return nil, fmt.Errorf("task_info(TASK_DYLD_INFO): PID %d is not a 64-bit process (format %d)", t.pid, info.AllImageInfoFormat)
		}
		if info.AllImageInfoAddr == 0 {
			return t.imgSet, errors.New("task_info(TASK_DYLD_INFO): dyld has not set up its image list yet")
		}
		t.dyldAddr = info.AllImageInfoAddr
	}
	infos, err := images.ReadDyldAllImageInfos(t.mem, t.dyldAddr)
	if err != nil {
		return t.imgSet, fmt.Errorf("PID %d: %w", t.pid, err)
	}
	key := [3]uint64{infos.InfoArrayChangeTimestamp, uint64(infos.InfoArrayCount), infos.InfoArray}
	if t.imgSet != nil && key == t.imgKey {
		return t.imgSet, nil
	}
	imgs, _, err := images.DyldImages(t.mem, t.dyldAddr, 0)
	if len(imgs) == 0 {
		if err == nil {
			err = errors.New("dyld lists no images")
		}
		return t.imgSet, fmt.Errorf("PID %d: %w", t.pid, err)
	}
	// A partial list (an image that could not be read) is still the best
	// list there is; it is read again when dyld's timestamp moves.
	t.imgSet = images.NewSet(imgs)
	t.imgKey = key
	return t.imgSet, nil
}

// ReadMemory reads the target's memory. It is safe for concurrent use and
// keeps working after Close, until Release.
func (t *Target) ReadMemory(addr uint64, dst []byte) error { return t.mem.ReadMemory(addr, dst) }

// Close releases every thread port and stops sampling. The task port is
// kept for ReadMemory (symbols read from the target at export time) until
// Release or until the Target and its images are unreachable. Close is safe
// to call more than once.
func (t *Target) Close() error {
	if t.closed {
		return nil
	}
	t.closed = true
	for id, th := range t.threads {
		machPortDeallocate(selfTask(), th.port)
		delete(t.threads, id)
		delete(t.byPort, th.port)
	}
	return nil
}

// Release closes the Target and releases its task port at once; memory
// reads through it (and through its images) fail afterwards.
func (t *Target) Release() error {
	t.Close()
	t.mem.release()
	return nil
}

// hostARM64 reports whether the machine is Apple silicon, also when
// macprof itself runs translated by Rosetta 2.
func hostARM64() bool {
	if runtime.GOARCH == "arm64" {
		return true
	}
	v, ok := sysctlUint32("sysctl.proc_translated")
	return ok && v == 1
}

// virtualAddressBits reads machdep.virtual_address_size (0 when absent).
func virtualAddressBits() int {
	v, ok := sysctlUint32("machdep.virtual_address_size")
	if !ok {
		return 0
	}
	return int(v)
}

func sysctlUint32(name string) (uint32, bool) {
	b, err := syscall.BytePtrFromString(name)
	if err != nil {
		return 0, false
	}
	var v uint32
	size := unsafe.Sizeof(v)
	if sysctlByName(b, unsafe.Pointer(&v), &size, nil, 0) != 0 || size != unsafe.Sizeof(v) {
		return 0, false
	}
	return v, true
}
