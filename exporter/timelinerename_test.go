package exporter

import (
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/profile"
)

// TestSpeedscopeSplitsARenamedThreadByName: a thread that renamed itself
// has a timeline under each name, with the samples taken under it, in the
// order the names were first seen, as pprof's thread labels split it.
func TestSpeedscopeSplitsARenamedThreadByName(t *testing.T) {
	tw := newTestWindow(t, profile.ModeCPU)
	w := tw.w
	ms := func(d int64) int64 { return w.Start.Add(time.Duration(d) * time.Millisecond).UnixNano() }
	// Samples 0, 3 and 5 are thread 11's (see newTestWindow): 3 and 5
	// taken after it renamed itself worker2.
	w.Samples = []profile.Sample{w.Samples[0], w.Samples[3], w.Samples[5]}
	w.Samples[0].Count, w.Samples[1].Count, w.Samples[2].Count = 2, 1, 3
	w.Samples[1].ThreadName, w.Samples[2].ThreadName = "worker2", "worker2"
	w.Timeline = []profile.TimedSample{
		{Time: ms(900), Sample: 2, Count: 3},
		{Time: ms(100), Sample: 0, Count: 2},
		{Time: ms(500), Sample: 1, Count: 1},
	}
	f := readSpeedscope(t, w, Options{})
	if err := f.Check(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range f.Profiles {
		var busy int64
		for j, st := range p.Samples {
			if len(st) > 0 {
				busy += p.Weights[j]
			}
		}
		got = append(got, p.Name+" "+time.Duration(busy).String())
	}
	want := []string{"worker (tid 11) 20ms", "worker2 (tid 11) 40ms"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("profiles:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
