package exporter

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/macprof/macprof/exporter/speedscope"
	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/symcache"
)

// writeSpeedscope writes the window's timeline (profile.Window.Timeline)
// as a speedscope file with one sampled profile per thread, its samples
// named as in the other formats, each weighing the periods it stands for,
// so that speedscope shows when each thread ran as well as where. The
// busiest thread is the one speedscope opens on. A window without a
// timeline (the sampler keeps one when asked: sampler.Config.Timeline) has
// each thread's samples laid end to end, in no time order, and says so in
// the file's name.
func writeSpeedscope(out io.Writer, w *profile.Window, c *symcache.Cache, opts Options) error {
	r, err := newResolver(w, c, opts.AppOnly)
	if err != nil {
		return err
	}
	timeline, timed := w.Timeline, len(w.Timeline) > 0 || w.SampleCount() == 0
	if !timed {
		timeline = make([]profile.TimedSample, 0, len(w.Samples))
		for i, s := range w.Samples {
			timeline = append(timeline, profile.TimedSample{Sample: int32(i), Count: int32(min(s.Count, 1<<31-1))})
		}
	}
	// Times are measured from the window's start, or from the start of
	// an earlier sample (kernel samples taken before sampling began).
	t0 := w.Start.UnixNano()
	for _, e := range w.Timeline {
		t0 = min(t0, e.Time-int64(e.Count)*int64(w.Period))
	}
	// A thread that renamed itself has a timeline per name, as its
	// samples have pprof thread labels, in the order of each name's first
	// sample (first).
	type threadKey struct {
		pid    int
		thread uint64
		name   string
	}
	threads := map[threadKey]*speedscope.Timeline{}
	first := map[threadKey]int64{}
	var keys []threadKey
	var frames speedscope.Frames
	stacks := make([][]int, len(w.Samples)) // by sample, made on first use
	var names []string
	pids := map[int]bool{}
	for _, s := range w.Samples {
		pids[s.PID] = true
	}
	for _, e := range timeline {
		s := w.Samples[e.Sample]
		if e.Count <= 0 || s.Count <= 0 {
			continue
		}
		if stacks[e.Sample] == nil {
			names, err = sampleFrames(w, r, Options{}, s, names[:0])
			if err != nil {
				return err
			}
			st := make([]int, len(names))
			for i, n := range names {
				st[i] = frames.Index(n)
			}
			stacks[e.Sample] = st
		}
		k := threadKey{s.PID, uint64(s.Thread), s.ThreadName}
		tl := threads[k]
		if tl == nil {
			tl = &speedscope.Timeline{Name: threadName(w, r, s, len(pids) > 1)}
			threads[k] = tl
			keys = append(keys, k)
			first[k] = e.Time
		}
		first[k] = min(first[k], e.Time)
		weight := time.Duration(e.Count) * w.Period
		end := time.Duration(e.Time - t0)
		if !timed {
			end = weight
			if n := len(tl.Samples); n > 0 {
				end += tl.Samples[n-1].End
			}
		}
		tl.Samples = append(tl.Samples, speedscope.Sample{End: end, Weight: weight, Stack: stacks[e.Sample]})
	}
	slices.SortStableFunc(keys, func(a, b threadKey) int {
		if a.pid != b.pid {
			return a.pid - b.pid
		}
		if a.thread != b.thread {
			return int(int64(a.thread) - int64(b.thread))
		}
		return cmp.Compare(first[a], first[b])
	})
	title := opts.Title
	if title == "" {
		title = defaultTitle(w, opts.Command)
	}
	if !timed {
		title += " (no timeline: samples in no time order)"
	}
	if w.TimelineDropped > 0 {
		title += " (timeline cut: " + strconv.FormatInt(w.TimelineDropped, 10) + " later samples left out)"
	}
	f := &speedscope.File{Schema: speedscope.Schema, Name: title, Exporter: "macprof"}
	end := time.Duration(w.End.UnixNano() - t0)
	if !timed {
		end = 0
	}
	busiest := int64(-1)
	for i, k := range keys {
		tl := threads[k]
		p := tl.Profile(end)
		f.Profiles = append(f.Profiles, p)
		if n := int64(len(tl.Samples)); n > busiest {
			busiest, f.ActiveProfileIndex = n, i
		}
	}
	f.Shared.Frames = frames.List()
	if f.Shared.Frames == nil {
		f.Shared.Frames = []speedscope.Frame{}
	}
	if f.Profiles == nil {
		f.Profiles = []speedscope.Profile{}
	}
	if err := speedscope.Write(out, f); err != nil {
		return fmt.Errorf("exporter: %w", err)
	}
	return nil
}

// threadName names a thread's timeline: its name (or "thread"), its id and,
// when the profile has several processes, its process.
func threadName(w *profile.Window, r *resolver, s profile.Sample, withProcess bool) string {
	name := s.ThreadName
	switch {
	case s.Thread == 0:
		name = GoneThreadsName
	case name == "":
		name = "thread"
	}
	if s.Thread != 0 {
		name += " (tid " + strconv.FormatUint(uint64(s.Thread), 10) + ")"
	}
	if withProcess {
		name = processFrame(w, r.proc(s.PID), s.PID) + ": " + name
	}
	return name
}
