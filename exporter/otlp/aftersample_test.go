package otlp_test

import (
	"slices"
	"testing"
	"time"

	"github.com/macprof/macprof/exporter"
	"github.com/macprof/macprof/exporter/otlp"
	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/unwind"
)

// TestBuildAfterSampleFrame: the mark a walk puts before the frames it read
// after the sample becomes a location named [read after sample].
func TestBuildAfterSampleFrame(t *testing.T) {
	w := &profile.Window{
		Period:    10 * time.Millisecond,
		Processes: []profile.Process{{PID: 1}},
		Stacks:    []profile.Stack{{PCs: []uint64{0x1000, unwind.AfterSampleMark, 0x3000}}},
		Samples:   []profile.Sample{{Stack: 0, PID: 1, Thread: 2, Count: 3}},
	}
	req := build(t, w, otlp.BuildOptions{})
	d := req.GetDictionary()
	s := req.GetResourceProfiles()[0].GetScopeProfiles()[0].GetProfiles()[0].GetSamples()[0]
	locs := d.GetStackTable()[s.GetStackIndex()].GetLocationIndices()
	if len(locs) != 3 {
		t.Fatalf("stack of %d locations, want 3", len(locs))
	}
	lines := d.GetLocationTable()[locs[1]].GetLines()
	if len(lines) != 1 || d.GetStringTable()[d.GetFunctionTable()[lines[0].GetFunctionIndex()].GetNameStrindex()] != exporter.AfterSampleFrame {
		t.Errorf("second location's lines %v, want one named %s", lines, exporter.AfterSampleFrame)
	}
	// App-only: the frames outside the application collapse around it.
	req = build(t, w, otlp.BuildOptions{AppOnly: &exporter.AppFilter{}})
	d = req.GetDictionary()
	s = req.GetResourceProfiles()[0].GetScopeProfiles()[0].GetProfiles()[0].GetSamples()[0]
	var names []string
	for _, li := range d.GetStackTable()[s.GetStackIndex()].GetLocationIndices() {
		for _, ln := range d.GetLocationTable()[li].GetLines() {
			names = append(names, d.GetStringTable()[d.GetFunctionTable()[ln.GetFunctionIndex()].GetNameStrindex()])
		}
	}
	if want := []string{exporter.SystemFrame, exporter.AfterSampleFrame, exporter.SystemFrame}; !slices.Equal(names, want) {
		t.Errorf("app-only stack %q, want %q", names, want)
	}
}
