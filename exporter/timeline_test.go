package exporter

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/exporter/speedscope"
	"github.com/macprof/macprof/profile"
)

// readSpeedscope writes w as speedscope's format and reads it back.
func readSpeedscope(t *testing.T, w *profile.Window, opts Options) *speedscope.File {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, FormatSpeedscope, w, newCache(), opts); err != nil {
		t.Fatal(err)
	}
	var f speedscope.File
	if err := json.Unmarshal(buf.Bytes(), &f); err != nil {
		t.Fatalf("%v\n%s", err, buf.Bytes())
	}
	return &f
}

// busy is one stretch of a speedscope profile: a stack (its frame names,
// root first, joined by ";"; "" for idle time) and how long.
type busy struct {
	stack string
	d     time.Duration
}

// stretches reads a profile's samples and weights back as stretches.
func stretches(f *speedscope.File, p speedscope.Profile) []busy {
	var out []busy
	for i, st := range p.Samples {
		var names []string
		for _, fr := range st {
			names = append(names, f.Shared.Frames[fr].Name)
		}
		out = append(out, busy{strings.Join(names, ";"), time.Duration(p.Weights[i])})
	}
	return out
}

// TestSpeedscopeTimelinePerThread: one sampled profile per thread, named
// after it (and its process, as the window has two), its samples in time
// order whatever the order counted, named as in folded stacks, weighing
// their periods, with the time the thread ran nothing between them as idle
// (empty) samples; the weights of a thread's samples add up to its sample
// count, and every profile spans the window.
func TestSpeedscopeTimelinePerThread(t *testing.T) {
	tw := newTestWindow(t, profile.ModeCPU)
	w := tw.w
	ms := func(d int64) int64 { return w.Start.Add(time.Duration(d) * time.Millisecond).UnixNano() }
	// Samples (see newTestWindow): 0 and 3 and 5 are thread 11's, 1 is
	// 12's, 4 is 14's, 6 is 21's (pid 1002); 2 (thread 13) is left out.
	w.Samples[0].Count, w.Samples[3].Count, w.Samples[5].Count = 3, 1, 1
	w.Samples[1].Count, w.Samples[4].Count, w.Samples[6].Count = 1, 2, 1
	w.Samples[2].Count = 0
	w.Timeline = []profile.TimedSample{
		{Time: ms(500), Sample: 0, Count: 2}, // thread 11, 480-500 ms
		{Time: ms(100), Sample: 3, Count: 1}, // thread 11, 90-100 ms: earlier, counted later
		{Time: ms(1000), Sample: 1, Count: 1},
		{Time: ms(510), Sample: 0, Count: 1},  // right after the first
		{Time: ms(1995), Sample: 5, Count: 1}, // truncated stack
		{Time: ms(20), Sample: 4, Count: 2},   // thread 14 from the start
		{Time: ms(700), Sample: 6, Count: 1},
	}
	f := readSpeedscope(t, w, Options{})
	if f.Schema != speedscope.Schema {
		t.Errorf("$schema %q", f.Schema)
	}
	if err := f.Check(); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range f.Profiles {
		names = append(names, p.Name)
		if p.Type != "sampled" || p.Unit != "nanoseconds" || p.StartValue != 0 || p.EndValue != int64(2*time.Second) {
			t.Errorf("%s: type %q unit %q from %d to %d, want sampled nanoseconds from 0 to 2 s", p.Name, p.Type, p.Unit, p.StartValue, p.EndValue)
		}
	}
	wantNames := []string{"pid 1001 (" + exeBase(w, 0) + "): worker (tid 11)", "pid 1001 (" + exeBase(w, 0) + "): worker (tid 12)",
		"pid 1001 (" + exeBase(w, 0) + "): io (tid 14)", "pid 1002 (" + exeBase(w, 1) + "): main (tid 21)"}
	if strings.Join(names, "\n") != strings.Join(wantNames, "\n") {
		t.Fatalf("profiles\n%s\nwant\n%s", strings.Join(names, "\n"), strings.Join(wantNames, "\n"))
	}
	if f.ActiveProfileIndex != 0 {
		t.Errorf("opens on profile %d, want 0 (thread 11, the busiest)", f.ActiveProfileIndex)
	}
	folded := func(i int) string { // sample i's stack as folded stacks name it
		fr, err := sampleFrames(w, mustResolver(t, w), Options{}, w.Samples[i], nil)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(fr, ";")
	}
	ms10 := 10 * time.Millisecond
	want := []busy{
		{"", 90 * time.Millisecond}, {folded(3), ms10},
		{"", 380 * time.Millisecond}, {folded(0), 2 * ms10}, {folded(0), ms10},
		{"", 1475 * time.Millisecond}, {folded(5), ms10},
		{"", 5 * time.Millisecond},
	}
	got := stretches(f, f.Profiles[0])
	if len(got) != len(want) {
		t.Fatalf("thread 11:\n got %v\nwant %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("thread 11 stretch %d: got %v, want %v", i, got[i], want[i])
		}
	}
	if !strings.Contains(folded(5), TruncatedFrame) || !strings.HasSuffix(folded(0), "fixture.LeafWork") {
		t.Errorf("frames not named as folded stacks name them: %q, %q", folded(0), folded(5))
	}
	var fb bytes.Buffer
	if err := Write(&fb, FormatFolded, w, newCache(), Options{}); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 3, 5} {
		if !strings.Contains(fb.String(), folded(i)+" ") {
			t.Errorf("the folded output has no stack %q:\n%s", folded(i), fb.String())
		}
	}
	// Every thread's samples weigh its count of periods.
	for i, p := range f.Profiles {
		var busyNs int64
		for j, st := range p.Samples {
			if len(st) > 0 {
				busyNs += p.Weights[j]
			}
		}
		wantNs := []int64{5, 1, 2, 1}[i] * int64(w.Period)
		if busyNs != wantNs {
			t.Errorf("%s: samples weigh %d ns, want %d (its samples' periods)", p.Name, busyNs, wantNs)
		}
	}
	// Thread 14's first sample started with the window: no idle time first.
	if got := stretches(f, f.Profiles[2]); got[0].stack == "" {
		t.Errorf("thread 14 starts idle: %v", got)
	}
}

