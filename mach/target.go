package mach

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"syscall"
	"unsafe"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
	"github.com/macprof/macprof/unwind/compact"
)

// Target is a macOS task being profiled. Its methods are not safe for
// concurrent use, except ReadMemory, Close and Release, which may be called
// from another goroutine at any time (a second Ctrl-C): Close waits for a
// capture under way, whose deferred thread_resume needs the thread's port.
type Target struct {
	// calls is held by every method that uses the thread ports (Threads,
	// Info, the captures) and by Close, which releases them.
	calls   sync.Mutex
	k       Kernel
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
	dyld   TaskDyldInfoData
	raw    RawCapture

	imgKey imgKey
	imgSet *images.Set
	hits   imageHits // the images samples hit (ImagesHit)
	execs  int       // execs followed (reattach)

	// Compact unwind (SetCompactUnwind): the images' tables, rebuilt with
	// imgSet, which captures walk with (WalkCFI).
	compactOn bool
	compact   *compact.Images

	path string

	launched   bool
	waitDone   chan struct{}
	waitStatus syscall.WaitStatus
	waitErr    error
}

// AttachKernel opens the task of process pid through k: a read port
// (task_read_for_pid) when the kernel grants one, a control port
// (task_for_pid) otherwise. The process keeps running. Attaching needs
// root, or a macprof signed with com.apple.security.cs.debugger (macprof
// setup) and a target that allows it; the error says which applies.
func AttachKernel(k Kernel, pid int, opts target.Options) (*Target, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("invalid PID %d", pid)
	}
	if pid == os.Getpid() {
		return nil, errors.New("cannot attach to macprof's own process by PID: use mach.Self")
	}
	return attachTask(k, pid, opts)
}

// attachTask opens pid's task and returns a Target holding its port.
func attachTask(k Kernel, pid int, opts target.Options) (*Target, error) {
	task, err := openTask(k, pid)
	if err != nil {
		return nil, err
	}
	t, err := newTarget(k, pid, task, true, false, opts)
	if err != nil {
		k.PortDeallocate(k.TaskSelf(), task)
		return nil, err
	}
	return t, nil
}

// openTask returns a send right to pid's task, read port first.
// task_read_for_pid is a BSD system call (0, or -1 and errno); task_for_pid
// a Mach trap. Either may succeed with MACH_PORT_NULL when the process has
// no task to give (xnu bsd/kern/kern_proc.c: "proc_task(p) == TASK_NULL",
// "could be IP_NULL"), which is a failure here.
func openTask(k Kernel, pid int) (uint32, error) {
	self := k.TaskSelf()
	task, r, errno := k.TaskReadForPID(self, pid)
	if r == 0 && task != 0 {
		return task, nil
	}
	readErr := "returned MACH_PORT_NULL"
	if r != 0 {
		readErr = errno.Error()
	}
	task, kr := k.TaskForPID(self, pid)
	if kr == KernSuccess && task != 0 {
		return task, nil
	}
	path, exists := processPath(k, pid)
	return 0, AttachError(AttachFacts{PID: pid, Op: "task_for_pid", Code: kr, Desc: k.ErrorString(kr), ReadErr: readErr,
		NullPort: kr == KernSuccess, Exists: exists, Path: path, Root: os.Geteuid() == 0})
}

// processPath returns pid's executable and whether the process exists.
func processPath(k Kernel, pid int) (string, bool) {
	var buf [4 * 1024]byte // PROC_PIDPATHINFO_MAXSIZE
	if n := k.ProcPIDPath(pid, buf[:]); n > 0 {
		return string(buf[:n]), true
	}
	// proc_pidpath returns 0 on every error, without an errno to read
	// (libsyscall wrappers/libproc/libproc.c), and may be refused (EPERM)
	// for a process that exists: kill(pid, 0) tells.
	return "", k.Kill(pid, 0) != syscall.ESRCH
}

// processTranslated reports whether pid runs under Rosetta 2.
func processTranslated(k Kernel, pid int) (bool, error) {
	flags, errno := k.ProcFlags(pid)
	switch errno {
	case 0:
		return Translated(flags), nil
	case syscall.ESRCH:
		return false, fmt.Errorf("PID %d: %w", pid, target.ErrExited)
	}
	return false, fmt.Errorf("sysctl kern.proc.pid.%d: %w", pid, errno)
}

