package diff

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	pprof "github.com/google/pprof/profile"

	"github.com/macprof/macprof/exporter/folded"
	"github.com/macprof/macprof/internal/safefile"
)

// Frame is one function in a call stack: its name and, where the profile
// has it, its source file.
type Frame struct {
	Name, File string
}

// Stack is one call stack, Frames from the root to the leaf, seen Count
// times.
type Stack struct {
	Frames []Frame
	Count  int64
}

// Profile is one input reduced to what the comparison reads.
type Profile struct {
	Path string
	// Kind is what a sample measures ("cpu", "wall", ...), from the pprof
	// period or sample type; "" for folded stacks, which do not say.
	Kind string
	// Samples is the sum of the stacks' counts.
	Samples int64
	// Period is the time one sample stands for, 0 when unknown.
	Period int64
	Stacks []Stack
}

// Expand turns each argument into profile paths: a directory gives the
// regular files in it that read as profiles, by content (a directory also
// holds `go test -bench` output, test binaries, logs), a pattern with *, ?
// or [ the files it matches, and anything else itself; each result is
// sorted so that runs are repeatable. Skipped lists, with the reason, each
// file of a directory that is not a profile. A file of a directory whose
// name says profile (.pb.gz, .pprof, .pb, .folded) is read and its error
// returned, so that a broken recording does not pass as a skip.
func Expand(args []string) (paths []string, skipped []string, err error) {
	for _, a := range args {
		st, err := os.Stat(a)
		switch {
		case err == nil && st.IsDir():
			ents, err := os.ReadDir(a)
			if err != nil {
				return nil, nil, err
			}
			n, ns := len(paths), len(skipped)
			for _, e := range ents {
				if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") {
					continue
				}
				p := filepath.Join(a, e.Name())
				if _, err := Load(p); err != nil {
					if namedProfile(e.Name()) {
						return nil, nil, err
					}
					reason := skipReason(err)
					if data, rerr := safefile.ReadFile(p, maxBenchOutput, false); rerr == nil && BenchIterations(data) != nil {
						reason = "go test -bench output"
					}
					skipped = append(skipped, fmt.Sprintf("%s (%s)", p, reason))
					continue
				}
				paths = append(paths, p)
			}
			if len(paths) == n {
				if len(skipped) > ns {
					return nil, nil, fmt.Errorf("%s: no profile in this directory; not profiles: %s", a, strings.Join(skipped[ns:], ", "))
				}
				return nil, nil, fmt.Errorf("%s: no profile in this directory", a)
			}
		case err != nil && strings.ContainsAny(a, "*?["):
			m, gerr := filepath.Glob(a)
			if gerr != nil {
				return nil, nil, fmt.Errorf("%s: %v", a, gerr)
			}
			if len(m) == 0 {
				return nil, nil, fmt.Errorf("%s: no file matches", a)
			}
			sort.Strings(m)
			paths = append(paths, m...)
		default:
			paths = append(paths, a)
		}
	}
	return paths, skipped, nil
}

// namedProfile reports a file name that says its content is a profile.
func namedProfile(name string) bool {
	for _, ext := range []string{".pb.gz", ".pprof", ".pb", ".folded"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

// skipReason shortens Load's error for a skipped file to its cause.
func skipReason(err error) string {
	s := err.Error()
	if i := strings.Index(s, ": "); i >= 0 {
		s = s[i+2:]
	}
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

// maxProfileBytes bounds a profile file: far above any profile of a real
// run (macprof's are kilobytes to a few megabytes), so that a huge file
// given by mistake is refused rather than read into memory.
const maxProfileBytes = 256 << 20

// Load reads one profile file; see Parse. A FIFO, device or directory is
// refused without being opened for reading, so that nothing waits on it.
func Load(path string) (*Profile, error) {
	data, err := safefile.ReadFile(path, maxProfileBytes, false)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%s: %v", path, pe.Err)
		}
		return nil, err
	}
	p, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	p.Path = path
	return p, nil
}

// Parse reads a pprof profile (gzipped or not, from macprof, Go's
// runtime/pprof or any other writer) or folded stacks. Text is read as
// folded stacks, anything else as pprof, so that an error names the format
// the input looked like. A profile with no samples is an error: a CI job
// that compares nothing should not pass.
func Parse(data []byte) (*Profile, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("empty file")
	}
	var p *Profile
	var err error
	if isText(data) {
		p, err = parseFolded(data)
	} else {
		p, err = parsePprof(data)
	}
	if err != nil {
		return nil, err
	}
	if p.Samples == 0 {
		return nil, errors.New("the profile has no samples")
	}
	return p, nil
}

// isText reports input that is valid UTF-8 without NUL bytes in its first
// 4 KiB: folded stacks, never a protobuf or gzip stream.
func isText(data []byte) bool {
	if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		return false
	}
	head := data[:min(len(data), 4096)]
	// A rune cut at the 4 KiB mark loses at most three bytes.
	for cut := 0; cut < 3 && !utf8.Valid(head) && len(data) > len(head); cut++ {
		head = head[:len(head)-1]
	}
	return utf8.Valid(head) && bytes.IndexByte(head, 0) < 0
}

