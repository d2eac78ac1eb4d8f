package profile

import (
	"errors"
	"fmt"
	"time"

	"github.com/macprof/macprof/images"
)

// CheckValid reports the first thing in w that exporters cannot take: a
// sample that names a stack w does not have, or a negative count. Exporters
// call it once instead of checking bounds sample by sample.
func (w *Window) CheckValid() error {
	if w == nil {
		return errors.New("profile: nil window")
	}
	for i, s := range w.Samples {
		if s.Stack < 0 || s.Stack >= len(w.Stacks) {
			return fmt.Errorf("profile: sample %d (thread %d) refers to stack %d of %d", i, s.Thread, s.Stack, len(w.Stacks))
		}
		if s.Count < 0 {
			return fmt.Errorf("profile: sample %d (thread %d) has count %d", i, s.Thread, s.Count)
		}
	}
	for i, t := range w.Timeline {
		if t.Sample < 0 || int(t.Sample) >= len(w.Samples) || t.Count < 0 {
			return fmt.Errorf("profile: timeline entry %d refers to sample %d of %d with count %d", i, t.Sample, len(w.Samples), t.Count)
		}
	}
	return nil
}

// Merge folds windows, oldest first, into one that spans them all. Every
// field is kept: samples, stacks and timelines are concatenated, missed counts and
// stats added, the stop-time distribution merged (its percentiles recomputed
// from the merged buckets), and each process listed once with the images it
// had last, and once more per image set its samples were taken under (Gen).
// A single window is returned as it is.
func Merge(ws []*Window) *Window {
	if len(ws) == 1 {
		return ws[0]
	}
	out := &Window{Missed: map[MissReason]int64{}}
	if len(ws) == 0 {
		return out
	}
	out.Start, out.End, out.Period, out.Mode = ws[0].Start, ws[len(ws)-1].End, ws[0].Period, ws[0].Mode
	procAt := map[int]int{}
	// A window numbers the image sets of its processes (Gen) on its own:
	// the merge numbers them again, one number per PID and set.
	type pidSet struct {
		pid int
		set *images.Set
	}
	gens := map[pidSet]int{}
	buckets := map[time.Duration]int64{}
	for _, w := range ws {
		renum := map[[2]int]int{}
		for _, p := range w.Processes {
			if p.Gen != 0 {
				k := pidSet{p.PID, p.Images}
				g, ok := gens[k]
				if !ok {
					g = len(gens) + 1
					gens[k] = g
					q := p
					q.Gen = g
					out.Processes = append(out.Processes, q)
				}
				renum[[2]int{p.PID, p.Gen}] = g
				continue
			}
			if i, ok := procAt[p.PID]; ok {
				out.Processes[i] = p
				continue
			}
			procAt[p.PID] = len(out.Processes)
			out.Processes = append(out.Processes, p)
		}
		for _, t := range w.Timeline {
			t.Sample += int32(len(out.Samples))
			out.Timeline = append(out.Timeline, t)
		}
		out.TimelineDropped += w.TimelineDropped
		base := len(out.Stacks)
		out.Stacks = append(out.Stacks, w.Stacks...)
		for _, s := range w.Samples {
			s.Stack += base
			if s.Gen != 0 {
				s.Gen = renum[[2]int{s.PID, s.Gen}] // 0 if the window has no such process
			}
			out.Samples = append(out.Samples, s)
		}
		for k, v := range w.Missed {
			out.Missed[k] += v
		}
		st := &out.Stats
		st.Ticks += w.Stats.Ticks
		st.MissedTicks += w.Stats.MissedTicks
		st.Captures += w.Stats.Captures
		st.WallDue += w.Stats.WallDue
		st.StoppedTotal += w.Stats.StoppedTotal
		st.ProfilerCPU += w.Stats.ProfilerCPU
		st.StoppedMax = max(st.StoppedMax, w.Stats.StoppedMax)
		st.StoppedP50 = max(st.StoppedP50, w.Stats.StoppedP50)
		st.StoppedP99 = max(st.StoppedP99, w.Stats.StoppedP99)
		for _, b := range w.Stats.StopBuckets {
			buckets[b.Low] += b.Count
		}
	}
	if len(buckets) > 0 {
		out.Stats.StopBuckets = make([]StopBucket, 0, len(buckets))
		for low, n := range buckets {
			out.Stats.StopBuckets = append(out.Stats.StopBuckets, StopBucket{Low: low, Count: n})
		}
		sortBuckets(out.Stats.StopBuckets)
		out.Stats.StoppedP50 = bucketQuantile(out.Stats.StopBuckets, 0.50, out.Stats.StoppedMax)
		out.Stats.StoppedP99 = bucketQuantile(out.Stats.StopBuckets, 0.99, out.Stats.StoppedMax)
	}
	return out
}
