//go:build linux && (amd64 || arm64)

package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRecordDemoPprofList records the demo as the README's main command
// does (record -- demo) and checks that `go tool pprof -list main.worker`
// shows its source lines with the time of the calls it makes: the
// profile's lines come from the unstripped Go binary's pclntab.
func TestRecordDemoPprofList(t *testing.T) {
	macprof, demo := macprofBinary(t)
	out := filepath.Join(t.TempDir(), "profile.pb.gz")
	cmd := exec.Command(macprof, "record", "-q", "-F", "99", "-o", out, "--", demo, "-threads", "2", "-duration", "1500ms")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("record: %v\n%s", err, b)
	}
	b, err := exec.Command("go", "tool", "pprof", "-list", "main.worker$", out).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -list: %v\n%s", err, b)
	}
	s := string(b)
	if strings.Contains(s, "No source information") || !strings.Contains(s, "ROUTINE ======================== main.worker in ") {
		t.Fatalf("go tool pprof -list main.worker shows no source:\n%s", s)
	}
	// A source line of worker with time on it: "  .  111.11ms  161:  computeChecksums(buf)".
	timed := regexp.MustCompile(`(?m)^\s+\S+\s+[0-9.]+[mµn]?s\s+\d+:\s+(computeChecksums|prepareReport)\(`)
	if !timed.MatchString(s) {
		t.Fatalf("no timed call line in main.worker:\n%s", s)
	}
}
