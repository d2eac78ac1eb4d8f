package speedscope

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestProfileOrdersAndFillsGaps: samples added in any order come out by
// time, equal times in the order added, with idle (empty) samples for the
// time between them and up to the end; a sample measured to start before
// the previous one ended starts when it ended; the weights add up to the
// span.
func TestProfileOrdersAndFillsGaps(t *testing.T) {
	ms := time.Millisecond
	a, b, c := []int{0}, []int{0, 1}, []int{2}
	tl := Timeline{Name: "worker", Samples: []Sample{
		{End: 50 * ms, Weight: 10 * ms, Stack: b},
		{End: 20 * ms, Weight: 10 * ms, Stack: a},
		{End: 55 * ms, Weight: 10 * ms, Stack: c}, // overlaps b: starts at 50
		{End: 50 * ms, Weight: 0, Stack: c},       // weightless: left out
		{End: 30 * ms, Weight: 10 * ms, Stack: c}, // right after a
	}}
	p := tl.Profile(100 * ms)
	type s struct {
		stack []int
		w     time.Duration
	}
	var got []s
	for i := range p.Samples {
		got = append(got, s{p.Samples[i], time.Duration(p.Weights[i])})
	}
	want := []s{{[]int{}, 10 * ms}, {a, 10 * ms}, {c, 10 * ms}, {[]int{}, 10 * ms}, {b, 10 * ms}, {c, 10 * ms}, {[]int{}, 40 * ms}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if !equal(got[i].stack, want[i].stack) || got[i].w != want[i].w {
			t.Errorf("sample %d: %v, want %v", i, got[i], want[i])
		}
	}
	if p.Type != TypeSampled || p.Unit != UnitNanoseconds || p.Name != "worker" || p.StartValue != 0 || p.EndValue != int64(100*ms) {
		t.Errorf("profile %+v", p)
	}
	// A last sample past end extends the profile to it.
	if p := tl.Profile(40 * ms); p.EndValue != int64(60*ms) {
		t.Errorf("end %d, want the last sample's end, 60 ms", p.EndValue)
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestWriteIsTheSchemasFile: the JSON has the fields the schema requires,
// under its names, and frames are interned by name.
func TestWriteIsTheSchemasFile(t *testing.T) {
	var fr Frames
	main, work := fr.Index("main"), fr.Index("work")
	if fr.Index("main") != main || main == work {
		t.Fatalf("frames %v", fr.List())
	}
	tl := Timeline{Name: "t1", Samples: []Sample{{End: 10, Weight: 10, Stack: []int{main, work}}}}
	f := &File{Schema: Schema, Name: "run", Exporter: "macprof", Shared: Shared{Frames: fr.List()}, Profiles: []Profile{tl.Profile(20)}}
	var buf bytes.Buffer
	if err := Write(&buf, f); err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(buf.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"$schema", "shared", "profiles"} { // FileFormat.File's required fields
		if _, ok := raw[k]; !ok {
			t.Errorf("no %q in %s", k, buf.Bytes())
		}
	}
	p := raw["profiles"].([]any)[0].(map[string]any)
	for _, k := range []string{"endValue", "name", "samples", "startValue", "type", "unit", "weights"} { // SampledProfile's
		if _, ok := p[k]; !ok {
			t.Errorf("no %q in the profile: %s", k, buf.Bytes())
		}
	}
	frames := raw["shared"].(map[string]any)["frames"].([]any)
	if len(frames) != 2 || frames[1].(map[string]any)["name"] != "work" {
		t.Errorf("frames %v", frames)
	}
}

// TestCheckRefusesWhatSpeedscopeRefuses: a wrong schema, a frame index out
// of range, a weight that is not positive, mismatched lengths and weights
// that do not span the profile are errors naming the profile.
func TestCheckRefusesWhatSpeedscopeRefuses(t *testing.T) {
	good := func() *File {
		return &File{Schema: Schema, Shared: Shared{Frames: []Frame{{Name: "f"}}}, Profiles: []Profile{{
			Type: TypeSampled, Name: "p", Unit: UnitNanoseconds, EndValue: 3, Samples: [][]int{{0}, {}}, Weights: []int64{1, 2}}}}
	}
	if err := good().Check(); err != nil {
		t.Fatal(err)
	}
	for name, spoil := range map[string]func(f *File){
		"schema":   func(f *File) { f.Schema = "x" },
		"frame":    func(f *File) { f.Profiles[0].Samples[0] = []int{1} },
		"weight":   func(f *File) { f.Profiles[0].Weights[1] = 0 },
		"lengths":  func(f *File) { f.Profiles[0].Weights = f.Profiles[0].Weights[:1] },
		"span":     func(f *File) { f.Profiles[0].EndValue = 4 },
		"evented":  func(f *File) { f.Profiles[0].Type = "evented" },
		"negative": func(f *File) { f.Profiles[0].Samples[0] = []int{-1} },
	} {
		f := good()
		spoil(f)
		err := f.Check()
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if name != "schema" && !strings.Contains(err.Error(), "(p)") {
			t.Errorf("%s: %v does not name the profile", name, err)
		}
		if Write(&bytes.Buffer{}, f) == nil {
			t.Errorf("%s: Write wrote it", name)
		}
	}
}
