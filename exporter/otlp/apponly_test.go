package otlp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/exporter"
	"github.com/macprof/macprof/exporter/otlp"
	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/profile"
)

// TestBuildAppOnly: with AppOnly, the frames outside the executable's
// image collapse, run by run, into [system] locations.
func TestBuildAppOnly(t *testing.T) {
	app := &images.Image{Path: "/app/bin/prog", Format: images.FormatELF, Start: 0x400000, Limit: 0x500000}
	lib := &images.Image{Path: "/usr/lib/libc.so.6", Format: images.FormatELF, Start: 0x7f0000000000, Limit: 0x7f0000100000}
	w := &profile.Window{
		Period:    10 * time.Millisecond,
		Processes: []profile.Process{{PID: 1, Executable: app.Path, Images: images.NewSet([]*images.Image{app, lib})}},
		Stacks:    []profile.Stack{{PCs: []uint64{lib.Start + 0x10, lib.Start + 0x21, app.Start + 0x31, lib.Start + 0x41}}},
		Samples:   []profile.Sample{{Stack: 0, PID: 1, Thread: 2, Count: 3}},
	}
	req := build(t, w, otlp.BuildOptions{AppOnly: &exporter.AppFilter{}})
	d := req.GetDictionary()
	s := req.GetResourceProfiles()[0].GetScopeProfiles()[0].GetProfiles()[0].GetSamples()[0]
	var names []string
	for _, li := range d.GetStackTable()[s.GetStackIndex()].GetLocationIndices() {
		for _, ln := range d.GetLocationTable()[li].GetLines() {
			names = append(names, d.GetStringTable()[d.GetFunctionTable()[ln.GetFunctionIndex()].GetNameStrindex()])
		}
	}
	if got, want := strings.Join(names, ";"), "[system];prog+0x30;[system]"; got != want {
		t.Errorf("stack %q, want %q", got, want)
	}
}
