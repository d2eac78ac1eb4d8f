package main

import (
	"bytes"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
)

// TestUsageErrors runs every command with a usage error through run, as
// main does: one line saying what is wrong, the command's short usage and
// where its help is, not the whole help, and status 2.
func TestUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"record", "--bogus"}, "macprof record: unknown flag --bogus"},
		{[]string{"record", "-d", "soon", "-o", "x.svg", "--", "true"}, `macprof record: invalid value "soon" for flag -d: want seconds (5, 2.5) or a duration (2s, 500ms, 1m30s)`},
		{[]string{"record", "--duration", "-2.5", "-o", "x.svg", "--", "true"}, "macprof record: -d must be positive, or 0 to record until the target exits, not -2.5s"},
		{[]string{"record", "-p", "1", "--pid", "2", "-o", "x.svg"}, `macprof record: invalid value "2" for flag --pid: give one process: this command takes one PID`},
		{[]string{"record", "--mode", "idle", "-o", "x.svg", "--", "true"}, `macprof record: --mode must be cpu or wall, not "idle"`},
		{[]string{"record", "-o", "x.svg"}, "macprof record: give a process (-p PID) or a command to run (-- CMD ARGS...)"},
		{[]string{"agent", "--bogus"}, "macprof agent: unknown flag --bogus"},
		{[]string{"agent", "--pid", "1", "--duration", "-3", "--otlp-endpoint=localhost:1"}, "macprof agent: -d must be positive, or 0 to run until SIGTERM, not -3s"},
		{[]string{"agent", "--pid", "1", "--window", "0.5", "--otlp-endpoint=localhost:1"}, "macprof agent: --window must be at least 1s, not 500ms"},
		{[]string{"agent", "-p", "1,x"}, `macprof agent: invalid value "1,x" for flag -p: not a PID (a positive number): "x"`},
		{[]string{"agent", "--otlp-endpoint=localhost:1"}, "macprof agent: name the processes to profile: --pid PID and/or --name REGEX"},
		{[]string{"snapshot"}, "macprof snapshot: give the process as -p PID"},
		{[]string{"snapshot", "--pid", "1", "-p", "2"}, `macprof snapshot: invalid value "2" for flag -p: give one process: this command takes one PID`},
		{[]string{"snapshot", "--pid", "1", "extra"}, `macprof snapshot: unexpected argument "extra": give the process as -p PID`},
		{[]string{"symbolize", "0x1"}, "macprof symbolize: -o BINARY is required"},
		{[]string{"symbolize", "-o", "x", "-l", "zz", "0x1"}, `macprof symbolize: -l "zz": not a hexadecimal address`},
		{[]string{"diff", "--bogus", "a", "b"}, "macprof diff: unknown flag --bogus"},
		{[]string{"diff", "a"}, "macprof diff: give BASE and NEW (or --base and --new), e.g. macprof diff base.pb.gz new.pb.gz"},
		{[]string{"diff", "--base", "a", "b", "c"}, "macprof diff: give BASE and NEW (or --base and --new), e.g. macprof diff base.pb.gz new.pb.gz"},
		{[]string{"setup", "extra"}, `macprof setup: unexpected arguments ["extra"]`},
		{[]string{"setup", "--bogus"}, "macprof setup: unknown flag --bogus"},
		{[]string{"version", "extra"}, `macprof version: unexpected argument "extra"`},
	} {
		var stdout, stderr bytes.Buffer
		st := run(c.args, &stdout, &stderr)
		first, rest, _ := strings.Cut(stderr.String(), "\n")
		tail := regexp.MustCompile(`^Usage: macprof ` + c.args[0] + `( .*)?\n(       macprof ` + c.args[0] + ` .*\n)*run 'macprof ` + c.args[0] + ` --help' for more\n$`)
		if st != 2 || first != c.want || !tail.MatchString(rest) || stdout.Len() > 0 {
			t.Errorf("%q: status %d, stderr\n%s\nwant status 2, the line\n%s\nand the short usage", c.args, st, stderr.String(), c.want)
		}
	}
	// An unknown command or top-level flag: one line and where the list is.
	for _, args := range [][]string{{"recrod"}, {"--bogus"}} {
		var stdout, stderr bytes.Buffer
		st := run(args, &stdout, &stderr)
		lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
		if st != 2 || len(lines) != 3 || !strings.Contains(lines[0], `unknown`) || !strings.Contains(lines[0], args[0]) ||
			lines[2] != "run 'macprof --help' for the commands" {
			t.Errorf("%q: status %d, stderr\n%s", args, st, stderr.String())
		}
	}
}

