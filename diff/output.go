package diff

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	pprof "github.com/google/pprof/profile"

	"github.com/macprof/macprof/exporter/flamegraph"
)

// OutputFor picks what -o writes from a file name: a differential flame
// graph, a pprof diff, or the report in one of its formats.
func OutputFor(path string) (string, error) {
	switch {
	case strings.HasSuffix(path, ".svg"):
		return "svg", nil
	case strings.HasSuffix(path, ".pb.gz"), strings.HasSuffix(path, ".pprof"), strings.HasSuffix(path, ".pb"):
		return "pprof", nil
	case strings.HasSuffix(path, ".md"):
		return string(Markdown), nil
	case strings.HasSuffix(path, ".json"):
		return string(JSON), nil
	case strings.HasSuffix(path, ".txt"):
		return string(Text), nil
	}
	return "", fmt.Errorf("-o %s: unknown output (.svg, .pb.gz, .pprof, .md, .json or .txt)", path)
}

// WriteOutput writes what OutputFor chose for path.
func (r *Report) WriteOutput(w io.Writer, kind string) error {
	switch kind {
	case "svg":
		return r.WriteSVG(w)
	case "pprof":
		return r.WritePprof(w)
	}
	return r.Write(w, Format(kind))
}

// tree merges one side's stacks into a flame graph tree.
func tree(ps []*Profile) *flamegraph.Tree {
	var t flamegraph.Tree
	var names []string
	for _, p := range ps {
		for _, s := range p.Stacks {
			names = names[:0]
			for _, f := range s.Frames {
				names = append(names, f.Name)
			}
			t.Add(names, s.Count)
		}
	}
	return &t
}

// WriteSVG writes a differential flame graph: widths from the new side,
// colours from each call path's change in share against the base.
func (r *Report) WriteSVG(w io.Writer) error {
	title := "macprof diff: " + r.Verdict()
	var period time.Duration
	if len(r.newProf) > 0 {
		period = time.Duration(r.newProf[0].Period)
	}
	return flamegraph.WriteDiffSVG(w, tree(r.baseProfs), tree(r.newProf), flamegraph.Options{Title: title, Period: period})
}

// WritePprof writes one pprof profile that `go tool pprof` reads as a diff,
// as its -diff_base makes one: the new side's samples, and the base's
// negated and labelled pprof::base=true. The base is scaled to the new
// side's total first (pprof's -normalize), so that profiles of different
// length compare by share.
func (r *Report) WritePprof(w io.Writer) error {
	var nb, nn int64
	for _, p := range r.baseProfs {
		nb += p.Samples
	}
	for _, p := range r.newProf {
		nn += p.Samples
	}
	out := &pprof.Profile{
		SampleType: []*pprof.ValueType{{Type: "samples", Unit: "count"}},
		Comments:   []string{"macprof diff: " + r.Verdict(), "base scaled to the new side's total"},
	}
	if r.Kind != "" {
		out.PeriodType = &pprof.ValueType{Type: r.Kind, Unit: "count"}
		out.Period = 1
	}
	funcs := make(map[Frame]*pprof.Location)
	loc := func(f Frame) *pprof.Location {
		k := key(f, r.keyed)
		if l, ok := funcs[k]; ok {
			return l
		}
		fn := &pprof.Function{ID: uint64(len(out.Function) + 1), Name: f.Name, SystemName: f.Name, Filename: f.File}
		out.Function = append(out.Function, fn)
		l := &pprof.Location{ID: uint64(len(out.Location) + 1), Line: []pprof.Line{{Function: fn}}}
		out.Location = append(out.Location, l)
		funcs[k] = l
		return l
	}
	add := func(ps []*Profile, scale float64, label map[string][]string) {
		for _, p := range ps {
			for _, s := range p.Stacks {
				v := int64(math.Round(float64(s.Count) * scale))
				if v == 0 {
					continue
				}
				locs := make([]*pprof.Location, len(s.Frames))
				for i, f := range s.Frames {
					locs[len(locs)-1-i] = loc(f)
				}
				out.Sample = append(out.Sample, &pprof.Sample{Location: locs, Value: []int64{v}, Label: label})
			}
		}
	}
	add(r.newProf, 1, nil)
	add(r.baseProfs, -float64(nn)/float64(nb), map[string][]string{"pprof::base": {"true"}})
	if err := out.CheckValid(); err != nil {
		return fmt.Errorf("diff: pprof: %w", err)
	}
	if err := out.Write(w); err != nil {
		return fmt.Errorf("diff: pprof: %w", err)
	}
	return nil
}