// newTarget builds the Target of task; own says the port is ours to
// release, self that task is the calling process.
func newTarget(k Kernel, pid int, task uint32, own, self bool, opts target.Options) (*Target, error) {
	opts = opts.WithDefaults()
	t := &Target{
		k:       k,
		pid:     pid,
		self:    self,
		opts:    opts,
		mem:     &taskMemory{k: k, task: task, own: own, chunk: KernelBufferMax(hostARM64(k))},
		threads: make(map[target.ThreadID]*thread),
		byPort:  make(map[uint32]*thread),
	}
	translated := false
	if self {
		// macprof itself: an x86_64 macprof run by Rosetta has x86_64
		// threads on an arm64 host.
		translated = selfTranslated(k)
	} else {
		tr, err := processTranslated(k, pid)
		if err != nil {
			return nil, err
		}
		translated = tr
	}
	if err := t.setWalkers(translated); err != nil {
		return nil, err
	}
	// --unwind cfi walks by the images' compact unwind tables; auto and
	// fp by frame records, which Apple's ABIs keep in all but frameless
	// leaves: neither walk has run on a Mac, so the simpler one stays
	// the default while the table walk is model-tested only.
	t.compactOn = opts.Unwind == unwind.MethodCFI
	t.path, _ = processPath(k, pid)
	if !self {
		if err := t.probe(); err != nil {
			return nil, err
		}
	}
	// The GC cleanup that releases the port of a Target nobody released
	// is registered only now: an error above makes the caller release
	// the port, and a cleanup registered earlier would release it a
	// second time, dropping the reference of another Target of the same
	// task (all our rights to one task share one name).
	if own {
		t.mem.cleanup = runtime.AddCleanup(t.mem, func(port uint32) { k.PortDeallocate(k.TaskSelf(), port) }, task)
	}
	return t, nil
}

// setWalkers sets the register flavor, the address mask and the walkers
// for a task whose threads run translated by Rosetta or not, reading
// fallbacks through t.mem.
func (t *Target) setWalkers(translated bool) error {
	t.flavor = FlavorFor(hostARM64(t.k), translated)
	t.mask = AddrMask(virtualAddressBits(t.k))
	if t.flavor.Arch != unwind.ArchARM64 {
		t.mask = 0
	}
	w, err := unwind.NewWalker(unwind.Config{Arch: t.flavor.Arch, MaxFrames: t.opts.MaxFrames, AddrMask: t.mask, Fallback: walkReader{t.mem}})
	if err != nil {
		return err
	}
	t.walker = w
	return nil
}

// probe reads the registers of one thread with the chosen flavor, so that
// a flavor the kernel refuses (a Rosetta target and a native arm64
// macprof) is reported at attach rather than as every capture failing.
// A thread that is gone, or a task without threads yet, is no error.
func (t *Target) probe() error {
	list, ports, k := t.k.TaskThreads(t.mem.task)
	if k != KernSuccess {
		return nil
	}
	self := t.k.TaskSelf()
	defer func() {
		for _, p := range ports {
			if portValid(p) {
				t.k.PortDeallocate(self, p)
			}
		}
		if len(ports) > 0 {
			t.k.VMDeallocate(self, list, uint64(len(ports))*4)
		}
	}()
	for _, p := range ports {
		if !portValid(p) {
			continue // an exiting thread
		}
		if _, k := t.k.ThreadGetState(p, t.flavor.Flavor, t.stateWords()); k != KernSuccess {
			if e := t.stateError(p, k); e.Kind == ErrTranslated {
				return e
			}
		}
		return nil
	}
	return nil
}

// stateError builds the error of a failed thread_get_state. On an arm64
// kernel, machine_thread_get_state answers a flavor it does not serve
// with KERN_INVALID_ARGUMENT (xnu osfmk/arm64/status.c), the code a
// disabled thread port gives too (osfmk/kern/ipc_tt.c): the thread is
// gone only if thread_info fails as well.
func (t *Target) stateError(port uint32, k KernReturn) *Error {
	if k == KernInvalidArgument {
		if _, ik := t.k.ThreadInfo(port, ThreadBasicInfo, words(&t.basic, ThreadBasicInfoCount)); ik == KernSuccess {
			e := &Error{Op: "thread_get_state", Code: k, Desc: t.errorString(k)}
			if t.flavor.Arch == unwind.ArchAMD64 && hostARM64(t.k) {
				e.Kind = ErrTranslated
				e.Advice = "the target runs under Rosetta 2 and the kernel does not give its x86_64 registers to a native arm64 macprof: " +
					"run the x86_64 build of macprof under Rosetta (arch -x86_64 macprof ...)"
			} else {
				e.Advice = fmt.Sprintf("the kernel refused register flavor %d for a live thread", t.flavor.Flavor)
			}
			return e
		}
	}
	return ThreadError("thread_get_state", k, t.errorString(k), t.taskAlive())
}

