package mach_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestMacOSWorkflow (issue 12, defect 3): the macOS workflow must be able
// to pass. Its "normal user" step runs go test ./mach/, so every darwin
// integration test that needs a task port of another process (launch,
// attach) skips unless euid is 0, through requireRoot; the root step runs
// them with sudo. And it runs on runners GitHub still has: macos-15
// (arm64) and macos-15-intel (macos-13 is retired).
func TestMacOSWorkflow(t *testing.T) {
	wf, err := os.ReadFile(filepath.Join("..", ".github", "workflows", "macos.yml"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s+os: \[([^\]]*)\]`).FindSubmatch(wf)
	if m == nil {
		t.Fatal("macos.yml has no matrix os list")
	}
	var oses []string
	for _, o := range strings.Split(string(m[1]), ",") {
		oses = append(oses, strings.TrimSpace(o))
	}
	if want := []string{"macos-15", "macos-15-intel"}; !slices.Equal(oses, want) {
		t.Errorf("macos.yml runs on %q, want %q", oses, want)
	}
	if !regexp.MustCompile(`sudo "\$RUNNER_TEMP/mach.test"`).Match(wf) {
		t.Error("macos.yml does not run the darwin tests as root")
	}
	// The product as a user runs it, not only the package: a launched
	// command to its end, an attached one with -d, and one that execs,
	// each profile checked for the spin program's own functions.
	for _, re := range []string{
		`sudo \./macprof record -d 0 -o launch\.folded -- \./spin for`,
		`grep macprof_spin_for launch\.folded`,
		`sudo \./macprof record -p "\$pid" -d 2 -o attach\.folded`,
		`grep macprof_spin_middle attach\.folded`,
		`sudo \./macprof record -o exec\.folded -- \./spin exec 1 \./spin for 1`,
		`grep macprof_spin_before_exec exec\.folded`,
		`grep macprof_spin_for exec\.folded`,
	} {
		if !regexp.MustCompile(re).Match(wf) {
			t.Errorf("macos.yml does not run the product as a user does: no %s", re)
		}
	}

	src, err := os.ReadFile("target_darwin_test.go")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?s)func requireRoot\(t \*testing.T\) \{.*?os.Geteuid\(\) != 0.*?t.Skip`).Match(src) {
		t.Fatal("target_darwin_test.go has no requireRoot that skips unless euid is 0")
	}
	funcs := regexp.MustCompile(`(?m)^func (\w+)\(t \*testing.T\)[^{]*\{`).FindAllSubmatchIndex(src, -1)
	for i, f := range funcs {
		end := len(src)
		if i+1 < len(funcs) {
			end = funcs[i+1][0]
		}
		name, body := string(src[f[2]:f[3]]), string(src[f[1]:end])
		needsRoot := strings.Contains(body, "Launch(") || strings.Contains(body, "Attach(")
		if name == "TestAttachErrors" {
			needsRoot = false // the refusals it checks are what a normal user gets
		}
		if needsRoot && !strings.Contains(body, "requireRoot(t)") {
			t.Errorf("%s launches or attaches without requireRoot(t): it fails as a normal user", name)
		}
	}
}
