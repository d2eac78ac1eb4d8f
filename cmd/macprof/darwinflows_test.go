package main

// The darwin flows as the CLI runs them: runRecord and runSnapshot, with the
// darwin backend (mach) over mach/machtest, a model of xnu, where the real
// kernel would be. Each test goes from the command line to the written
// profile in the order a user's run takes, the model's port and suspension
// accounting checked after each.

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	pprof "github.com/google/pprof/profile"

	"github.com/macprof/macprof/demangle"
	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/images/dyldcachetest"
	"github.com/macprof/macprof/internal/fixture"
	"github.com/macprof/macprof/internal/osbackend"
	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/mach"
	"github.com/macprof/macprof/mach/machtest"
	"github.com/macprof/macprof/symcache"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// Where the model puts images and stacks.
const (
	flowProgSlide = 0x4000
	flowLibSlide  = 0x10_0000_0000
	flowStackTop  = 0x16f000000
	flowStackSize = 64 << 10
)

// flowImage is a Mach-O fixture (images/testdata/build.sh: clang -target
// arm64-apple-macos11, ld64.lld) mapped in a model task at slide under
// path, the path dyld's list gives: one that does not exist here, so that
// names can come only from the task's memory while it lives.
type flowImage struct {
	fixture, path string
	slide         uint64
}

var (
	flowProg = flowImage{"prog_arm64", "/Applications/Prog.app/Contents/MacOS/prog", flowProgSlide}
	flowLib  = flowImage{"libdemo_arm64.dylib", "/usr/lib/libdemo.dylib", flowLibSlide}
	flowCxx  = flowImage{"cxx_arm64", "/Applications/Prog.app/Contents/MacOS/helper", flowProgSlide}
)

func (im flowImage) file() string {
	return filepath.Join("..", "..", "images", "testdata", "macho", im.fixture)
}

// frame is a function of an image, as a stack's frame.
type frame struct {
	img  flowImage
	name string
}

// flowChain is a call chain, leaf first.
type flowChain []frame

// names is the chain's function names as profiles show them (demangled),
// leaf first.
func (c flowChain) names() []string {
	var out []string
	for _, f := range c {
		out = append(out, demangle.Name(f.name, demangle.Simplified))
	}
	return out
}

// pcs gives each frame an address a few bytes into its function (return
// addresses too, so that pc-1 stays in the function).
func (c flowChain) pcs(t *testing.T) []uint64 {
	t.Helper()
	var out []uint64
	for i, f := range c {
		a, ok := fixture.MachOFunctions(t, f.img.file())[f.name]
		if !ok {
			t.Fatalf("no function %s in %s", f.name, f.img.fixture)
		}
		off := uint64(8)
		if i == 0 {
			off = 4
		}
		out = append(out, a+f.img.slide+off)
	}
	return out
}

// The chains the model's threads run: the program's own code and a
// library's.
var (
	chainMain   = flowChain{{flowProg, "leaf"}, {flowProg, "func_10"}, {flowProg, "local_10"}, {flowProg, "main"}}
	chainLib    = flowChain{{flowLib, "lib_helper"}, {flowLib, "lib_entry"}, {flowProg, "func_23"}, {flowProg, "local_23"}, {flowProg, "main"}}
	chainHelper = flowChain{{flowCxx, "_ZN3geo7measureERKNS_5ShapeEi"}, {flowCxx, "main"}}
)

// flowModel is the model kernel the backend calls, and the tasks it
// spawned, as they are.
type flowModel struct {
	k       *machtest.Kernel
	spawned chan *machtest.Task
}

