package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/target/targettest"
	"github.com/macprof/macprof/unwind"
)

// onlyTarget hides CaptureAll.
type onlyTarget struct{ target.Target }

// newFake is a process of four threads whose stacks are given (thread 2
// ended before its name was read).
func newFake() *targettest.Fake {
	main := func() *targettest.Thread { return &targettest.Thread{Name: "main"} }
	f := targettest.New(42, map[target.ThreadID]*targettest.Thread{1: main(), 2: {InfoErr: target.ErrNoThread}, 3: main(), 4: main()})
	f.Snapshot = []target.Capture{
		{Thread: 1, PCs: []uint64{0x1010, 0x1020, 0x9000}, Stopped: 30 * time.Microsecond},
		{Thread: 2, PCs: []uint64{0x1010}, Walk: unwind.Result{Stop: unwind.StopMaxFrames}, Stopped: 50 * time.Microsecond},
		{Thread: 3, Err: target.ErrStopTimeout},
		{Thread: 4, Err: fmt.Errorf("thread 4: %w", target.ErrStopTimeout)},
	}
	f.ImageSet = images.NewSet([]*images.Image{{Path: "/nonexistent/libx.so", Start: 0x1000, Limit: 0x2000}})
	return f
}

func TestTake(t *testing.T) {
	f := newFake()
	f.SnapshotErr = errors.New("one thread left running")
	snap, err := Take(Config{PID: 42, Attach: func(pid int, o target.Options) (target.Target, error) { return f, nil }})
	if err != nil {
		t.Fatal(err)
	}
	if f.Closes() == 0 {
		t.Error("target not closed")
	}
	if snap.PID != 42 || snap.StoppedNS != 50000 || len(snap.Threads) != 4 {
		t.Fatalf("snapshot = %+v", snap)
	}
	th := snap.Threads[0]
	if th.Name != "main" || len(th.Frames) != 3 || th.Frames[0].Image != "libx.so" || th.Frames[2].Image != "" || th.Frames[2].Address != "0x9000" {
		t.Errorf("thread 1 = %+v", th)
	}
	if snap.Threads[1].Name != "" || snap.Threads[1].Truncated != "frame limit reached" {
		t.Errorf("thread 2 = %+v", snap.Threads[1])
	}
	if snap.Threads[2].Error != target.ErrStopTimeout.Error() || snap.Threads[2].Truncated != "" {
		t.Errorf("thread 3 = %+v", snap.Threads[2])
	}
	want := []string{"thread 3: " + target.ErrStopTimeout.Error(), "thread 4: " + target.ErrStopTimeout.Error(), "one thread left running"}
	if strings.Join(snap.Missing, "|") != strings.Join(want, "|") {
		t.Errorf("Missing = %q, want %q", snap.Missing, want)
	}
}

func TestTakeErrors(t *testing.T) {
	f := newFake()
	_, err := Take(Config{Attach: func(int, target.Options) (target.Target, error) { return onlyTarget{f}, nil }})
	if err == nil || !strings.Contains(err.Error(), "cannot stop every thread") {
		t.Errorf("a backend without CaptureAll: err %v", err)
	}
	f = newFake()
	f.Snapshot, f.SnapshotErr = nil, target.ErrExited
	if _, err := Take(Config{Attach: func(int, target.Options) (target.Target, error) { return f, nil }}); !errors.Is(err, target.ErrExited) {
		t.Errorf("nothing captured: err %v, want it to wrap ErrExited", err)
	}
	attachErr := errors.New("no such process")
	if _, err := Take(Config{Attach: func(int, target.Options) (target.Target, error) { return nil, attachErr }}); err != attachErr {
		t.Errorf("attach failure: err %v", err)
	}
}

