// Package speedscope writes speedscope's file format
// (https://www.speedscope.app/file-format-schema.json): frames shared by
// every profile, and one sampled profile per timeline, whose samples and
// weights speedscope lays out in order so that its "Time Order" view shows
// when each timeline was busy. The types mirror the schema's, so that the
// code reads beside speedscope's src/lib/file-format-spec.ts.
package speedscope

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"
)

// Schema is the value of a file's "$schema", which speedscope checks.
const Schema = "https://www.speedscope.app/file-format-schema.json"

// File is a speedscope file (FileFormat.File).
type File struct {
	Schema             string    `json:"$schema"`
	Shared             Shared    `json:"shared"`
	Profiles           []Profile `json:"profiles"`
	Name               string    `json:"name,omitempty"`
	ActiveProfileIndex int       `json:"activeProfileIndex"`
	Exporter           string    `json:"exporter,omitempty"`
}

// Shared holds what the profiles share: their frames.
type Shared struct {
	Frames []Frame `json:"frames"`
}

// Frame is one function (FileFormat.Frame); samples refer to it by its
// index in Shared.Frames.
type Frame struct {
	Name string `json:"name"`
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
}

// Profile is a sampled profile (FileFormat.SampledProfile): Samples[i] is a
// stack of frame indices, root first, that lasted Weights[i], in Unit.
type Profile struct {
	Type       string  `json:"type"`
	Name       string  `json:"name"`
	Unit       string  `json:"unit"`
	StartValue int64   `json:"startValue"`
	EndValue   int64   `json:"endValue"`
	Samples    [][]int `json:"samples"`
	Weights    []int64 `json:"weights"`
}

// The values of Profile.Type and Profile.Unit this package writes.
const (
	TypeSampled     = "sampled"
	UnitNanoseconds = "nanoseconds"
)

// Frames interns frame names: each distinct name is one Frame.
type Frames struct {
	list  []Frame
	index map[string]int
}

// Index returns the index of the frame named name, adding it if new.
func (f *Frames) Index(name string) int {
	if i, ok := f.index[name]; ok {
		return i
	}
	if f.index == nil {
		f.index = map[string]int{}
	}
	f.list = append(f.list, Frame{Name: name})
	f.index[name] = len(f.list) - 1
	return len(f.list) - 1
}

// List returns the frames, in the order of their indices.
func (f *Frames) List() []Frame { return f.list }

// Sample is a stack (frame indices, root first; the slice is kept, not
// copied) that ran for Weight up to End, both measured from the timeline's
// start.
type Sample struct {
	End, Weight time.Duration
	Stack       []int
}

// Timeline is one thread's samples, in any order, made into a sampled
// profile by Profile.
type Timeline struct {
	Name    string
	Samples []Sample
}

// Profile returns the timeline as a sampled profile in nanoseconds spanning
// [0, end] (or up to its last sample, if later): samples in time order (by
// End; equal ones in the order added), and the time between them, when the
// thread ran no sample, as samples with an empty stack, which speedscope
// draws as gaps. A sample that would start before the previous one ended
// (their times are measured, their weights nominal) starts when it ended.
func (t *Timeline) Profile(end time.Duration) Profile {
	s := slices.Clone(t.Samples)
	slices.SortStableFunc(s, func(a, b Sample) int {
		switch {
		case a.End < b.End:
			return -1
		case a.End > b.End:
			return 1
		}
		return 0
	})
	p := Profile{Type: TypeSampled, Name: t.Name, Unit: UnitNanoseconds, Samples: make([][]int, 0, 2*len(s)+1), Weights: make([]int64, 0, 2*len(s)+1)}
	idle := []int{}
	var at time.Duration
	for _, x := range s {
		if x.Weight <= 0 {
			continue
		}
		if begin := x.End - x.Weight; begin > at {
			p.Samples = append(p.Samples, idle)
			p.Weights = append(p.Weights, int64(begin-at))
			at = begin
		}
		p.Samples = append(p.Samples, x.Stack)
		p.Weights = append(p.Weights, int64(x.Weight))
		at += x.Weight
	}
	if end > at {
		p.Samples = append(p.Samples, idle)
		p.Weights = append(p.Weights, int64(end-at))
		at = end
	}
	p.EndValue = int64(at)
	return p
}

// Write writes f as JSON, checking first that every sample names frames f
// has and has a positive weight, and that weights add up to each profile's
// span, so that speedscope does not refuse the file.
func Write(w io.Writer, f *File) error {
	if err := f.Check(); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	if err := json.NewEncoder(bw).Encode(f); err != nil {
		return fmt.Errorf("speedscope: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("speedscope: %w", err)
	}
	return nil
}

// Check reports the first thing in f that speedscope would refuse or draw
// wrong.
func (f *File) Check() error {
	if f.Schema != Schema {
		return fmt.Errorf("speedscope: $schema is %q, want %q", f.Schema, Schema)
	}
	for i, p := range f.Profiles {
		if p.Type != TypeSampled {
			return fmt.Errorf("speedscope: profile %d (%s) is of type %q, want %q", i, p.Name, p.Type, TypeSampled)
		}
		if len(p.Samples) != len(p.Weights) {
			return fmt.Errorf("speedscope: profile %d (%s) has %d samples and %d weights", i, p.Name, len(p.Samples), len(p.Weights))
		}
		var sum int64
		for j, st := range p.Samples {
			if p.Weights[j] <= 0 {
				return fmt.Errorf("speedscope: profile %d (%s) sample %d has weight %d", i, p.Name, j, p.Weights[j])
			}
			sum += p.Weights[j]
			for _, fr := range st {
				if fr < 0 || fr >= len(f.Shared.Frames) {
					return fmt.Errorf("speedscope: profile %d (%s) sample %d names frame %d of %d", i, p.Name, j, fr, len(f.Shared.Frames))
				}
			}
		}
		if sum != p.EndValue-p.StartValue {
			return fmt.Errorf("speedscope: profile %d (%s) weights add up to %d, its span is %d", i, p.Name, sum, p.EndValue-p.StartValue)
		}
	}
	return nil
}
