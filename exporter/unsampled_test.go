package exporter

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/symcache"
)

// TestUnsampledStackIsOneFrame: CPU time the sampler could not attribute
// to a stack (profile.Stack.Unsampled) is shown as one frame, [unsampled],
// in folded stacks and in pprof, not as a stack without frames.
func TestUnsampledStackIsOneFrame(t *testing.T) {
	w := &profile.Window{
		Period:  10 * time.Millisecond,
		Stacks:  []profile.Stack{{Unsampled: true}, {}},
		Samples: []profile.Sample{{Stack: 0, PID: 1, Thread: 2, Count: 3}, {Stack: 1, PID: 1, Thread: 2, Count: 1}},
	}
	var b bytes.Buffer
	if err := Write(&b, FormatFolded, w, symcache.New(symcache.Options{}), Options{}); err != nil {
		t.Fatal(err)
	}
	if want := profile.UnsampledFrame + " 3\n"; !strings.Contains(b.String(), want) || !strings.Contains(b.String(), NoFramesFrame+" 1\n") {
		t.Errorf("folded:\n%s\nwant a line %q and the stack without frames apart", b.String(), want)
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
	if names[profile.UnsampledFrame] != 3 || names[NoFramesFrame] != 1 {
		t.Errorf("pprof frames %v, want 3 on %s", names, profile.UnsampledFrame)
	}
}