func TestWriteText(t *testing.T) {
	s := &Snapshot{PID: 7, Executable: "/bin/app", StoppedNS: 41500, Threads: []Thread{
		{TID: 7, Name: "app", Frames: []Frame{
			{Address: "0x1010", Image: "app", Function: "inner", Offset: 0x10, File: "a.c", Line: 3, Inlined: true},
			{Address: "0x1010", Image: "app", Function: "outer", Offset: 0x8},
			{Address: "0x2020", Image: "libz.so", Offset: 0x20},
			{Address: "0x9000"},
		}, Truncated: "frame limit reached"},
		{TID: 8, Error: "thread did not stop in time"},
	}}
	var b bytes.Buffer
	s.WriteText(&b)
	want := `PID 7 - /bin/app (stopped for 42µs)
TID 7 "app":
#0              0x1010 inner+0x10 (app) at a.c:3 [inlined]
#1              0x1010 outer+0x8 (app)
#2              0x2020 libz.so+0x20
#3              0x9000 ??
    (stack may be incomplete: frame limit reached)
TID 8:
    (not captured: thread did not stop in time)
`
	if b.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestTakeEndedThreads: a thread that ended between the listing and the
// capture (ErrNoThread) is listed in Ended, not in Threads or Missing, so
// that a snapshot of a process that creates and ends threads all the time
// is complete; a snapshot whose every thread ended is an error.
func TestTakeEndedThreads(t *testing.T) {
	f := newFake()
	f.Snapshot = []target.Capture{
		{Thread: 1, PCs: []uint64{0x1010}, Stopped: 30 * time.Microsecond},
		{Thread: 5, Err: fmt.Errorf("thread 5: %w", target.ErrNoThread)},
		{Thread: 6, Err: fmt.Errorf("thread 6: %w", target.ErrNoThread), Stopped: time.Second},
	}
	attach := func(int, target.Options) (target.Target, error) { return f, nil }
	snap, err := Take(Config{PID: 42, Attach: attach})
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Missing) != 0 || len(snap.Threads) != 1 || snap.Threads[0].TID != 1 || !slices.Equal(snap.Ended, []uint64{5, 6}) {
		t.Errorf("threads %+v, ended %v, missing %q; want thread 1, ended [5 6], nothing missing", snap.Threads, snap.Ended, snap.Missing)
	}
	if snap.StoppedNS != 30000 {
		t.Errorf("stopped %dns, want 30000: an ended thread was not stopped", snap.StoppedNS)
	}
	f.Snapshot = f.Snapshot[1:]
	f.SnapshotErr = target.ErrExited
	if _, err := Take(Config{PID: 42, Attach: attach}); err == nil || !errors.Is(err, target.ErrExited) || !strings.Contains(err.Error(), "every thread of PID 42 ended") {
		t.Errorf("every thread ended: err %v, want one saying so and wrapping ErrExited", err)
	}
}

// tableTarget is a fake whose backend builds unwind tables lazily: it
// records whether every table was built before the stop (PrepareUnwind),
// and walks the copies again once the threads run (WalkCopies).
type tableTarget struct {
	*targettest.Fake
	prepared bool
	captured bool
	walked   []target.ThreadID
}

func (f *tableTarget) PrepareUnwind() { f.prepared = true }
func (f *tableTarget) CaptureAll(dst []target.Capture) ([]target.Capture, error) {
	f.captured = true
	return f.Fake.CaptureAll(dst)
}
func (f *tableTarget) WalkCopies(caps []target.Capture) {
	if !f.captured || f.Closes() > 0 {
		panic("WalkCopies called before the capture or after the detach")
	}
	for i := range caps {
		if caps[i].Err == nil {
			f.walked = append(f.walked, caps[i].Thread)
			caps[i].PCs = append(caps[i].PCs[:0], 0x1030, 0x1040) // the walk with tables
		}
	}
}

