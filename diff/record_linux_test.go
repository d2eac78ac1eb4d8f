package diff

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/macprof/macprof/internal/testprog"
)

// record records bin with args at 99 Hz into out, GOBENCH_REGRESS set to
// regress.
func record(t *testing.T, out, regress, bin string, args ...string) {
	t.Helper()
	args = append([]string{"record", "-q", "-F", "99", "-o", out, "--", bin}, args...)
	cmd := exec.Command(macprof(t), args...)
	cmd.Env = append(os.Environ(), "GOBENCH_REGRESS="+regress)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("macprof %s: %v\n%s", strings.Join(args, " "), err, b)
	}
}

// diffJSON runs macprof diff with JSON output on the given sides.
func diffJSON(t *testing.T, base, nw []string, extra ...string) (int, *Report, string) {
	t.Helper()
	args := append([]string{"--format", "json"}, extra...)
	for _, b := range base {
		args = append(args, "--base", b)
	}
	for _, n := range nw {
		args = append(args, "--new", n)
	}
	st, out, stderr := runDiff(t, args...)
	var r Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("exit %d, %v: %s", st, err, stderr)
	}
	return st, &r, stderr
}

func function(r *Report, name string) *Function {
	for i := range r.Functions {
		if r.Functions[i].Name == name {
			return &r.Functions[i]
		}
	}
	return &Function{}
}

// TestRegressionFound: testdata/gobench's benchmark recorded by macprof
// once a side, the second with slowPart eight times as slow, fails with
// slowPart named first, and the flame graph and the pprof diff name it.
// A count of iterations, not a time, fixes the CPU time of each recording
// (about 1.2 s and 2 s), so that a loaded machine gives as many samples as
// an idle one, only later; slowPart's share rises from about half to about
// nine tenths, against a noise bound of about 16 points. bench/diffstat measures false alarms and the power to find
// smaller changes.
func TestRegressionFound(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := gobench(t)
	base := []string{filepath.Join(dir, "base.pb.gz")}
	slow := []string{filepath.Join(dir, "slow.pb.gz")}
	args := []string{"-test.run", "^$", "-test.bench", "."}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); record(t, base[0], "", bin, append(args, "-test.benchtime", "4000x")...) }()
	go func() { defer wg.Done(); record(t, slow[0], "1", bin, append(args, "-test.benchtime", "1500x")...) }()
	wg.Wait()
	if t.Failed() {
		return
	}
	svg, pb := filepath.Join(dir, "diff.svg"), filepath.Join(dir, "diff.pb.gz")
	// Dispersion 1 (sampling alone): the recording and the outputs are
	// what this test checks; bench/diffstat measures the statistics.
	st, r, stderr := diffJSON(t, base, slow, "--dispersion", "1", "-o", svg, "-o", pb)
	f := function(r, "gobench.slowPart")
	t.Logf("samples %v vs %v; slowPart flat %.2f%% -> %.2f%% (%+.2fpp, noise ±%.2f, mde %.2f), cum %.2f%% -> %.2f%%; regressions %v",
		r.Base.Samples, r.New.Samples, f.Flat.Base, f.Flat.New, f.Flat.Delta, f.Flat.Noise, f.Flat.MDE, f.Cum.Base, f.Cum.New, r.Regressions)
	if st != 1 || len(r.Regressions) == 0 || r.Regressions[0] != "gobench.slowPart" ||
		!strings.HasPrefix(stderr, "macprof diff: regression: gobench.slowPart ") {
		t.Errorf("exit %d, regressions %v, stderr:\n%s\nwant exit 1 with gobench.slowPart first", st, r.Regressions, stderr)
	}
	if b, err := os.ReadFile(svg); err != nil || !strings.Contains(string(b), "gobench.slowPart (") {
		t.Errorf("diff.svg: %v, no gobench.slowPart frame", err)
	}
	out, err := exec.Command(testprog.GoTool(t), "tool", "pprof", "-top", pb).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "gobench.slowPart") {
		t.Errorf("go tool pprof -top diff.pb.gz: %v\n%s", err, out)
	}
}
