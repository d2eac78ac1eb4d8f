package exporter

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/symcache"
)

// TestThreadZeroIsNoThread: thread 0 of a window, the CPU time of threads
// that started and ended between two listings, is shown as no thread id:
// pprof gives it no thread_id label (as OTLP gives it no thread
// attribute), a speedscope timeline and a thread root frame name it
// GoneThreadsName, never "tid 0"; a thread of its own keeps its id.
func TestThreadZeroIsNoThread(t *testing.T) {
	w := &profile.Window{
		Period: 10 * time.Millisecond,
		Stacks: []profile.Stack{{Unsampled: true}},
		Samples: []profile.Sample{
			{Stack: 0, PID: 1, Thread: 0, Count: 3},
			{Stack: 0, PID: 1, Thread: 7, ThreadName: "worker", Count: 2},
			{Stack: 0, PID: 1, Thread: 8, Count: 1},
		},
	}
	c := symcache.New(symcache.Options{})
	p, err := Profile(w, c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	byTid := map[int64]int64{}
	for _, s := range p.Sample {
		tids := s.NumLabel[LabelThreadID]
		switch {
		case len(tids) == 0:
			byTid[-1] += s.Value[0]
		case len(tids) == 1:
			byTid[tids[0]] += s.Value[0]
		default:
			t.Errorf("a sample with thread ids %v", tids)
		}
	}
	if byTid[-1] != 3 || byTid[0] != 0 || byTid[7] != 2 || byTid[8] != 1 {
		t.Errorf("pprof samples by thread_id (-1: none) %v, want 3 without one, 2 on 7, 1 on 8", byTid)
	}

	var b bytes.Buffer
	if err := Write(&b, FormatSpeedscope, w, c, Options{}); err != nil {
		t.Fatal(err)
	}
	var f struct {
		Profiles []struct{ Name string }
	}
	if err := json.Unmarshal(b.Bytes(), &f); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, pr := range f.Profiles {
		names = append(names, pr.Name)
	}
	got := strings.Join(names, "|")
	for _, want := range []string{GoneThreadsName, "worker (tid 7)", "thread (tid 8)"} {
		if !strings.Contains(got, want) {
			t.Errorf("speedscope timelines %q, want one named %q", names, want)
		}
	}
	if strings.Contains(got, "tid 0") {
		t.Errorf("speedscope timelines %q: one says tid 0", names)
	}

	b.Reset()
	if err := Write(&b, FormatFolded, w, c, Options{ThreadRoot: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), GoneThreadsName+";") || strings.Contains(b.String(), "thread 0;") {
		t.Errorf("folded with thread roots:\n%s\nwant %s for thread 0", b.String(), GoneThreadsName)
	}
}