// TestSpeedscopeSamplesBeforeTheWindow: kernel samples taken before the
// window started (a command's events open at its exec) move the profiles'
// start back rather than being cut.
func TestSpeedscopeSamplesBeforeTheWindow(t *testing.T) {
	tw := newTestWindow(t, profile.ModeCPU)
	w := tw.w
	w.Samples = w.Samples[:1]
	w.Samples[0].Count = 2
	w.Timeline = []profile.TimedSample{{Time: w.Start.Add(-5 * time.Millisecond).UnixNano(), Sample: 0, Count: 1}, {Time: w.Start.Add(5 * time.Millisecond).UnixNano(), Sample: 0, Count: 1}}
	f := readSpeedscope(t, w, Options{})
	p := f.Profiles[0]
	if p.EndValue != int64(2*time.Second+15*time.Millisecond) || p.Weights[0] != int64(10*time.Millisecond) || len(p.Samples[0]) == 0 {
		t.Errorf("end %d, first sample %v weighs %d: want the profile to start with the first sample and span 2.015 s", p.EndValue, p.Samples[0], p.Weights[0])
	}
}

// TestSpeedscopeWithoutTimeline: a window without a timeline still gives a
// valid file, each thread's samples end to end, and says they are in no
// time order.
func TestSpeedscopeWithoutTimeline(t *testing.T) {
	tw := newTestWindow(t, profile.ModeCPU)
	f := readSpeedscope(t, tw.w, Options{Title: "t"})
	if err := f.Check(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.Name, "no time order") {
		t.Errorf("file named %q, want it to say the samples are in no time order", f.Name)
	}
	var total int64
	for _, p := range f.Profiles {
		total += p.EndValue
	}
	if want := tw.w.SampleCount() * int64(tw.w.Period); total != want {
		t.Errorf("profiles weigh %d ns, want %d", total, want)
	}
}

func mustResolver(t *testing.T, w *profile.Window) *resolver {
	t.Helper()
	r, err := newResolver(w, newCache(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func exeBase(w *profile.Window, i int) string { return filepath.Base(w.Processes[i].Executable) }