// newFlowModel makes a model kernel and has every command use it as the
// OS until the test ends, when the model's accounting is checked.
func newFlowModel(t *testing.T) *flowModel {
	t.Helper()
	m := &flowModel{k: machtest.New(), spawned: make(chan *machtest.Task, 16)}
	old := osBackend
	osBackend = osbackend.Backend{
		Attach: func(pid int, o target.Options) (target.Target, error) { return mach.AttachKernel(m.k, pid, o) },
		Launch: func(args []string, o target.Options) (target.Launched, error) {
			return mach.LaunchCommandKernel(m.k, args, o)
		},
	}
	t.Cleanup(func() {
		osBackend = old
		// What snapshot keeps for symbols read after Close, the task
		// port, goes with the Target's GC cleanup.
		testprog.PollEvery(3*time.Second, 10*time.Millisecond, func() bool {
			runtime.GC()
			return len(m.k.Rights()) == 0
		})
		m.k.Check(t)
	})
	return m
}

// populate lays imgs out in tk and gives it a busy thread per chain.
func populate(t *testing.T, tk *machtest.Task, chains ...flowChain) {
	t.Helper()
	for i, c := range chains {
		th := tk.AddThread(fmt.Sprintf("worker-%d", i))
		th.Busy = true
		th.SetStacks(unwind.ArchARM64, flowStackTop-uint64(i)<<20, flowStackSize, &machtest.Stack{PCs: c.pcs(t)})
	}
}

// taskImages is the fixture.TaskImage list of imgs.
func taskImages(imgs ...flowImage) []fixture.TaskImage {
	var out []fixture.TaskImage
	for _, im := range imgs {
		out = append(out, fixture.TaskImage{File: im.file(), Path: im.path, Slide: im.slide})
	}
	return out
}

// launchable registers a program macprof can launch: a file exec.LookPath
// accepts, whose task mk builds when spawned.
func (m *flowModel) launchable(t *testing.T, mk func(k *machtest.Kernel, path string) *machtest.Task) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "prog")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	m.k.Launchable(exe, func(k *machtest.Kernel) *machtest.Task {
		tk := mk(k, exe)
		m.spawned <- tk
		return tk
	})
	return exe
}

