package exporter

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/symcache"
)

// TestLostStackIsOneFrame: CPU time whose samples were lost
// (profile.Stack.Lost) is shown as one frame naming the reason, in folded
// stacks and in pprof, apart from every stack of the program's.
func TestLostStackIsOneFrame(t *testing.T) {
	w := &profile.Window{
		Period:  10 * time.Millisecond,
		Stacks:  []profile.Stack{{Lost: profile.LostBufferFull}, {Lost: profile.LostNoSample}, {}},
		Samples: []profile.Sample{{Stack: 0, PID: 1, Thread: 2, Count: 3}, {Stack: 1, PID: 1, Thread: 2, Count: 2}, {Stack: 2, PID: 1, Thread: 2, Count: 1}},
	}
	var b bytes.Buffer
	if err := Write(&b, FormatFolded, w, symcache.New(symcache.Options{}), Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"[lost: buffer full] 3\n", "[lost: no sample] 2\n", NoFramesFrame + " 1\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("folded:\n%s\nwant a line %q", b.String(), want)
		}
	}
	p, err := Profile(w, symcache.New(symcache.Options{}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]int64{}
	for _, s := range p.Sample {
		if len(s.Location) != 1 || len(s.Location[0].Line) != 1 {
			t.Fatalf("pprof sample with locations %v, want one pseudo frame", s.Location)
		}
		names[s.Location[0].Line[0].Function.Name] += s.Value[0]
	}
	if names["[lost: buffer full]"] != 3 || names["[lost: no sample]"] != 2 || names[NoFramesFrame] != 1 {
		t.Errorf("pprof frames %v, want 3 on [lost: buffer full], 2 on [lost: no sample]", names)
	}
}
