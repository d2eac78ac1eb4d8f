package demangle

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestInitsBuildNoTables builds a program that links the demanglers and
// checks, with GODEBUG=inittrace=1, that their package inits allocate
// nothing: every macprof command, a 20 ms snapshot included, pays them,
// in page faults more than in time. The same program then demangles a
// C++, a Rust and a Swift name in a fresh process, whose tables are built
// on that first use, and must print what this process prints.
func TestInitsBuildNoTables(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("this test builds a program and needs the go command on PATH: %v", err)
	}
	probe := filepath.Join(t.TempDir(), "initprobe")
	build := exec.Command(goTool, "build", "-o", probe, "./testdata/initprobe")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./testdata/initprobe: %v\n%s", err, out)
	}

	cmd := exec.Command(probe)
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("initprobe: %v\n%s", err, stderr.String())
	}
	line := regexp.MustCompile(`(?m)^init (\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs$`)
	lines := line.FindAllStringSubmatch(stderr.String(), -1)
	if len(lines) < 5 {
		t.Fatalf("inittrace printed %d init lines, want the runtime's and the packages':\n%s", len(lines), stderr.String())
	}
	for _, l := range lines {
		switch l[1] {
		case "github.com/ianlancetaylor/demangle", "github.com/macprof/macprof/demangle", "github.com/macprof/macprof/demangle/swift":
			if l[2] != "0" || l[3] != "0" {
				t.Errorf("%s's init allocates %s bytes in %s allocations, want none: build its tables on first use", l[1], l[2], l[3])
			}
		}
	}

	for _, name := range []string{
		"_ZNSt6vectorIiSaIiEE9push_backERKi", // C++: substitutions, builtin types, qualifiers
		"_ZNK3FooplERKS_",                    // C++: an operator
		"_ZN4core3ptr85drop_in_place$LT$std..rt..lang_start$LT$$LP$$RP$$GT$..$u7b$$u7b$closure$u7d$$u7d$$GT$17h0f5a3a5c0d2b1e4fE", // Rust legacy escapes
		"_RNvNtCs1234_4core3fmt5write", // Rust v0
		"$s4main3FooV3bar1xSiSS_tF",    // Swift: standard types
	} {
		out, err := exec.Command(probe, name).Output()
		if err != nil {
			t.Fatalf("initprobe %s: %v", name, err)
		}
		got := strings.TrimSuffix(string(out), "\n")
		if want := Name(name, Full); got != want {
			t.Errorf("a fresh process demangles %s as %q, this one as %q", name, got, want)
		}
		if got == name {
			t.Errorf("%s is not demangled: %q", name, got)
		}
	}
}
