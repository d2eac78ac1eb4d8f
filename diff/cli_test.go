package diff

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	pprof "github.com/google/pprof/profile"

	"github.com/macprof/macprof/internal/testprog"
)

// macprof returns the path of a macprof binary built for this test run.
func macprof(t *testing.T) string {
	t.Helper()
	return testprog.BuildPkg(t, "github.com/macprof/macprof/cmd/macprof")
}

// runDiff runs `macprof diff args...` and returns its exit status, stdout
// and stderr.
func runDiff(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(macprof(t), append([]string{"diff"}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errb.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errb.String()
	}
	t.Fatal(err)
	return 0, "", ""
}

// synthetic returns a gzipped pprof profile of kind ("cpu", "wall") with
// one sample per count, on a stack of functions main and leaf.
func synthetic(t testing.TB, kind string, counts map[string]int64) []byte {
	t.Helper()
	p := &pprof.Profile{
		SampleType: []*pprof.ValueType{{Type: "samples", Unit: "count"}, {Type: kind, Unit: "nanoseconds"}},
		PeriodType: &pprof.ValueType{Type: kind, Unit: "nanoseconds"},
		Period:     10101010,
	}
	mainFn := &pprof.Function{ID: 1, Name: "main", Filename: "main.go"}
	mainLoc := &pprof.Location{ID: 1, Line: []pprof.Line{{Function: mainFn}}}
	p.Function, p.Location = []*pprof.Function{mainFn}, []*pprof.Location{mainLoc}
	for _, leaf := range sortedKeys(counts) {
		fn := &pprof.Function{ID: uint64(len(p.Function) + 1), Name: leaf, Filename: "main.go"}
		loc := &pprof.Location{ID: uint64(len(p.Location) + 1), Line: []pprof.Line{{Function: fn}}}
		p.Function, p.Location = append(p.Function, fn), append(p.Location, loc)
		p.Sample = append(p.Sample, &pprof.Sample{Location: []*pprof.Location{loc, mainLoc}, Value: []int64{counts[leaf], counts[leaf] * p.Period}})
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func sortedKeys(m map[string]int64) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	for i := range k {
		for j := i + 1; j < len(k); j++ {
			if k[j] < k[i] {
				k[i], k[j] = k[j], k[i]
			}
		}
	}
	return k
}

// TestBadInput: every input or usage error exits 2 with one line on
// stderr, never a panic.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	file := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cpu := synthetic(t, "cpu", map[string]int64{"a": 60, "b": 40})
	good := file("good.pb.gz", cpu)
	var emptyProfile bytes.Buffer
	if err := (&pprof.Profile{SampleType: []*pprof.ValueType{{Type: "samples", Unit: "count"}}}).Write(&emptyProfile); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("not a protobuf, zipped"))
	zw.Close()
	emptyDir := t.TempDir()
	for _, c := range []struct {
		name string
		args []string
		want string // in the error line
	}{
		{"missing file", []string{good, filepath.Join(dir, "nope.pb.gz")}, "no such file"},
		{"truncated pprof", []string{good, file("trunc.pb.gz", cpu[:len(cpu)/2])}, "not a pprof profile"},
		{"text that is not folded", []string{good, file("notes.txt", []byte("hello world\n"))}, "as folded stacks"},
		{"binary that is not pprof", []string{file("rand.bin", []byte{0xff, 0x00, 0x13, 0x37, 0x00, 0x99, 0x42}), good}, "not a pprof profile"},
		{"gzip of garbage", []string{good, file("garbage.pb.gz", gz.Bytes())}, "not a pprof profile"},
		{"cpu vs wall", []string{good, file("wall.pb.gz", synthetic(t, "wall", map[string]int64{"a": 5}))}, "one sample type"},
		{"empty file", []string{good, file("empty.pb.gz", nil)}, "empty file"},
		{"profile without samples", []string{good, file("nosamples.pb.gz", emptyProfile.Bytes())}, "no samples"},
		{"folded with zero counts", []string{good, file("zero.folded", []byte("main;a 0\n"))}, "no samples"},
		{"diff profile as input", []string{good, file("neg.folded", []byte("main;a -3\n"))}, "bad count"},
		{"empty directory", []string{emptyDir, good}, "no profile"},
		{"pattern without match", []string{filepath.Join(dir, "*.nothing"), good}, "no file matches"},
		{"one argument", []string{good}, "give BASE and NEW"},
		{"three arguments", []string{good, good, good}, "give BASE and NEW"},
		{"bad threshold", []string{"--fail-on", "cum:5", good, good}, "--fail-on"},
		{"bad format", []string{"--format", "html", good, good}, "--format"},
		{"bad regex", []string{"--focus", "(", good, good}, "--focus"},
		{"bad load-following regex", []string{"--load-following", "(", good, good}, "--load-following"},
		{"bad output", []string{"-o", filepath.Join(dir, "x.png"), good, good}, "unknown output"},
		{"bad alpha", []string{"--alpha", "2", good, good}, "--alpha"},
		{"bad dispersion", []string{"--dispersion", "0.5", good, good}, "--dispersion"},
		{"bad run spread", []string{"--run-spread", "3", good, good}, "--run-spread"},
		{"unwritable output", []string{"-o", filepath.Join(dir, "no/such/dir.svg"), good, good}, "no such file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, _, stderr := runDiff(t, c.args...)
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			if st != 2 || strings.Contains(stderr, "panic") || !strings.Contains(stderr, c.want) ||
				(len(lines) != 1 && !strings.Contains(stderr, "Usage:")) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and one line with %q", st, stderr, c.want)
			}
		})
	}
	if st, _, stderr := runDiff(t, good, good); st != 0 {
		t.Errorf("a profile against itself: exit %d: %s", st, stderr)
	}
}

