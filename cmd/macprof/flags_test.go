package main

import (
	"bytes"
	"math"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestParseDuration: -d and the other duration flags take seconds as a
// decimal number as well as Go durations.
func TestParseDuration(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		err  string // in the error, "" for none
	}{
		{"5", 5 * time.Second, ""},
		{"2.5", 2500 * time.Millisecond, ""},
		{".5", 500 * time.Millisecond, ""},
		{"0", 0, ""},
		{"+3", 3 * time.Second, ""},
		{"-1", -time.Second, ""}, // Validate says -d must be positive
		{"0.001", time.Millisecond, ""},
		{"2s", 2 * time.Second, ""},
		{"500ms", 500 * time.Millisecond, ""},
		{"1m30s", 90 * time.Second, ""},
		{"-1s", -time.Second, ""},
		{"0.0000000001", 0, "shorter than a nanosecond"},
		{"99999999999", 0, "out of range"},
		{"2 s", 0, "want seconds"},
		{"fast", 0, "want seconds (5, 2.5) or a duration (2s, 500ms, 1m30s)"},
		{"", 0, "want seconds"},
		{"inf", 0, "want seconds"},
		{"NaN", 0, "want seconds"},
		{"1e3", 0, "want seconds"},
		{"0x10", 0, "want seconds"},
		{"5.", 5 * time.Second, ""},
	} {
		got, err := parseDuration(c.in)
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("parseDuration(%q) = %v, %v; want %v", c.in, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("parseDuration(%q) = %v, %v; want an error with %q", c.in, got, err, c.err)
		}
	}
}

// TestFlagSetParse parses command lines with the flags every sampling
// command defines: -d/--duration, -p/--pid one or many.
func TestFlagSetParse(t *testing.T) {
	for _, c := range []struct {
		args []string
		many bool
		pids []int
		dur  time.Duration
		err  string // first line of stderr, "" when parsing succeeds
	}{
		{[]string{"-d", "5"}, false, nil, 5 * time.Second, ""},
		{[]string{"--duration", "2.5"}, false, nil, 2500 * time.Millisecond, ""},
		{[]string{"-duration=500ms"}, false, nil, 500 * time.Millisecond, ""},
		{[]string{"--duration=1m"}, false, nil, time.Minute, ""},
		{[]string{"-p", "12"}, false, []int{12}, 0, ""},
		{[]string{"--pid", "12"}, false, []int{12}, 0, ""},
		{[]string{"--pid=12", "-d", "3"}, false, []int{12}, 3 * time.Second, ""},
		{[]string{"-p", "12", "--pid", "34", "-p", "56,78"}, true, []int{12, 34, 56, 78}, 0, ""},
		{[]string{"--pid", "12, 34"}, true, []int{12, 34}, 0, ""},
		{[]string{"-p", "12", "--pid", "34"}, false, nil, 0, `macprof t: invalid value "34" for flag --pid: give one process: this command takes one PID`},
		{[]string{"-p", "12,34"}, false, nil, 0, `macprof t: invalid value "12,34" for flag -p: give one process: this command takes one PID`},
		{[]string{"-p", "0"}, true, nil, 0, `macprof t: invalid value "0" for flag -p: not a PID (a positive number): "0"`},
		{[]string{"--pid", "x"}, true, nil, 0, `macprof t: invalid value "x" for flag --pid: not a PID (a positive number): "x"`},
		{[]string{"-p", "1,,2"}, true, nil, 0, `macprof t: invalid value "1,,2" for flag -p: not a PID (a positive number): ""`},
		{[]string{"-d", "2 s"}, false, nil, 0, `macprof t: invalid value "2 s" for flag -d: want seconds (5, 2.5) or a duration (2s, 500ms, 1m30s)`},
		{[]string{"--duration"}, false, nil, 0, `macprof t: flag needs an argument: --duration`},
		{[]string{"--bogus"}, false, nil, 0, `macprof t: unknown flag --bogus`},
		{[]string{"-x"}, false, nil, 0, `macprof t: unknown flag -x`},
	} {
		var stderr bytes.Buffer
		fs := newFlagSet("t", "macprof t -p PID [-d SECONDS]\nmacprof t -- CMD", "Does t.", &stderr)
		pids := fs.pids(c.many, "`PID`")
		dur := fs.duration("d", "duration", 0, "`SECONDS`")
		st, ok := fs.parse(c.args)
		first, rest, _ := strings.Cut(stderr.String(), "\n")
		if c.err == "" {
			if !ok || st != 0 || stderr.Len() > 0 || *dur != c.dur || !equalInts(pids.pids, c.pids) {
				t.Errorf("%q: status %d ok %v pids %v duration %v stderr %q; want pids %v duration %v", c.args, st, ok, pids.pids, *dur, stderr.String(), c.pids, c.dur)
			}
			continue
		}
		const tail = "Usage: macprof t -p PID [-d SECONDS]\n       macprof t -- CMD\nrun 'macprof t --help' for more\n"
		if ok || st != 2 || first != c.err || rest != tail {
			t.Errorf("%q: status %d ok %v stderr\n%s\nwant status 2 and\n%s\n%s", c.args, st, ok, stderr.String(), c.err, tail)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

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

// FuzzFlagValues feeds arbitrary text to the duration and PID flag
// parsers: no panic, seconds agree with the number read as a float (to
// its precision), and accepted PIDs are positive.
func FuzzFlagValues(f *testing.F) {
	for _, s := range []string{"5", "2.5", "-1", "2s", "1m30s", ".5", "1e3", "inf", "12,34", " 7", "0", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseDuration(s)
		if f, ferr := strconv.ParseFloat(s, 64); err == nil && ferr == nil && secondsRE.MatchString(s) {
			if diff := math.Abs(float64(d) - f*1e9); diff > 1 && diff > math.Abs(f*1e9)*1e-15 {
				t.Errorf("parseDuration(%q) = %v, %v away from %g s", s, d, time.Duration(diff), f)
			}
		}
		p := &pidsValue{}
		if p.Set(s) == nil {
			for _, n := range p.pids {
				if n <= 0 {
					t.Errorf("pid %d accepted from %q", n, s)
				}
			}
		}
		one := &pidsValue{one: true}
		if one.Set(s) == nil && len(one.pids) != 1 {
			t.Errorf("one PID flag took %v from %q", one.pids, s)
		}
	})
}
