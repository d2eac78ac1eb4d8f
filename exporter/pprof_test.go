package exporter

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/macprof/macprof/profile"

	pprof "github.com/google/pprof/profile"
)

// names returns the function names of a pprof sample, innermost first,
// inlined frames included.
func sampleNames(s *pprof.Sample) []string {
	var out []string
	for _, l := range s.Location {
		if len(l.Line) == 0 {
			out = append(out, "?")
		}
		for _, ln := range l.Line {
			out = append(out, ln.Function.Name)
		}
	}
	return out
}

func TestProfileCPU(t *testing.T) {
	tw := newTestWindow(t, profile.ModeCPU)
	p, err := Profile(tw.w, newCache(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	checkProfile(t, tw, p)

	// Round trip through the wire format.
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if b := buf.Bytes(); len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("pprof output is not gzip-compressed: % x", b[:min(len(b), 4)])
	}
	q, err := pprof.Parse(&buf)
	if err != nil {
		t.Fatalf("pprof.Parse: %v", err)
	}
	checkProfile(t, tw, q)
}

func checkProfile(t *testing.T, tw *testWindow, p *pprof.Profile) {
	t.Helper()
	if got := []string{p.SampleType[0].Type + "/" + p.SampleType[0].Unit, p.SampleType[1].Type + "/" + p.SampleType[1].Unit}; !slices.Equal(got, []string{"samples/count", "cpu/nanoseconds"}) {
		t.Errorf("sample types %v", got)
	}
	if p.PeriodType.Type != "cpu" || p.PeriodType.Unit != "nanoseconds" || p.Period != 10e6 {
		t.Errorf("period %v %d", p.PeriodType, p.Period)
	}
	if p.TimeNanos != tw.w.Start.UnixNano() || p.DurationNanos != 2e9 {
		t.Errorf("time %d duration %d", p.TimeNanos, p.DurationNanos)
	}
	wantComments := []string{"macprof: missed thread gone before capture: 3", "macprof: missed tick late (the profiler ran late: busy, or not scheduled): 1"}
	if len(p.Comments) < 2 || !slices.Equal(p.Comments[:2], wantComments) {
		t.Errorf("comments %q, want prefix %q", p.Comments, wantComments)
	}
	// Seven samples with a positive count.
	if len(p.Sample) != 7 {
		t.Fatalf("%d samples, want 7", len(p.Sample))
	}
	type want struct {
		names  []string
		count  int64
		thread string
		tid    int64
		pid    int64
	}
	wants := []want{
		{[]string{tw.Leaf, tw.Middle, tw.Root}, 50, "worker", 11, 1001},
		{[]string{tw.Leaf, tw.Middle, tw.Root}, 30, "worker", 12, 1001},
		{[]string{tw.Middle, tw.Root}, 7, "", 13, 1001},
		{[]string{"?", tw.Middle, tw.Root}, 3, "worker", 11, 1001},
		{[]string{"inner", "outer", "other;name with<xml>&"}, 4, "io", 14, 1001},
		{[]string{tw.Leaf, TruncatedFrame}, 2, "worker", 11, 1001},
		{[]string{tw.Leaf, tw.Middle, tw.Root}, 5, "main", 21, 1002},
	}
	for i, w := range wants {
		s := p.Sample[i]
		if got := sampleNames(s); !slices.Equal(got, w.names) {
			t.Errorf("sample %d: frames %q, want %q", i, got, w.names)
		}
		if s.Value[0] != w.count || s.Value[1] != w.count*10e6 {
			t.Errorf("sample %d: values %v, want [%d %d]", i, s.Value, w.count, w.count*10e6)
		}
		if w.thread == "" {
			if len(s.Label["thread"]) != 0 {
				t.Errorf("sample %d: thread label %q on a thread without a name", i, s.Label["thread"])
			}
		} else if !slices.Equal(s.Label["thread"], []string{w.thread}) {
			t.Errorf("sample %d: thread label %q, want %q", i, s.Label["thread"], w.thread)
		}
		if !slices.Equal(s.NumLabel["thread_id"], []int64{w.tid}) || !slices.Equal(s.NumLabel["pid"], []int64{w.pid}) {
			t.Errorf("sample %d: numeric labels %v", i, s.NumLabel)
		}
	}

	// Addresses: the leaf PC as is, return addresses minus one.
	s0 := p.Sample[0]
	if a := []uint64{s0.Location[0].Address, s0.Location[1].Address, s0.Location[2].Address}; !slices.Equal(a, []uint64{tw.LeafPC, tw.MiddleRet - 1, tw.RootRet - 1}) {
		t.Errorf("addresses %#x", a)
	}
	// Process 1001 and 1002 share nothing: same addresses, different
	// mappings and locations.
	s6 := p.Sample[6]
	if s6.Location[0] == s0.Location[0] || s6.Location[0].Mapping == s0.Location[0].Mapping {
		t.Error("two processes share a location or mapping")
	}
	if s0.Location[0] != p.Sample[1].Location[0] {
		t.Error("the same address in one process has two locations")
	}
	// Mappings: the executable first for each process, then by address.
	exe := tw.w.Processes[0].Executable
	m0 := s0.Location[0].Mapping
	if m0 == nil || m0.File != exe || !m0.HasFunctions || m0 != p.Mapping[0] {
		t.Errorf("main mapping %+v, want %s first with functions", m0, exe)
	}
	if m0.Start == 0 || m0.Limit <= m0.Start {
		t.Errorf("mapping range [%#x, %#x)", m0.Start, m0.Limit)
	}
	if len(p.Mapping) != 3 {
		t.Errorf("%d mappings, want 3 (executable twice, fake library once)", len(p.Mapping))
	}
	var fake *pprof.Mapping
	for _, m := range p.Mapping {
		if m.File == fakeLib.Path {
			fake = m
		}
	}
	if fake == nil || fake.BuildID != fakeLib.BuildID || !fake.HasFunctions || !fake.HasInlineFrames || fake.Start != fakeLib.Start {
		t.Errorf("fake library mapping %+v", fake)
	}
	// An unknown address has no mapping and no lines.
	if u := p.Sample[3].Location[0]; u.Mapping != nil || len(u.Line) != 0 || u.Address != 0x10 {
		t.Errorf("unknown location %+v", u)
	}
	// Inlined frames: one location, innermost line first, with files and
	// lines.
	in := p.Sample[4].Location[0]
	if len(in.Line) != 2 || in.Line[0].Line != 10 || in.Line[1].Line != 20 || in.Line[0].Function.Filename != "a.c" {
		t.Errorf("inlined location %+v", in.Line)
	}
	// Functions are deduplicated.
	seen := map[string]int{}
	for _, f := range p.Function {
		seen[f.Name]++
	}
	for name, n := range seen {
		if n != 1 {
			t.Errorf("function %q appears %d times", name, n)
		}
	}
	if seen[tw.Leaf] != 1 {
		t.Errorf("no function %s", tw.Leaf)
	}
}

func TestProfileWall(t *testing.T) {
	tw := newTestWindow(t, profile.ModeWall)
	p, err := Profile(tw.w, newCache(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.SampleType[0].Type != "samples" || p.SampleType[1].Type != "wall" || p.SampleType[1].Unit != "nanoseconds" || p.PeriodType.Type != "wall" {
		t.Errorf("wall profile types %v %v", p.SampleType, p.PeriodType)
	}
}

func TestProfileErrors(t *testing.T) {
	tw := newTestWindow(t, profile.ModeCPU)
	if _, err := Profile(nil, newCache(), Options{}); err == nil {
		t.Error("nil window accepted")
	}
	if _, err := Profile(tw.w, nil, Options{}); err == nil {
		t.Error("nil cache accepted")
	}
	w := *tw.w
	w.Period = 0
	if _, err := Profile(&w, newCache(), Options{}); err == nil || !strings.Contains(err.Error(), "period") {
		t.Errorf("zero period: %v", err)
	}
	w = *tw.w
	w.Samples = []profile.Sample{{Stack: 99, PID: 1001, Count: 1}}
	if _, err := Profile(&w, newCache(), Options{}); err == nil || !strings.Contains(err.Error(), "stack 99") {
		t.Errorf("bad stack index: %v", err)
	}
	// An empty stack counts as a [no frames] pseudo frame in every format.
	w = *tw.w
	w.Stacks = []profile.Stack{{}}
	w.Samples = []profile.Sample{{Stack: 0, PID: 1001, Thread: 1, Count: 6}}
	p, err := Profile(&w, newCache(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sample) != 1 || !slices.Equal(sampleNames(p.Sample[0]), []string{NoFramesFrame}) || p.Sample[0].Value[0] != 6 {
		t.Errorf("empty stack: %v", sampleNames(p.Sample[0]))
	}
	var buf bytes.Buffer
	if err := Write(&buf, FormatFolded, &w, newCache(), Options{}); err != nil || buf.String() != "[no frames] 6\n" {
		t.Errorf("folded empty stack: %q, %v", buf.String(), err)
	}

	// A sample of a process the window does not list: addresses stay
	// unknown, the sample is kept.
	w = *tw.w
	w.Samples = []profile.Sample{{Stack: 0, PID: 4242, Thread: 1, Count: 1}}
	p, err = Profile(&w, newCache(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sample) != 1 || len(p.Mapping) != 0 || p.Sample[0].Location[0].Mapping != nil {
		t.Errorf("unknown process: %d samples, %d mappings", len(p.Sample), len(p.Mapping))
	}
}

// TestResolverOncePerAddress checks that each unique (process, address)
// becomes one location, however many stacks and samples share it.
func TestResolverOncePerAddress(t *testing.T) {
	tw := newTestWindow(t, profile.ModeCPU)
	r, err := newResolver(tw.w, newCache(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range tw.w.Samples {
		if _, err := r.stack(s); err != nil {
			t.Fatal(err)
		}
	}
	// Process 1001: leaf, midRet-1, rootRet-1, middle entry, 0x10, inner,
	// other = 7; process 1002: leaf, midRet-1, rootRet-1, middle entry = 4.
	if len(r.locs) != 11 {
		t.Errorf("%d locations, want 11", len(r.locs))
	}
}

// TestGoToolPprof checks that `go tool pprof -top` reads the file and
// lists the functions by their sample counts.
func TestGoToolPprof(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("this test needs the go command in PATH: %v", err)
	}
	tw := newTestWindow(t, profile.ModeCPU)
	path := filepath.Join(t.TempDir(), "cpu.pb.gz")
	if err := WriteFile(path, FormatPprof, tw.w, newCache(), Options{}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(gobin, "tool", "pprof", "-top", path)
	cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -top: %v\n%s", err, out)
	}
	text := string(out)
	// LeafWork is flat in 50+30+2+5 = 87 samples of 101, i.e. 870ms.
	var top string
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		if strings.Contains(line, "flat%") && i+1 < len(lines) {
			top = lines[i+1]
			break
		}
	}
	if !strings.Contains(top, "870ms") || !strings.HasSuffix(strings.TrimSpace(top), tw.Leaf) {
		t.Errorf("first row %q, want %s with 870ms flat\n%s", top, tw.Leaf, text)
	}
	for _, name := range []string{tw.Middle, tw.Root, "inner", "outer"} {
		if !strings.Contains(text, name) {
			t.Errorf("go tool pprof -top does not list %s:\n%s", name, text)
		}
	}
	if !strings.Contains(text, "Total samples = 1010ms") {
		t.Errorf("total is not 101 samples x 10ms:\n%s", text)
	}

	// The labels: `go tool pprof -tags` lists threads and processes.
	cmd = exec.Command(gobin, "tool", "pprof", "-tags", path)
	cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+t.TempDir())
	out, err = cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -tags: %v\n%s", err, out)
	}
	tags := strings.Join(strings.Fields(string(out)), " ")
	for _, want := range []string{
		// 50+30+3+2 samples of 10ms on threads named worker; thread 13 has
		// no name, so no thread label.
		"thread: Total 940ms of 1.01s", "850ms (84.16%): worker", "50ms ( 4.95%): main", "40ms ( 3.96%): io",
		"pid: Total 1.01s of 1.01s", "960ms (95.05%): 1001", "50ms ( 4.95%): 1002",
		"thread_id: Total 1.01s", "550ms (54.46%): 11", "70ms ( 6.93%): 13",
	} {
		if !strings.Contains(tags, want) {
			t.Errorf("go tool pprof -tags lacks %q:\n%s", want, out)
		}
	}
}

// TestProfileUnwindLabel: samples of stacks walked with unwind tables carry
// the label unwind=cfi, the others none, also for one thread's samples of
// both kinds.
func TestProfileUnwindLabel(t *testing.T) {
	tw := newTestWindow(t, profile.ModeCPU)
	w := tw.w
	cfiStack := len(w.Stacks)
	st := w.Stacks[w.Samples[0].Stack]
	st.CFI = true
	w.Stacks = append(w.Stacks, st)
	s := w.Samples[0]
	s.Stack = cfiStack
	w.Samples = append(w.Samples, s)
	p, err := Profile(w, newCache(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	withLabel := 0
	for _, s := range p.Sample {
		if got := s.Label[LabelUnwind]; len(got) > 0 {
			withLabel++
			if !slices.Equal(got, []string{"cfi"}) || s.Value[0] != w.Samples[len(w.Samples)-1].Count {
				t.Errorf("unwind label %q on a sample of %d", got, s.Value[0])
			}
		}
	}
	if withLabel != 1 {
		t.Errorf("%d samples labelled, want the one CFI stack's", withLabel)
	}
}