// TestHelp: --help (and -h, and macprof help CMD) prints the whole help
// of every command, each flag beside its long alias, and exits 0.
func TestHelp(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		want []string
	}{
		{"record", []string{"Usage: macprof record -p PID", "Examples:", "Flags:", "  -p, --pid PID\n", "  -d, --duration SECONDS\n", "  -o, --output FILE\n", "(default 99)", `(default "cpu")`}},
		{"agent", []string{"Usage: macprof agent", "Examples:", "  -p, --pid PID\n", "  -d, --duration SECONDS\n", "  --window SECONDS\n", "(default 15s)", "  --otlp-endpoint"}},
		{"snapshot", []string{"Usage: macprof snapshot -p PID", "Examples:", "  -p, --pid PID\n", "  --json\n"}},
		{"symbolize", []string{"Usage: macprof symbolize", "Examples:", "  -o BINARY\n", "  -l LOADADDR\n", "  --arch ARCH\n"}},
		{"diff", []string{"Usage: macprof diff", "Examples:", "  --fail-on THRESHOLDS\n"}},
		{"setup", []string{"Usage: macprof setup", "Examples:", "  --dry-run\n"}},
		{"version", []string{"Usage: macprof version", "Go toolchain"}},
	} {
		for _, args := range [][]string{{c.cmd, "--help"}, {c.cmd, "-h"}, {"help", c.cmd}} {
			var stdout, stderr bytes.Buffer
			st := run(args, &stdout, &stderr)
			help := stdout.String() + stderr.String()
			if st != 0 {
				t.Errorf("%q: status %d", args, st)
			}
			for _, w := range c.want {
				if !strings.Contains(help, w) {
					t.Errorf("%q: help lacks %q:\n%s", args, w, help)
				}
			}
			// A flag's usage says what it does in a line or two: the
			// mechanism belongs in the docs.
			for _, line := range strings.Split(help, "\n") {
				if usage, _, _ := strings.Cut(line, " (default "); strings.HasPrefix(line, "    \t") && len(usage) > 200 {
					t.Errorf("%q: a flag's usage of %d characters: %s", args, len(usage), line)
				}
			}
		}
	}
}

// TestVersionLine: one line with the module version, the revision (and
// whether the tree was modified), the Go version and the platform.
func TestVersionLine(t *testing.T) {
	bi := func(version, goVersion string, settings ...string) *debug.BuildInfo {
		b := &debug.BuildInfo{GoVersion: goVersion}
		b.Main.Version = version
		for i := 0; i+1 < len(settings); i += 2 {
			b.Settings = append(b.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return b
	}
	const rev = "0d960f4c7a1b2e3f4a5b6c7d8e9f00112233aabb"
	for _, c := range []struct {
		bi   *debug.BuildInfo
		want string
	}{
		{bi("v1.2.3", "go1.26.8"), "macprof v1.2.3 go1.26.8 darwin/arm64"},
		{bi("(devel)", "go1.26.8", "vcs.revision", rev, "vcs.modified", "false"), "macprof (devel) (0d960f4c7a1b) go1.26.8 darwin/arm64"},
		{bi("", "go1.26.8", "vcs.revision", rev, "vcs.modified", "true"), "macprof (devel) (0d960f4c7a1b, modified) go1.26.8 darwin/arm64"},
		{bi("v0.0.0-20261123213723-0d960f4c7a1b+dirty", "go1.26.8", "vcs.revision", rev, "vcs.modified", "true"),
			"macprof v0.0.0-20261123213723-0d960f4c7a1b+dirty (0d960f4c7a1b, modified) go1.26.8 darwin/arm64"},
		{bi("v1.0.0", "go1.26.8", "vcs.revision", "abc"), "macprof v1.0.0 (abc) go1.26.8 darwin/arm64"},
	} {
		if got := versionLine(c.bi, "darwin", "arm64"); got != c.want {
			t.Errorf("versionLine = %q, want %q", got, c.want)
		}
	}
	// Without build information (no module support): the version is
	// unknown and the Go version is the running one's.
	if got := versionLine(nil, "linux", "amd64"); !regexp.MustCompile(`^macprof \(devel\) go\S+ linux/amd64$`).MatchString(got) {
		t.Errorf("versionLine(nil) = %q", got)
	}
	// macprof --version, -version and version print the same one line.
	var lines []string
	for _, args := range [][]string{{"--version"}, {"-version"}, {"version"}} {
		var stdout, stderr bytes.Buffer
		if st := run(args, &stdout, &stderr); st != 0 || stderr.Len() > 0 || strings.Count(stdout.String(), "\n") != 1 {
			t.Errorf("%q: status %d, stdout %q, stderr %q", args, st, stdout.String(), stderr.String())
		}
		lines = append(lines, stdout.String())
	}
	if lines[0] != lines[1] || lines[1] != lines[2] || !strings.HasPrefix(lines[0], "macprof ") {
		t.Errorf("--version, -version and version differ: %q", lines)
	}
}