func parseFolded(data []byte) (*Profile, error) {
	stacks, err := folded.Parse(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("not a pprof profile, and as folded stacks: %v", strings.TrimPrefix(err.Error(), "folded: "))
	}
	p := &Profile{Stacks: make([]Stack, 0, len(stacks))}
	for _, s := range stacks {
		if s.Count == 0 {
			continue
		}
		if p.Samples+s.Count < p.Samples {
			return nil, errors.New("folded stacks: counts overflow")
		}
		fr := make([]Frame, len(s.Frames))
		for i, f := range s.Frames {
			fr[i] = Frame{Name: f}
		}
		p.Stacks = append(p.Stacks, Stack{Frames: fr, Count: s.Count})
		p.Samples += s.Count
	}
	return p, nil
}

func parsePprof(data []byte) (*Profile, error) {
	pp, err := pprof.ParseData(data)
	if err != nil {
		return nil, fmt.Errorf("not a pprof profile or folded stacks: %v", err)
	}
	if len(pp.SampleType) == 0 {
		return nil, errors.New("pprof profile without sample types")
	}
	ci := countIndex(pp)
	p := &Profile{Kind: kind(pp), Period: pp.Period}
	if pp.PeriodType == nil || pp.PeriodType.Unit != "nanoseconds" {
		p.Period = 0
	}
	// Each location's frames once, and every stack's frames carved from
	// one array: samples share locations, and this is most of the work.
	byLoc := make(map[*pprof.Location][]Frame, len(pp.Location))
	frames := 0
	for _, s := range pp.Sample {
		for _, l := range s.Location {
			fr, ok := byLoc[l]
			if !ok {
				fr = appendLocation(nil, l)
				byLoc[l] = fr
			}
			frames += len(fr)
		}
	}
	arena := make([]Frame, 0, frames)
	p.Stacks = make([]Stack, 0, len(pp.Sample))
	for _, s := range pp.Sample {
		if ci >= len(s.Value) {
			return nil, errors.New("pprof sample with fewer values than sample types")
		}
		v := s.Value[ci]
		if v < 0 {
			return nil, errors.New("negative sample values: a diff profile cannot be compared again")
		}
		if v == 0 {
			continue
		}
		start := len(arena)
		for i := len(s.Location) - 1; i >= 0; i-- {
			arena = append(arena, byLoc[s.Location[i]]...)
		}
		fr := arena[start:len(arena):len(arena)]
		if len(fr) == 0 {
			fr = []Frame{{Name: "[no frames]"}}
		}
		if p.Samples+v < p.Samples {
			return nil, errors.New("pprof sample values overflow")
		}
		p.Stacks = append(p.Stacks, Stack{Frames: fr, Count: v})
		p.Samples += v
	}
	return p, nil
}

// appendLocation appends a location's frames, callers first: pprof lists a
// location's inlined functions innermost first.
func appendLocation(fr []Frame, loc *pprof.Location) []Frame {
	if loc == nil {
		return fr
	}
	if len(loc.Line) == 0 {
		// An unsymbolized address differs from build to build; its
		// object and offset are the best name it has.
		name := fmt.Sprintf("0x%x", loc.Address)
		if m := loc.Mapping; m != nil && m.File != "" && loc.Address >= m.Start {
			name = fmt.Sprintf("%s+0x%x", filepath.Base(m.File), loc.Address-m.Start+m.Offset)
		}
		return append(fr, Frame{Name: name})
	}
	for j := len(loc.Line) - 1; j >= 0; j-- {
		f := loc.Line[j].Function
		if f == nil || f.Name == "" {
			fr = append(fr, Frame{Name: fmt.Sprintf("0x%x", loc.Address)})
			continue
		}
		fr = append(fr, Frame{Name: f.Name, File: f.Filename})
	}
	return fr
}

// countIndex picks the sample value to count: "samples" (or a "count"
// unit) where the profile has it, since the sampling error is a count's,
// else the profile's default type, else the last.
func countIndex(p *pprof.Profile) int {
	for i, st := range p.SampleType {
		if st.Type == "samples" || st.Unit == "count" {
			return i
		}
	}
	for i, st := range p.SampleType {
		if st.Type == p.DefaultSampleType {
			return i
		}
	}
	return len(p.SampleType) - 1
}

// kind names what a profile's samples measure: the period type where it is
// set (Go and macprof write "cpu" or "wall"), else the first sample type
// that is not a plain count.
func kind(p *pprof.Profile) string {
	if p.PeriodType != nil && p.PeriodType.Type != "" {
		return p.PeriodType.Type
	}
	for _, st := range p.SampleType {
		if st.Type != "samples" {
			return st.Type
		}
	}
	return p.SampleType[0].Type
}
