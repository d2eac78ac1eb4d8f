package main

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// initLine is one line of GODEBUG=inittrace=1: a package's init, its
// clock time and what it allocated.
var initLine = regexp.MustCompile(`(?m)^init (\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs$`)

// TestStartupInitsOfOwnPackagesAreSmall runs `macprof version` with
// GODEBUG=inittrace=1 and checks that macprof's own packages allocate
// under 20 KB in their inits in all: every command, a 50 ms snapshot
// included, pays them (regexps compiled at start-up cost 77 KB before
// they were compiled on first use).
func TestStartupInitsOfOwnPackagesAreSmall(t *testing.T) {
	macprof, _ := macprofBinary(t)
	cmd := exec.Command(macprof, "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("macprof version: %v\n%s", err, stderr.String())
	}
	lines := initLine.FindAllStringSubmatch(stderr.String(), -1)
	if len(lines) < 10 {
		t.Fatalf("inittrace printed %d init lines, want the runtime's and every package's:\n%.2000s", len(lines), stderr.String())
	}
	const budget = 20 << 10
	total, own := 0, []string{}
	for _, l := range lines {
		n, err := strconv.Atoi(l[2])
		if err != nil {
			t.Fatal(err)
		}
		// The patched copy of pprof's profile package builds and compiles
		// its legacy formats' regexps on first use
		// (internal/third_party/pprof): 464 bytes at start-up, 2168
		// when it joined their sources there.
		const pprofBudget = 1 << 10
		if l[1] == "github.com/google/pprof/profile" && n > pprofBudget {
			t.Errorf("github.com/google/pprof/profile's init allocates %d bytes, over %d: is the replace of internal/third_party/pprof gone?", n, pprofBudget)
		}
		if !strings.HasPrefix(l[1], "github.com/macprof/macprof/") {
			continue
		}
		total += n
		own = append(own, l[1]+" "+l[2]+" bytes")
	}
	if total > budget {
		t.Errorf("macprof's own package inits allocate %d bytes, over %d; compile regexps and build tables on first use (sync.OnceValue):\n%s", total, budget, strings.Join(own, "\n"))
	}
	t.Logf("own package inits: %d bytes\n%s", total, strings.Join(own, "\n"))
}