// TestTakeWalksCopiesAfterTheStop: Take builds no unwind table before the
// stop (the backend builds those the walks meet, once the threads run
// again) and the stacks it symbolizes are the ones WalkCopies gave.
func TestTakeWalksCopiesAfterTheStop(t *testing.T) {
	f := &tableTarget{Fake: newFake()}
	snap, err := Take(Config{PID: 42, Attach: func(int, target.Options) (target.Target, error) { return f, nil }})
	if err != nil {
		t.Fatal(err)
	}
	if f.prepared {
		t.Error("every table was built before the stop (PrepareUnwind)")
	}
	if !slices.Equal(f.walked, []target.ThreadID{1, 2}) {
		t.Errorf("copies walked again: threads %v, want [1 2] (3 and 4 were not captured)", f.walked)
	}
	if th := snap.Threads[0]; len(th.Frames) != 2 || th.Frames[0].Address != "0x1030" || th.Frames[1].Address != "0x1040" {
		t.Errorf("thread 1 = %+v, want the frames of the second walk", th)
	}
}

// memoryProbe is an image's memory that reports its first read.
type memoryProbe struct{ read chan struct{} }

func (m *memoryProbe) ReadMemory(addr uint64, dst []byte) error {
	select {
	case m.read <- struct{}{}:
	default:
	}
	return errors.New("no memory here")
}

// slowDetach is a fake whose Close (the detach) lasts until the snapshot's
// symbols are being read, and fails.
type slowDetach struct {
	*targettest.Fake
	probe    *memoryProbe
	sawRead  bool
	closings int
}

func (f *slowDetach) Close() error {
	f.closings++
	if f.closings == 1 {
		select {
		case <-f.probe.read:
			f.sawRead = true
		case <-time.After(10 * time.Second):
		}
	}
	f.Fake.Close()
	return errors.New("thread 9 would not detach")
}

// TestTakeDetachesBesideTheSymbolizing: the detach (which may stop every
// thread again) runs while the objects' symbols are read, and its error
// is still reported.
func TestTakeDetachesBesideTheSymbolizing(t *testing.T) {
	f := &slowDetach{Fake: newFake(), probe: &memoryProbe{read: make(chan struct{}, 1)}}
	f.ImageSet = images.NewSet([]*images.Image{{Path: "[vdso]", Start: 0x1000, Limit: 0x2000, Format: images.FormatELF, Memory: f.probe}})
	snap, err := Take(Config{PID: 42, Attach: func(int, target.Options) (target.Target, error) { return f, nil }})
	if err != nil {
		t.Fatal(err)
	}
	if !f.sawRead {
		t.Error("the detach ended before any symbol was read")
	}
	if !slices.Contains(snap.Missing, "detach: thread 9 would not detach") {
		t.Errorf("Missing = %q, want the detach's error", snap.Missing)
	}
}