// selfTranslated reports whether macprof itself runs under Rosetta 2
// (sysctl.proc_translated, as Apple documents for "About the Rosetta
// translation environment").
func selfTranslated(k Kernel) bool {
	if k.GOARCH() != "amd64" {
		return false
	}
	v, ok := k.SysctlUint32("sysctl.proc_translated")
	return ok && v == 1
}

// PID returns the process id.
func (t *Target) PID() int { return t.pid }

// Arch returns the architecture of the target's threads.
func (t *Target) Arch() unwind.Arch { return t.flavor.Arch }

// Executable returns the path of the target's executable, when known.
func (t *Target) Executable() string { return t.path }

// Walker returns the walker used during captures.
func (t *Target) Walker() *unwind.Walker { return t.walker }

// unwindTables holds the compact unwind tables of every target of this
// process by image UUID, so that the system libraries every process loads
// are parsed once. 64 MiB holds the tables of a few million functions.
var unwindTables = compact.NewCache(64 << 20)

// SetCompactUnwind turns walking with the images' compact unwind tables
// (__TEXT,__unwind_info) on or off; it is on when target.Options.Unwind
// is unwind.MethodCFI. When on, each
// capture walks by the tables where they cover a PC and by frame pointers
// elsewhere (unwind.Walker.WalkCFI over compact.Images); an image's table is
// read from the target's memory by Images, after a capture first needed
// it, and shared through a process-wide cache keyed by UUID.
func (t *Target) SetCompactUnwind(on bool) {
	t.compactOn = on
	t.compact = nil
	if on && t.imgSet != nil {
		t.compact, _ = CompactImages(t.imgSet, unwindTables, t.flavor.Arch)
	}
}

// CompactUnwind returns the compact unwind image set captures walk with,
// nil while SetCompactUnwind is off (for tests and tools).
func (t *Target) CompactUnwind() *compact.Images { return t.compact }

// walk fills c.PCs and c.Walk from the registers and stack copy of a
// stopped thread.
func (t *Target) walk(regs unwind.Regs, st *unwind.Stack, c *target.Capture) {
	if t.compact != nil {
		c.PCs, c.Walk = t.walker.WalkCFI(regs, st, t.compact, c.PCs)
	} else {
		c.PCs, c.Walk = t.walker.Walk(regs, st, c.PCs)
	}
}

// noteCapture records the images a capture's PCs hit (ImagesHit) and
// names the image list it was taken under, so that a sample taken before
// an exec (or a dlclose) is not named from the list read after it. A PC
// outside every known image (a library dlopen'ed since the list was read)
// has the list read again at once (rereadUnknown), so that this capture
// is named under the new list too. It runs once the thread is resumed:
// none of it needs the thread stopped.
func (t *Target) noteCapture(c *target.Capture) {
	if t.hits.note(t.imgSet, c.PCs) && t.rereadUnknown() {
		t.hits.note(t.imgSet, c.PCs)
	}
	c.Images, c.Executable = t.imgSet, t.path
}

// refreshCompact rebuilds the compact unwind image set when the image list
// changed and builds the tables captures asked for since the last call.
func (t *Target) refreshCompact(changed bool) {
	if !t.compactOn {
		return
	}
	if changed || t.compact == nil {
		imgs, err := CompactImages(t.imgSet, unwindTables, t.flavor.Arch)
		if err != nil {
			return // overlapping images: keep the previous set
		}
		t.compact = imgs
	}
	BuildCompactTables(t.compact, unwindTables, t.mem)
}

// taskAlive reports whether the task still answers.
func (t *Target) taskAlive() bool {
	_, k := t.k.TaskInfo(t.mem.task, TaskDyldInfo, t.dyldWords())
	return k == KernSuccess
}

// dyldWords is the scratch task_dyld_info as the words task_info fills.
func (t *Target) dyldWords() []uint32 {
	return unsafe.Slice((*uint32)(unsafe.Pointer(&t.dyld)), TaskDyldInfoCount)
}