// gobenchBuild is testdata/gobench's test binary, built once per run.
var gobenchBuild struct {
	sync.Mutex
	path string
}

// gobench returns testdata/gobench's test binary, building it on first use.
func gobench(t *testing.T) string {
	t.Helper()
	gobenchBuild.Lock()
	defer gobenchBuild.Unlock()
	if gobenchBuild.path != "" {
		return gobenchBuild.path
	}
	src, err := filepath.Abs("testdata/gobench")
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "macprof-gobench-")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "gobench.test")
	build := exec.Command(testprog.GoTool(t), "test", "-c", "-o", bin, ".")
	build.Dir = src
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go test -c: %v\n%s", err, out)
	}
	gobenchBuild.path = bin
	return bin
}

// TestGoCPUProfile compares two `go test -cpuprofile` profiles of a tiny
// benchmark, inputs macprof did not write: the second run makes one
// function eight times as slow.
func TestGoCPUProfile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := gobench(t)
	prof := func(name, regress, count string) string {
		p := filepath.Join(dir, name)
		// A count of iterations, not a time: the profiles hold the same
		// CPU time (about 1.5 s and 2.6 s) however loaded the machine is (3 s
		// of wall time gave 20 samples each at load 65); half as much
		// (64 and 115 samples at load 8) left slowPart's rise at z 3.2,
		// short of the threshold.
		cmd := exec.Command(bin, "-test.run", "^$", "-test.bench", ".", "-test.benchtime", count, "-test.cpuprofile", p)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOBENCH_REGRESS="+regress)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("benchmark: %v\n%s", err, out)
		}
		return p
	}
	var base, slow string
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); base = prof("base.pprof", "", "5000x") }()
	go func() { defer wg.Done(); slow = prof("slow.pprof", "1", "2000x") }()
	wg.Wait()
	if t.Failed() {
		return
	}
	// Dispersion 1 (sampling alone): this test checks that Go's profiles
	// are read; bench/diffstat measures the statistics on them.
	st, out, stderr := runDiff(t, "--format", "json", "--dispersion", "1", base, slow)
	var r Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("exit %d, %v: %s %s", st, err, out, stderr)
	}
	t.Logf("samples %v vs %v; first: %+v", r.Base.Samples, r.New.Samples, r.Functions[0])
	if st != 1 || r.Kind != "cpu" || len(r.Regressions) == 0 || !strings.HasSuffix(r.Regressions[0], ".slowPart") {
		t.Errorf("exit %d, kind %q, regressions %v, want exit 1 and gobench.slowPart first\n%s", st, r.Kind, r.Regressions, stderr)
	}
}

// TestDirectoriesWithOtherFiles: `macprof diff DIR DIR` where each directory
// also holds `go test -bench` output compares the profiles, names the
// skipped files on stderr and in the report, and exits 0, not 2.
func TestDirectoriesWithOtherFiles(t *testing.T) {
	var dirs [2]string
	for i := range dirs {
		dirs[i] = t.TempDir()
		if err := os.WriteFile(filepath.Join(dirs[i], "cpu.out"), synthetic(t, "cpu", map[string]int64{"a": 60, "b": 40}), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dirs[i], "bench.txt"), []byte("BenchmarkWork-2   \t    1375\t   1699851 ns/op\nPASS\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st, out, stderr := runDiff(t, "--format", "json", dirs[0], dirs[1])
	var r Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("exit %d, %v: %s", st, err, stderr)
	}
	if st != 0 || len(r.Base.Profiles) != 1 || len(r.Base.Skipped) != 1 || len(r.New.Skipped) != 1 ||
		strings.Count(stderr, "skipped, not a profile: ") != 2 || !strings.Contains(stderr, "bench.txt") {
		t.Errorf("exit %d, base %+v, new %+v, stderr:\n%s\nwant exit 0, one profile and bench.txt skipped a side", st, r.Base, r.New, stderr)
	}
}

// TestUnrelatedProfilesWarned: two profiles with no function in common
// but main (another program) are diffed with a warning on stderr; two of
// one program are not.
func TestUnrelatedProfilesWarned(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, counts map[string]int64) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, synthetic(t, "cpu", counts), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.pb.gz", map[string]int64{"alpha": 500, "beta": 500})
	a2 := write("a2.pb.gz", map[string]int64{"alpha": 480, "beta": 520})
	c := write("c.pb.gz", map[string]int64{"gamma": 500, "delta": 500})
	if _, _, stderr := runDiff(t, a, c); !strings.Contains(stderr, "are these profiles of one program?") {
		t.Errorf("profiles of two programs diffed without a warning:\n%s", stderr)
	}
	if _, _, stderr := runDiff(t, a, a2); strings.Contains(stderr, "warning") {
		t.Errorf("profiles of one program diffed with a warning:\n%s", stderr)
	}
}