// countingWriter counts the writes made to it.
type countingWriter struct {
	bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

// TestWriteTextWritesInBlocks: the text of a snapshot of a few threads
// reaches its writer in one write, not one per line (each a system call
// to a pipe or terminal), and reads as when written line by line.
func TestWriteTextWritesInBlocks(t *testing.T) {
	s := &Snapshot{PID: 7, Executable: "/bin/app", StoppedNS: 41500}
	for tid := uint64(7); tid < 12; tid++ {
		th := Thread{TID: tid, Name: "app"}
		for i := range 8 {
			th.Frames = append(th.Frames, Frame{Address: fmt.Sprintf("%#x", 0x1000+i), Image: "app", Function: "f", Offset: uint64(i)})
		}
		s.Threads = append(s.Threads, th)
	}
	var w countingWriter
	s.WriteText(&w)
	if lines := strings.Count(w.String(), "\n"); lines != 1+5*9 || w.writes != 1 {
		t.Errorf("%d lines in %d writes, want 46 lines in one write", lines, w.writes)
	}
}

// imagesByWalk is a target that walks copies (target.CopyWalker) whose
// Images returns before until the copies are walked, after (or afterErr)
// from then on, counting the calls made after the walk.
type imagesByWalk struct {
	*targettest.Fake
	before, after *images.Set
	afterErr      error
	walked        bool
	callsAfter    int
}

func (t *imagesByWalk) Images() (*images.Set, error) {
	if t.walked {
		t.callsAfter++
		return t.after, t.afterErr
	}
	return t.before, nil
}

func (t *imagesByWalk) WalkCopies([]target.Capture) { t.walked = true }

// TestTakeNamesFramesWithTheImagesAfterTheWalk: frames are named from the
// images read once the addresses are known, not from a set read before:
// an object mapped since, and one replaced by another at the same
// addresses (which the set read before covers, with a build ID), both
// take the object mapped when the copies were walked. The set read
// before serves only when the process is gone by then.
func TestTakeNamesFramesWithTheImagesAfterTheWalk(t *testing.T) {
	libx := &images.Image{Path: "/nonexistent/libx.so", Start: 0x1000, Limit: 0x2000, BuildID: "ab12"}
	liby := &images.Image{Path: "/nonexistent/liby.so", Start: 0x5000, Limit: 0x6000, BuildID: "cd34"}
	libz := &images.Image{Path: "/nonexistent/libz.so", Start: 0x1000, Limit: 0x2000, BuildID: "ef56"}
	for _, tc := range []struct {
		name          string
		before, after *images.Set
		afterErr      error
		pcs           []uint64
		want          []string // each frame's image
	}{
		{"unchanged", images.NewSet([]*images.Image{libx}), images.NewSet([]*images.Image{libx}), nil,
			[]uint64{0x1010, 0x1020}, []string{"libx.so", "libx.so"}},
		{"mapped since", images.NewSet([]*images.Image{libx}), images.NewSet([]*images.Image{libx, liby}), nil,
			[]uint64{0x1010, 0x5020}, []string{"libx.so", "liby.so"}},
		{"replaced at the same addresses", images.NewSet([]*images.Image{libx}), images.NewSet([]*images.Image{libz}), nil,
			[]uint64{0x1010, 0x1020}, []string{"libz.so", "libz.so"}},
		{"exited since", images.NewSet([]*images.Image{libx}), nil, target.ErrExited,
			[]uint64{0x1010, 0x1020}, []string{"libx.so", "libx.so"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			f.Snapshot = []target.Capture{{Thread: 1, PCs: tc.pcs}}
			tg := &imagesByWalk{Fake: f, before: tc.before, after: tc.after, afterErr: tc.afterErr}
			snap, err := Take(Config{PID: 42, Attach: func(int, target.Options) (target.Target, error) { return tg, nil }})
			if err != nil {
				t.Fatal(err)
			}
			if tg.callsAfter != 1 {
				t.Errorf("Images called %d times after the walk, want once", tg.callsAfter)
			}
			if len(snap.Missing) != 0 {
				t.Errorf("missing %q, want nothing", snap.Missing)
			}
			var got []string
			for _, fr := range snap.Threads[0].Frames {
				got = append(got, fr.Image)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("frames' images %q, want %q", got, tc.want)
			}
		})
	}
}

// detachingTarget is a fake that can let its threads go at the capture
// (CaptureAllAndDetach), counting which capture Take asks for.
type detachingTarget struct {
	*targettest.Fake
	all, detaching int
}

func (f *detachingTarget) CaptureAll(dst []target.Capture) ([]target.Capture, error) {
	f.all++
	return f.Fake.CaptureAll(dst)
}

func (f *detachingTarget) CaptureAllAndDetach(dst []target.Capture) ([]target.Capture, error) {
	f.detaching++
	return f.Fake.CaptureAll(dst)
}

// TestTakeDetachesAtTheCapture: a backend that can detach every thread
// from the stop of its capture is asked to, so that the detach at Close
// does not stop the threads a second time.
func TestTakeDetachesAtTheCapture(t *testing.T) {
	f := &detachingTarget{Fake: newFake()}
	snap, err := Take(Config{PID: 42, Attach: func(int, target.Options) (target.Target, error) { return f, nil }})
	if err != nil {
		t.Fatal(err)
	}
	if f.detaching != 1 || f.all != 0 {
		t.Errorf("CaptureAllAndDetach called %d times and CaptureAll %d, want 1 and 0", f.detaching, f.all)
	}
	if len(snap.Threads) != 4 || len(snap.Threads[0].Frames) != 3 {
		t.Errorf("snapshot = %+v", snap)
	}
}
