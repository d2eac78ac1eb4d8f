package ci

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/macprof/macprof/internal/testprog"
)

// benchSource is the Go benchmark package the test commits to a clone of
// this repository, twice: slowPart, a tenth of the time, is sixteen times
// as slow in the second (two thirds of the time).
const benchSource = `package ciwork

import "testing"

var sink uint64

//go:noinline
func spin(n int) uint64 {
	x := uint64(n)
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

//go:noinline
func fastPart() uint64 { return spin(100000) }

//go:noinline
func slowPart() uint64 {
	x := uint64(0)
	for i := 0; i < 12500*FACTOR; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

func BenchmarkWork(b *testing.B) {
	for b.Loop() {
		sink += fastPart() + slowPart()
	}
}
`

// TestProfileDiffScript runs deploy/ci/profile-diff.sh, the workflow's
// steps, on two commits of a clone of this repository: its HEAD with a
// benchmark package added, and a commit that makes one of the package's
// functions slower. The demo, the same at both, must pass; the benchmark
// must fail naming the slower function, with the markdown report, the
// flame graph and the skipped benchmark output in place. Recording needs
// ptrace permission: run as root (or with passwordless sudo), as CI does.
func TestProfileDiffScript(t *testing.T) {
	for _, tool := range []string{"git", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed to run the workflow's script: %v", tool, err)
		}
	}
	if os.Geteuid() != 0 {
		if _, err := exec.LookPath("sudo"); err != nil {
			t.Fatal("recording needs ptrace permission: run as root, or with sudo on PATH for the script's macprof record")
		}
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	macprof := testprog.BuildPkg(t, "github.com/macprof/macprof/cmd/macprof")
	dir := t.TempDir()
	clone := filepath.Join(dir, "repo")
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=test", "-c", "user.email=test@example.com"}, args...)...)
		cmd.Dir = clone
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if out, err := exec.Command("git", "clone", "-q", "--shared", root, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	commit := func(factor, msg string) string {
		t.Helper()
		pkg := filepath.Join(clone, "ciwork")
		if err := os.MkdirAll(pkg, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pkg, "work_test.go"), []byte(strings.Replace(benchSource, "FACTOR", factor, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		git("add", "ciwork")
		git("commit", "-q", "-m", msg)
		return git("rev-parse", "HEAD")
	}
	base := commit("1", "ciwork: a benchmark")
	head := commit("16", "ciwork: slowPart sixteen times as slow")

	out := filepath.Join(dir, "prof")
	cmd := exec.Command("bash", filepath.Join(root, "deploy/ci/profile-diff.sh"), base, head, out)
	cmd.Dir = clone
	// Small runs: a count of iterations fixes the benchmark's CPU time
	// (about 0.7 s and 1.8 s a run) whatever the load; slowPart's share
	// rises by about 55 points against a noise bound of about 22.
	cmd.Env = append(os.Environ(), "MACPROF="+macprof, "RECORD_ARGS=-threads 1 -duration 1s",
		"BENCH_PKG=./ciwork", "BENCH_TIME=6000x", "RUNS=2")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	status := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		status = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	summary, _ := os.ReadFile(filepath.Join(out, "summary.md"))
	t.Logf("exit %d\nsummary:\n%s\nstderr:\n%s", status, summary, stderr.String())
	parts := strings.SplitN(string(summary), "### ", 3)
	if status != 1 || len(parts) != 3 {
		t.Fatalf("exit %d with %d reports, want exit 1 and two reports", status, len(parts)-1)
	}
	if !strings.Contains(parts[1], "macprof diff: no significant regression") {
		t.Errorf("the demo, the same at both commits, did not pass:\n%s", parts[1])
	}
	if !strings.Contains(parts[2], "macprof diff: regression: github.com/macprof/macprof/ciwork.slowPart\n") || !strings.Contains(parts[2], "skipped 4 files that are not profiles") {
		t.Errorf("the benchmark's report does not name ciwork.slowPart or list the skipped go test output:\n%s", parts[2])
	}
	// The go test outputs beside the profiles show a fixed count of
	// iterations: macprof diff's default judges each function's time too.
	if !strings.Contains(parts[2], "fail on flat:+1pp,cum:+1pp,time:+10% (a fixed amount of work a profile)") {
		t.Errorf("the benchmark's report was not judged as a fixed amount of work by default:\n%s", parts[2])
	}
	if st, err := os.Stat(filepath.Join(out, "diff.svg")); err != nil || st.Size() == 0 {
		t.Errorf("diff.svg: %v", err)
	}
	if wt := git("worktree", "list"); strings.Count(wt, "\n") != 0 {
		t.Errorf("the script left worktrees behind:\n%s", wt)
	}
}