// runCLI runs a macprof command as main does and returns its status and
// standard error.
func runCLI(t *testing.T, run func(args []string, stdout, stderr *bytes.Buffer) int, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func recordCLI(args []string, stdout, stderr *bytes.Buffer) int {
	return runRecord(args, stdout, stderr)
}

// readProfile reads a pprof file and returns its stacks (function names,
// leaf first, joined by ";") with their sample counts.
func readProfile(t *testing.T, path string) (*pprof.Profile, map[string]int64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := pprof.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return p, fixture.PprofStacks(p)
}

// checkNamed fails unless every sample's stack is one of the chains, every
// frame named, and each chain was seen.
func checkNamed(t *testing.T, stacks map[string]int64, stderr string, chains ...flowChain) {
	t.Helper()
	want := map[string]bool{}
	for _, c := range chains {
		want[strings.Join(c.names(), ";")] = true
	}
	seen := map[string]bool{}
	for s, n := range stacks {
		if s == "[unsampled]" {
			continue
		}
		if !want[s] {
			t.Errorf("%d samples on %q, not a stack the model's threads ran (unnamed frames?)", n, s)
			continue
		}
		seen[s] = true
	}
	for s := range want {
		if !seen[s] {
			t.Errorf("no sample on %q; stacks: %v\n%s", s, stacks, stderr)
		}
	}
}

// recordNamed runs `macprof record -o FILE ARGS...` and fails unless it
// exits with status want and its profile holds every chain, named.
func recordNamed(t *testing.T, want int, chains []flowChain, args ...string) *pprof.Profile {
	t.Helper()
	out := filepath.Join(t.TempDir(), "p.pb.gz")
	code, _, stderr := runCLI(t, recordCLI, append([]string{"-o", out}, args...)...)
	if code != want {
		t.Fatalf("status %d, want %d:\n%s", code, want, stderr)
	}
	p, stacks := readProfile(t, out)
	checkNamed(t, stacks, stderr, chains...)
	return p
}

// TestModelRecordLaunchToExit is `macprof record -o p.pb.gz -- ./prog`
// until the program exits on its own: the profile is written after the
// exit, as the CLI does, when xnu has torn the task's memory down, and
// every frame is named, the program's and its library's (read while the
// task lived: their paths do not exist here); the thread names and the
// command's exit status come through.
func TestModelRecordLaunchToExit(t *testing.T) {
	m := newFlowModel(t)
	exe := m.launchable(t, func(k *machtest.Kernel, path string) *machtest.Task {
		tk := k.SpawnedTask(t, path, taskImages(flowProg, flowLib))
		populate(t, tk, chainMain, chainLib)
		tk.PlanDyldStart(30, 60, 0x19f000000)
		tk.PlanExit(4000, 3)
		return tk
	})
	p := recordNamed(t, 3, []flowChain{chainMain, chainLib}, "-F", "400", "--", exe)
	threads := map[string]bool{}
	for _, s := range p.Sample {
		for _, v := range s.Label["thread"] {
			threads[v] = true
		}
	}
	for _, name := range []string{"worker-0", "worker-1"} {
		if !threads[name] {
			t.Errorf("no sample labelled thread %q; labels seen: %v", name, threads)
		}
	}
}

// TestModelRecordDlopen: the program dlopens a library after the
// profiler's first read of its image list and a new thread runs in it;
// the program exits and the profile, written after the exit as the CLI
// does, names the library's frames (its path does not exist here: the
// names come from the task's memory, read once a PC outside every known
// image had the list read again).
func TestModelRecordDlopen(t *testing.T) {
	m := newFlowModel(t)
	var listRead atomic.Bool // TASK_DYLD_INFO asked: the first image read
	m.k.OnCall(machtest.CallTaskInfo, func() { listRead.Store(true) })
	exe := m.launchable(t, func(k *machtest.Kernel, path string) *machtest.Task {
		tk := k.SpawnedTask(t, path, taskImages(flowProg))
		populate(t, tk, chainMain)
		tk.PlanDlopen(t, 800, taskImages(flowLib), func() {
			if !listRead.Load() {
				t.Error("the dlopen came before the profiler first read the image list")
			}
			th := tk.AddThread("loader")
			th.Busy = true
			th.SetStacks(unwind.ArchARM64, flowStackTop-8<<20, flowStackSize, &machtest.Stack{PCs: chainLib.pcs(t)})
		})
		tk.PlanExit(4000, 0)
		return tk
	})
	recordNamed(t, 0, []flowChain{chainMain, chainLib}, "-F", "400", "--", exe)
}

// killAfterHit is a launched command killed (SIGKILL) right after its
// Target first reports images that samples hit (ImagesHit), before
// record's reader has read their symbols: the reads that follow find the
// task's memory gone, and the names can come only from the images' files
// on disk.
type killAfterHit struct {
	*mach.Launched
	once sync.Once
	kill func()
}

func (l *killAfterHit) ImagesHit(dst []*images.Image) []*images.Image {
	n := len(dst)
	dst = l.Launched.ImagesHit(dst)
	if len(dst) > n {
		l.once.Do(l.kill)
	}
	return dst
}

// killAfterFirstHit makes the commands launched from now on killed right
// after their first images-hit report (killAfterHit).
func (m *flowModel) killAfterFirstHit() {
	osBackend.Launch = func(args []string, o target.Options) (target.Launched, error) {
		l, err := mach.LaunchCommandKernel(m.k, args, o)
		if err != nil {
			return nil, err
		}
		tk := <-m.spawned
		return &killAfterHit{Launched: l, kill: func() { m.k.Kill(tk.PID, syscall.SIGKILL) }}, nil
	}
}

// onDisk is img under the path of its fixture file, which exists here.
func onDisk(t *testing.T, img flowImage) flowImage {
	t.Helper()
	p, err := filepath.Abs(img.file())
	if err != nil {
		t.Fatal(err)
	}
	img.path = p
	return img
}

// TestModelRecordKilledAfterFirstHit: the command is killed right after
// the sampler's first report of the images its samples hit, before
// record's reader could read them from the task: the reads fail (xnu
// unmapped the task) and the frames are named from the images' files,
// which dyld's list names and whose LC_UUID is the images'.
func TestModelRecordKilledAfterFirstHit(t *testing.T) {
	m := newFlowModel(t)
	m.killAfterFirstHit()
	prog, lib := onDisk(t, flowProg), onDisk(t, flowLib)
	main := flowChain{{prog, "leaf"}, {prog, "func_10"}, {prog, "local_10"}, {prog, "main"}}
	inLib := flowChain{{lib, "lib_helper"}, {lib, "lib_entry"}, {prog, "func_23"}, {prog, "local_23"}, {prog, "main"}}
	exe := m.launchable(t, func(k *machtest.Kernel, path string) *machtest.Task {
		tk := k.SpawnedTask(t, path, taskImages(prog, lib))
		populate(t, tk, main, inLib)
		return tk
	})
	recordNamed(t, 128+int(syscall.SIGKILL), []flowChain{main, inLib}, "-F", "400", "--", exe)
}

// TestModelRecordSharedCache: the program calls into a dylib of the dyld
// shared cache (MH_DYLIB_IN_CACHE, the cache's UUID in
// dyld_all_image_infos), whose path exists in no file system, the cache's
// files being in the directory searched for them. Its frames are named
// after the program's exit: its exports from the task's memory read while
// the task lived and its locals (<redacted> in memory) from the cache's
// .symbols file, the subcache with the dylib's bytes being absent; and,
// when the task is killed before its memory could be read, all of them
// from the cache's files (main file, subcache, .symbols).
func TestModelRecordSharedCache(t *testing.T) {
	files := []string{flowLib.file(), filepath.Join(filepath.Dir(flowLib.file()), "libtwo_arm64.dylib")}
	c := dyldcachetest.Build(t, files)
	d := c.Dylibs[0]
	for _, memoryGone := range []bool{false, true} {
		name := "from memory"
		if memoryGone {
			name = "memory gone"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			old := symcache.DefaultSharedCacheDirs
			symcache.DefaultSharedCacheDirs = []string{dir}
			t.Cleanup(func() { symcache.DefaultSharedCacheDirs = old })
			m := newFlowModel(t)
			prog := flowProg
			if memoryGone {
				c.WriteCache(t, dir, c.SubUUID())
				m.killAfterFirstHit()
				prog = onDisk(t, flowProg)
			} else {
				c.WriteFiles(t, dir, c.SymbolsUUID)
			}
			lib := flowImage{flowLib.fixture, d.InstallPath, d.Delta + dyldcachetest.Slide}
			if _, err := os.Stat(lib.path); err == nil {
				t.Fatalf("%s exists here: the test needs a path that does not", lib.path)
			}
			main := flowChain{{prog, "leaf"}, {prog, "func_10"}, {prog, "local_10"}, {prog, "main"}}
			inLib := flowChain{{lib, "lib_helper"}, {lib, "lib_entry"}, {prog, "func_23"}, {prog, "local_23"}, {prog, "main"}}
			exe := m.launchable(t, func(k *machtest.Kernel, path string) *machtest.Task {
				tk := k.SpawnedTask(t, path, append(taskImages(prog), c.TaskImage(0)))
				populate(t, tk, main, inLib)
				tk.PlanExit(3000, 0)
				return tk
			})
			status := 0
			if memoryGone {
				status = 128 + int(syscall.SIGKILL)
			}
			recordNamed(t, status, []flowChain{main, inLib}, "-F", "400", "--", exe)
		})
	}
}

