package profile

import (
	"fmt"
	"testing"
	"time"

	"github.com/macprof/macprof/target"
)

func TestCheckValid(t *testing.T) {
	ok := &Window{Stacks: []Stack{{PCs: []uint64{1}}}, Samples: []Sample{{Stack: 0, Count: 2}, {Stack: 0, Count: 0}}}
	if err := ok.CheckValid(); err != nil {
		t.Fatalf("valid window: %v", err)
	}
	for _, w := range []*Window{
		nil,
		{Stacks: []Stack{{}}, Samples: []Sample{{Stack: 1, Count: 1}}},
		{Stacks: []Stack{{}}, Samples: []Sample{{Stack: -1, Count: 1}}},
		{Stacks: []Stack{{}}, Samples: []Sample{{Stack: 0, Count: -1}}},
	} {
		if err := w.CheckValid(); err == nil {
			t.Errorf("%+v: no error", w)
		}
	}
}

func TestMergeKeepsEveryField(t *testing.T) {
	t0 := time.Unix(1000, 0)
	a := &Window{
		Start: t0, End: t0.Add(time.Second), Period: 10 * time.Millisecond, Mode: ModeWall,
		Processes: []Process{{PID: 1, Executable: "a"}, {PID: 2, Executable: "b"}},
		Stacks:    []Stack{{PCs: []uint64{1}}},
		Samples:   []Sample{{Stack: 0, PID: 1, Thread: 1, Count: 3}},
		Missed:    map[MissReason]int64{MissTickLate: 1},
		Stats: Stats{Ticks: 10, Captures: 10, StoppedMax: 40 * time.Microsecond, ProfilerCPU: time.Millisecond,
			StoppedP50: 10 * time.Microsecond, StoppedP99: 40 * time.Microsecond,
			StopBuckets: []StopBucket{{Low: 10 * time.Microsecond, Count: 9}, {Low: 40 * time.Microsecond, Count: 1}}},
	}
	b := &Window{
		Start: t0.Add(time.Second), End: t0.Add(2 * time.Second), Period: 10 * time.Millisecond, Mode: ModeWall,
		Processes: []Process{{PID: 1, Executable: "a2"}},
		Stacks:    []Stack{{PCs: []uint64{2}}, {PCs: []uint64{3}, Truncated: true}},
		Samples:   []Sample{{Stack: 1, PID: 1, Thread: 2, Count: 4}},
		Missed:    map[MissReason]int64{MissTickLate: 2, MissStopTimeout: 1},
		Stats: Stats{Ticks: 10, Captures: 30, StoppedMax: 30 * time.Microsecond,
			StoppedP50: 30 * time.Microsecond, StoppedP99: 30 * time.Microsecond,
			StopBuckets: []StopBucket{{Low: 30 * time.Microsecond, Count: 30}}},
	}
	m := Merge([]*Window{a, b})
	if err := m.CheckValid(); err != nil {
		t.Fatal(err)
	}
	if !m.Start.Equal(a.Start) || !m.End.Equal(b.End) || m.Mode != ModeWall || m.Period != a.Period {
		t.Errorf("span %v-%v mode %v period %v", m.Start, m.End, m.Mode, m.Period)
	}
	if got := fmt.Sprint(m.Processes); got != fmt.Sprint([]Process{{PID: 1, Executable: "a2"}, {PID: 2, Executable: "b"}}) {
		t.Errorf("processes %s: every process once, with its last images", got)
	}
	if len(m.Stacks) != 3 || m.Samples[1].Stack != 2 || !m.Stacks[m.Samples[1].Stack].Truncated || m.SampleCount() != 7 {
		t.Errorf("stacks %v samples %v", m.Stacks, m.Samples)
	}
	if m.Missed[MissTickLate] != 3 || m.Missed[MissStopTimeout] != 1 {
		t.Errorf("missed %v", m.Missed)
	}
	st := m.Stats
	if st.Ticks != 20 || st.Captures != 40 || st.StoppedMax != 40*time.Microsecond || st.ProfilerCPU != time.Millisecond {
		t.Errorf("stats %+v", st)
	}
	// 9 stops of 10 µs, 30 of 30 µs, 1 of 40 µs: the median is 30 µs, not
	// the larger of the two windows' medians' neighbours.
	if len(st.StopBuckets) != 3 || st.StoppedP50 != 30*time.Microsecond || st.StoppedP99 != 30*time.Microsecond {
		t.Errorf("stop distribution %+v, p50 %v p99 %v", st.StopBuckets, st.StoppedP50, st.StoppedP99)
	}
	if one := Merge([]*Window{a}); one != a {
		t.Error("a single window is not returned as it is")
	}
	if empty := Merge(nil); empty == nil || empty.Missed == nil {
		t.Error("Merge(nil) is not an empty window")
	}
}

func TestMissReasons(t *testing.T) {
	for err, want := range map[error]MissReason{
		fmt.Errorf("thread 3: %w", target.ErrThreadBlocked): MissThreadBlocked,
		fmt.Errorf("thread 3: %w", target.ErrStopTimeout):   MissStopTimeout,
		target.ErrNoSample: MissNoKernelSample,
		target.ErrNoThread: MissThreadGone,
	} {
		if got := MissReasonOf(err); got != want {
			t.Errorf("%v: %v, want %v", err, got, want)
		}
	}
	w := &Window{Missed: map[MissReason]int64{MissTickLate: 1, MissEmptyStack: 2, MissStopTimeout: 0}}
	if got := fmt.Sprint(w.MissReasons()); got != "[empty stack tick late (the profiler ran late: busy, or not scheduled)]" {
		t.Errorf("reasons %s", got)
	}
	if MissReason(200).String() != "unknown" {
		t.Error("an out-of-range reason has a name")
	}
}

func TestUnsampledCount(t *testing.T) {
	w := &Window{
		Stacks:  []Stack{{PCs: []uint64{1}}, {Unsampled: true}},
		Samples: []Sample{{Stack: 0, Count: 5}, {Stack: 1, Count: 2}, {Stack: 1, Thread: 3, Count: 4}},
	}
	if got := w.UnsampledCount(); got != 6 || w.SampleCount() != 11 {
		t.Errorf("UnsampledCount %d of %d, want 6 of 11", got, w.SampleCount())
	}
	if m := Merge([]*Window{w, w}); m.UnsampledCount() != 12 {
		t.Errorf("merged: UnsampledCount %d, want 12", m.UnsampledCount())
	}
}
