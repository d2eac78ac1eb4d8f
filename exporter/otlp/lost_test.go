package otlp_test

import (
	"testing"
	"time"

	"github.com/macprof/macprof/exporter/otlp"
	"github.com/macprof/macprof/profile"
)

// TestBuildLostStack: a Lost stack becomes a stack of one location whose
// function names the reason.
func TestBuildLostStack(t *testing.T) {
	w := &profile.Window{
		Period:    10 * time.Millisecond,
		Processes: []profile.Process{{PID: 1}},
		Stacks:    []profile.Stack{{Lost: profile.LostBufferFull}},
		Samples:   []profile.Sample{{Stack: 0, PID: 1, Thread: 2, Count: 3}},
	}
	req := build(t, w, otlp.BuildOptions{})
	d := req.GetDictionary()
	s := req.GetResourceProfiles()[0].GetScopeProfiles()[0].GetProfiles()[0].GetSamples()[0]
	locs := d.GetStackTable()[s.GetStackIndex()].GetLocationIndices()
	if len(locs) != 1 {
		t.Fatalf("stack of %d locations, want 1", len(locs))
	}
	lines := d.GetLocationTable()[locs[0]].GetLines()
	if len(lines) != 1 || d.GetStringTable()[d.GetFunctionTable()[lines[0].GetFunctionIndex()].GetNameStrindex()] != "[lost: buffer full]" {
		t.Errorf("location lines %v, want one named [lost: buffer full]", lines)
	}
}