// TestModelRecordShortCommand: a command that lives for less than 50
// ticks at -F 999 (50 ms for a profiler that keeps up) before exiting on
// its own has every sample named after its exit, its images' paths
// existing nowhere here: the names come from the reads made in its first
// ticks.
func TestModelRecordShortCommand(t *testing.T) {
	m := newFlowModel(t)
	exe := m.launchable(t, func(k *machtest.Kernel, path string) *machtest.Task {
		tk := k.SpawnedTask(t, path, taskImages(flowProg, flowLib))
		populate(t, tk, chainMain, chainLib)
		tk.PlanExit(shortCommandSteps, 0)
		return tk
	})
	p := recordNamed(t, 0, []flowChain{chainMain, chainLib}, "-F", "999", "--", exe)
	// Each tick captures each thread once (one thread_suspend): at most
	// 50 ticks, 50 ms at -F 999 for a profiler that keeps up. The
	// samples' values count the ticks of wall time instead, which a
	// loaded machine stretches.
	var wall int64
	for _, s := range p.Sample {
		wall += s.Value[0]
	}
	if n := m.k.Counts().Calls[machtest.CallThreadSuspend]; n > 2*50 {
		t.Errorf("%d thread_suspend calls: the command lived more than 50 ticks", n)
	} else {
		t.Logf("%d captures of 2 threads; %d ticks of wall time in the samples", n, wall)
	}
}

