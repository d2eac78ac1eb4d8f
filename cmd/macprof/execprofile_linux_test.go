//go:build linux && (amd64 || arm64)

package main

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/macprof/macprof/internal/testprog"
)

// TestRecordCommandThatExecsAtOnce: a launched command that execs another
// program before its first capture (a program that only execs, and
// sh -c 'exec ...') is profiled with the new program's images: its busy
// function, named, holds most of the samples, rather than frames walked
// and named with the first program's images (unnamed, and [truncated]).
func TestRecordCommandThatExecsAtOnce(t *testing.T) {
	macprof, _ := macprofBinary(t)
	execto := testprog.BuildC(t, "execto.c")
	busy := testprog.BuildCNoFP(t, "burstsleep.c") // burst: 400 ms of CPU time
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal("sh is needed on PATH")
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"execto", []string{execto, busy, "1", "400", "0"}},
		{"sh", []string{sh, "-c", "exec " + busy + " 1 400 0"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "p.pb.gz")
			b, err := exec.Command(macprof, append([]string{"record", "-o", out, "--"}, c.args...)...).CombinedOutput()
			if err != nil {
				t.Fatalf("record: %v\n%s", err, b)
			}
			_, stacks := readProfile(t, out)
			var total, inBusy, unknown int64
			for s, n := range stacks {
				total += n
				frames := strings.Split(s, ";")
				switch {
				case slices.Contains(frames, "burst"):
					inBusy += n
				case slices.ContainsFunc(frames, unnamed):
					unknown += n
				}
			}
			t.Logf("%d samples: %d in burst, %d with unnamed frames\n%s", total, inBusy, unknown, b)
			// Measured: 81-94% in burst ([unsampled] the rest), 0-10%
			// when the samples were walked with the first program's
			// images.
			if total < 10 || inBusy*10 < total*6 || unknown*10 > total {
				t.Errorf("burst in %d of %d samples, want at least 60%%; %d with unnamed frames, want at most 10%%; stacks: %v", inBusy, total, unknown, stacks)
			}
		})
	}
}

// unnamed reports whether a profile's frame has no function name: an
// address (?0x...) or <unknown>.
func unnamed(frame string) bool {
	return strings.HasPrefix(frame, "?0x") || frame == "<unknown>"
}