// errorString is mach_error_string(k).
func (t *Target) errorString(k KernReturn) string { return t.k.ErrorString(k) }

// Images returns the target's loaded images, read through
// task_info(TASK_DYLD_INFO) and dyld_all_image_infos. TASK_DYLD_INFO is
// asked on every call (one cheap call): dyld moves dyld_all_image_infos
// into its copy in the shared cache right after exec and unmaps the old one
// (dyld ExternallyViewableState.cpp prepareInCacheDyldAllImageInfos), so a
// cached address goes stale; a read that fails at the address just given
// asks once more, as libdyld's own reader does (dyld_process_info.cpp:
// "possible that dyld moved"). The list is read again only when the
// address, infoArrayChangeTimestamp or the array itself changed. Each image
// reads its symbols from the target's memory, which stays readable after
// Close until Release.
func (t *Target) Images() (*images.Set, error) {
	var err error
	for try := 0; try < 2; try++ {
		var set *images.Set
		if set, err = t.readImages(); err == nil {
			return set, nil
		}
	}
	return t.imgSet, err
}

// readImages asks for dyld's address and reads the list there.
func (t *Target) readImages() (*images.Set, error) {
	t.mem.mu.RLock()
	_, k := t.k.TaskInfo(t.mem.task, TaskDyldInfo, t.dyldWords())
	t.mem.mu.RUnlock()
	info := t.dyld
	if k != KernSuccess {
		return nil, ThreadError("task_info(TASK_DYLD_INFO)", k, t.errorString(k), false)
	}
	if info.AllImageInfoFormat != TaskDyldAllImageInfo64 {
		return nil, fmt.Errorf("task_info(TASK_DYLD_INFO): PID %d is not a 64-bit process (format %d)", t.pid, info.AllImageInfoFormat)
	}
	if info.AllImageInfoAddr == 0 {
		return nil, errors.New("task_info(TASK_DYLD_INFO): dyld has not set up its image list yet")
	}
	addr := info.AllImageInfoAddr
	infos, err := images.ReadDyldAllImageInfos(t.mem, addr)
	if err != nil {
		return nil, fmt.Errorf("PID %d: %w", t.pid, err)
	}
	key := imgKey{addr, infos.InfoArrayChangeTimestamp, uint64(infos.InfoArrayCount), infos.InfoArray}
	if t.imgSet != nil && key == t.imgKey {
		t.refreshCompact(false)
		return t.imgSet, nil
	}
	imgs, _, err := images.DyldImages(t.mem, addr, 0)
	if len(imgs) == 0 {
		if err == nil {
			err = errors.New("dyld lists no images")
		}
		return nil, fmt.Errorf("PID %d: %w", t.pid, err)
	}
	// A partial list (an image that could not be read) is still the best
	// list there is; it is read again when dyld's timestamp moves.
	t.imgSet = images.NewSet(imgs)
	t.imgKey = key
	t.refreshCompact(true)
	return t.imgSet, nil
}

// imgKey is what says the image list is unchanged: dyld's address, its
// infoArrayChangeTimestamp, and the array's count and address.
type imgKey struct{ addr, stamp, count, array uint64 }

// ReadMemory reads the target's memory. It is safe for concurrent use and
// keeps working after Close, until Release.
func (t *Target) ReadMemory(addr uint64, dst []byte) error { return t.mem.ReadMemory(addr, dst) }

// Close releases every thread port and stops sampling. The task port is
// kept for ReadMemory (symbols read from the target at export time) until
// Release or until the Target and its images are unreachable. Close is safe
// to call more than once, and from another goroutine while a capture is
// under way: it waits for the capture to resume its thread.
func (t *Target) Close() error {
	t.calls.Lock()
	defer t.calls.Unlock()
	if t.closed {
		return nil
	}
	t.closed = true
	for id, th := range t.threads {
		t.k.PortDeallocate(t.k.TaskSelf(), th.port)
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
func hostARM64(k Kernel) bool {
	if k.GOARCH() == "arm64" {
		return true
	}
	v, ok := k.SysctlUint32("sysctl.proc_translated")
	return ok && v == 1
}

// virtualAddressBits reads machdep.virtual_address_size (0 when absent).
func virtualAddressBits(k Kernel) int {
	v, ok := k.SysctlUint32("machdep.virtual_address_size")
	if !ok {
		return 0
	}
	return int(v)
}