// shortCommandSteps is how many model steps the short command runs: 43
// ticks of record's with two threads (measured: 86 captures; 400 steps
// give 22 ticks, 820 give 52).
const shortCommandSteps = 700

// TestModelRecordInterrupted is Ctrl-C during `macprof record -- ./prog`:
// the recording stops, the signal reaches the command (whose default
// action ends it), the profile is written with names, and macprof exits
// with the command's status, 128 + SIGINT.
func TestModelRecordInterrupted(t *testing.T) {
	m := newFlowModel(t)
	exe := m.launchable(t, func(k *machtest.Kernel, path string) *machtest.Task {
		tk := k.SpawnedTask(t, path, taskImages(flowProg, flowLib))
		populate(t, tk, chainMain, chainLib)
		return tk
	})
	sigs := make(chan chan<- os.Signal, 1)
	old := notifyStop
	notifyStop = func(c chan<- os.Signal) { sigs <- c }
	defer func() { notifyStop = old }()
	go func() {
		c := <-sigs
		time.Sleep(500 * time.Millisecond)
		c <- os.Interrupt
	}()
	recordNamed(t, 128+int(syscall.SIGINT), []flowChain{chainMain, chainLib}, "-F", "400", "--", exe)
}

// TestModelRecordAttached is `macprof record -p PID -d 0.5`: the process
// is sampled for the duration and left running, holding no suspension,
// and the profile is named.
func TestModelRecordAttached(t *testing.T) {
	m := newFlowModel(t)
	tk := m.k.NewTask(t, flowProg.path, taskImages(flowProg, flowLib))
	populate(t, tk, chainMain, chainLib)
	recordNamed(t, 0, []flowChain{chainMain, chainLib}, "-p", fmt.Sprint(tk.PID), "-d", "0.5")
	if err := m.k.Kill(tk.PID, 0); err != nil {
		t.Errorf("the attached process is gone after the recording: %v", err)
	}
}

// TestModelRecordKilled: the command is killed (SIGKILL) mid-recording;
// macprof writes what it had, named, and exits 128 + 9.
func TestModelRecordKilled(t *testing.T) {
	m := newFlowModel(t)
	exe := m.launchable(t, func(k *machtest.Kernel, path string) *machtest.Task {
		tk := k.SpawnedTask(t, path, taskImages(flowProg, flowLib))
		populate(t, tk, chainMain, chainLib)
		return tk
	})
	go func() {
		tk := <-m.spawned
		time.Sleep(400 * time.Millisecond)
		m.k.Kill(tk.PID, syscall.SIGKILL)
	}()
	recordNamed(t, 128+int(syscall.SIGKILL), []flowChain{chainMain, chainLib}, "-F", "400", "--", exe)
}

