package exporter

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/symcache"
	"github.com/macprof/macprof/unwind"
)

// TestAfterSampleFrame: the frames a walk read after the sample
// (unwind.AfterSampleMark before them) sit above a [read after sample]
// frame in folded stacks, the SVG flame graph and pprof.
func TestAfterSampleFrame(t *testing.T) {
	w := &profile.Window{
		Period:    10 * time.Millisecond,
		Processes: []profile.Process{{PID: 1}},
		Stacks:    []profile.Stack{{PCs: []uint64{0x1000, 0x2000, unwind.AfterSampleMark, 0x3000}}},
		Samples:   []profile.Sample{{Stack: 0, PID: 1, Thread: 2, Count: 3}},
	}
	c := symcache.New(symcache.Options{})
	var b bytes.Buffer
	if err := Write(&b, FormatFolded, w, c, Options{}); err != nil {
		t.Fatal(err)
	}
	if want := "0x2fff;" + AfterSampleFrame + ";0x1fff;0x1000 3\n"; b.String() != want {
		t.Errorf("folded %q, want %q", b.String(), want)
	}
	b.Reset()
	if err := Write(&b, FormatSVG, w, c, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), AfterSampleFrame) {
		t.Errorf("the SVG names no %s frame", AfterSampleFrame)
	}
	p, err := Profile(w, c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range p.Sample[0].Location {
		if len(l.Line) == 1 {
			names = append(names, l.Line[0].Function.Name)
		} else {
			names = append(names, "")
		}
	}
	if len(names) != 4 || names[2] != AfterSampleFrame || names[0] != "" || names[3] != "" {
		t.Errorf("pprof frames %q, want the third %s", names, AfterSampleFrame)
	}
	// App-only: the frames outside the application collapse around it.
	b.Reset()
	if err := Write(&b, FormatFolded, w, c, Options{AppOnly: &AppFilter{}}); err != nil {
		t.Fatal(err)
	}
	if want := SystemFrame + ";" + AfterSampleFrame + ";" + SystemFrame + " 3\n"; b.String() != want {
		t.Errorf("app-only folded %q, want %q", b.String(), want)
	}
}
