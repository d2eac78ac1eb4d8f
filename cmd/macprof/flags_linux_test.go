//go:build linux && (amd64 || arm64)

package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestVersionBinary builds macprof and checks that --version says what the
// binary's own build information (go version -m) says.
func TestVersionBinary(t *testing.T) {
	macprof, _ := macprofBinary(t)
	out, err := exec.Command(macprof, "--version").Output()
	if err != nil {
		t.Fatalf("macprof --version: %v", err)
	}
	m, err := exec.Command("go", "version", "-m", macprof).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	var goVersion, modVersion, rev, modified string
	for i, line := range strings.Split(string(m), "\n") {
		f := strings.Fields(line)
		switch {
		case i == 0 && len(f) == 2:
			goVersion = f[1]
		case len(f) >= 3 && f[0] == "mod" && f[1] == "github.com/macprof/macprof":
			modVersion = f[2]
		case len(f) == 2 && f[0] == "build":
			if v, ok := strings.CutPrefix(f[1], "vcs.revision="); ok {
				rev = v
			}
			if v, ok := strings.CutPrefix(f[1], "vcs.modified="); ok {
				modified = v
			}
		}
	}
	want := "macprof " + modVersion
	if rev != "" {
		want += " (" + rev[:min(12, len(rev))]
		if modified == "true" {
			want += ", modified"
		}
		want += ")"
	}
	want += " " + goVersion + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	if modVersion == "" || goVersion == "" || string(out) != want {
		t.Errorf("macprof --version printed %q, want %q (from go version -m:\n%s)", out, want, m)
	}
	t.Logf("%s", out)
}

// TestFamiliarFlags runs the built macprof with the flags people type:
// seconds for -d, --pid for -p, a list of PIDs for the agent.
func TestFamiliarFlags(t *testing.T) {
	macprof, _ := macprofBinary(t)
	pid := sleeper(t)
	dir := t.TempDir()
	bounded := func(args ...string) (time.Duration, string, int) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		var out bytes.Buffer
		cmd := exec.CommandContext(ctx, macprof, args...)
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		err := cmd.Run()
		took := time.Since(start)
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if ctx.Err() != nil {
			t.Fatalf("%q: still running after 20 s\n%s", args, out.String())
		}
		return took, out.String(), code
	}

	// record --pid with -d in seconds: it stops after about 1.5 s.
	out := filepath.Join(dir, "wall.folded")
	took, log, code := bounded("record", "-q", "--mode", "wall", "--pid", pid, "-d", "1.5", "-o", out)
	b, err := os.ReadFile(out)
	if code != 0 || err != nil || len(b) == 0 || took < 1500*time.Millisecond || took > 15*time.Second {
		t.Errorf("record --pid %s -d 1.5: status %d in %v, output %d bytes (%v)\n%s", pid, code, took, len(b), err, log)
	}

	// snapshot --pid.
	_, log, code = bounded("snapshot", "--pid", pid)
	if code != 0 || !strings.Contains(log, "PID "+pid) || !strings.Contains(log, "TID ") {
		t.Errorf("snapshot --pid %s: status %d\n%s", pid, code, log)
	}

	// agent -p with a list: both PIDs reach the agent (they are gone, so
	// it says there is nothing to profile).
	_, log, code = bounded("agent", "-p", "4194000,4194001", "--telemetry", "none", "--otlp-endpoint=localhost:1")
	if code != 1 || !strings.Contains(log, "no process given by --pid can be profiled") {
		t.Errorf("agent -p 4194000,4194001: status %d\n%s", code, log)
	}
	// agent --pid with --duration in seconds: it stops after about 1 s,
	// whatever the (unreachable) exporter made of it.
	took, log, _ = bounded("agent", "--pid", pid, "--duration", "1", "--window", "1", "--telemetry", "none", "--otlp-endpoint=localhost:1", "--shutdown-timeout", "0.5")
	if took < time.Second || took > 15*time.Second {
		t.Errorf("agent --duration 1: took %v\n%s", took, log)
	}
}

// TestRecordSVGTitle records a command into a flame graph: its title names
// the command and the recording's length, and it has the search control.
func TestRecordSVGTitle(t *testing.T) {
	macprof, _ := macprofBinary(t)
	out := filepath.Join(t.TempDir(), "flame.svg")
	const loop = `i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done`
	b, err := exec.Command(macprof, "record", "-q", "--output", out, "--", "sh", "-c", loop).CombinedOutput()
	if err != nil {
		t.Fatalf("record: %v\n%s", err, b)
	}
	svg, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	title := regexp.MustCompile(`<text id="title"[^>]*>([^<]*)</text>`).FindSubmatch(svg)
	want := regexp.MustCompile(`^macprof: sh -c &#39;i=0; while \[ \$i -lt 100000 \]; do i=\$\(\(i\+1\)\); done&#39; \(cpu, [0-9.]+(ms|s)\)$`)
	if title == nil || !want.Match(title[1]) {
		t.Errorf("title %q, want it to match %s", title, want)
	}
	if !bytes.Contains(svg, []byte(`<text id="search" class="btn"`)) || !bytes.Contains(svg, []byte("function search(")) {
		t.Error("the flame graph has no search")
	}
}