// TestModelRecordExec: the launched program execs another midway (xnu
// gives the process a new task and terminates the old one): the recording
// follows the PID to its new task, and the profile holds both programs'
// samples, each named from its own images.
func TestModelRecordExec(t *testing.T) {
	m := newFlowModel(t)
	exe := m.launchable(t, func(k *machtest.Kernel, path string) *machtest.Task {
		tk := k.SpawnedTask(t, path, taskImages(flowProg, flowLib))
		populate(t, tk, chainMain, chainLib)
		tk.PlanExec(1500, func(k *machtest.Kernel) *machtest.Task {
			nt := k.Exec(t, tk, flowCxx.path, taskImages(flowCxx))
			populate(t, nt, chainHelper)
			nt.PlanExit(1500, 0)
			return nt
		})
		return tk
	})
	// The model's clock moves with the calls made to it: a recording
	// that stopped at the exec would wait for ever for the new program,
	// which is then killed.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tk := <-m.spawned
		select {
		case <-stop:
		case <-time.After(30 * time.Second):
			m.k.Kill(tk.PID, syscall.SIGKILL)
		}
	}()
	out := filepath.Join(t.TempDir(), "p.pb.gz")
	code, _, stderr := runCLI(t, recordCLI, "-F", "400", "-o", out, "--", exe)
	if code != 0 {
		t.Fatalf("status %d (the recording did not follow the exec?):\n%s", code, stderr)
	}
	p, stacks := readProfile(t, out)
	checkNamed(t, stacks, stderr, chainMain, chainLib, chainHelper)
	files := map[string]bool{}
	for _, mp := range p.Mapping {
		files[filepath.Base(mp.File)] = true
	}
	if !files["prog"] || !files["helper"] {
		t.Errorf("mappings %v, want both programs'", files)
	}
}

// TestModelSnapshot is `macprof snapshot -p PID`: every thread's stack,
// named, and the process left running with no suspension held.
func TestModelSnapshot(t *testing.T) {
	m := newFlowModel(t)
	tk := m.k.NewTask(t, flowProg.path, taskImages(flowProg, flowLib))
	populate(t, tk, chainMain, chainLib)
	code, stdout, stderr := runCLI(t, func(args []string, stdout, stderr *bytes.Buffer) int {
		return runSnapshot(args, stdout, stderr)
	}, "-p", fmt.Sprint(tk.PID))
	if code != 0 {
		t.Fatalf("status %d:\n%s", code, stderr)
	}
	for _, c := range []flowChain{chainMain, chainLib} {
		for _, name := range c.names() {
			if !strings.Contains(stdout, name) {
				t.Errorf("snapshot has no frame %s:\n%s", name, stdout)
			}
		}
	}
	for _, th := range []string{"worker-0", "worker-1"} {
		if !strings.Contains(stdout, th) {
			t.Errorf("snapshot does not name thread %s:\n%s", th, stdout)
		}
	}
}

// TestModelAgentWindow is `macprof agent -p PID --window 1` exporting to
// Pyroscope's /ingest: each window's profile arrives named, the agent
// captures under task_suspend2 (Unattended), and the process is left
// running with no hold.
func TestModelAgentWindow(t *testing.T) {
	m := newFlowModel(t)
	tk := m.k.NewTask(t, flowProg.path, taskImages(flowProg, flowLib))
	populate(t, tk, chainMain, chainLib)
	var mu sync.Mutex
	stacks := map[string]int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, _, err := r.FormFile("profile")
		if err != nil {
			t.Errorf("ingest without a profile field: %v", err)
			return
		}
		defer f.Close()
		p, err := pprof.Parse(f)
		if err != nil {
			t.Errorf("ingest: %v", err)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for s, n := range fixture.PprofStacks(p) {
			stacks[s] += n
		}
	}))
	defer srv.Close()
	code, _, stderr := runCLI(t, func(args []string, stdout, stderr *bytes.Buffer) int {
		return runAgent(args, stdout, stderr)
	}, "-p", fmt.Sprint(tk.PID), "-d", "2.5", "--window", "1", "--pyroscope-url", srv.URL, "--telemetry", "none")
	if code != 0 {
		t.Fatalf("status %d:\n%s", code, stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	checkNamed(t, stacks, stderr, chainMain, chainLib)
	if tk.Holds() != 0 {
		t.Errorf("the agent left %d suspension holds on its target", tk.Holds())
	}
	if n := m.k.Counts().Calls[machtest.CallTaskSuspend2]; n == 0 {
		t.Error("the agent never held the task with task_suspend2")
	}
}
