package cli

import (
	"bytes"
	"math"
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
		got, err := ParseDuration(c.in)
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", c.in, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("ParseDuration(%q) = %v, %v; want an error with %q", c.in, got, err, c.err)
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
		fs := NewFlagSet("t", "macprof t -p PID [-d SECONDS]\nmacprof t -- CMD", "Does t.", &stderr)
		pids := fs.PIDs(c.many, "`PID`")
		dur := fs.Duration("d", "duration", 0, "`SECONDS`")
		st, ok := fs.ParseArgs(c.args)
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

// FuzzFlagValues feeds arbitrary text to the duration and PID flag
// parsers: no panic, seconds agree with the number read as a float (to
// its precision), and accepted PIDs are positive.
func FuzzFlagValues(f *testing.F) {
	for _, s := range []string{"5", "2.5", "-1", "2s", "1m30s", ".5", "1e3", "inf", "12,34", " 7", "0", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if f, ferr := strconv.ParseFloat(s, 64); err == nil && ferr == nil && secondsRE().MatchString(s) {
			if diff := math.Abs(float64(d) - f*1e9); diff > 1 && diff > math.Abs(f*1e9)*1e-15 {
				t.Errorf("ParseDuration(%q) = %v, %v away from %g s", s, d, time.Duration(diff), f)
			}
		}
		p := &PIDs{}
		if p.Set(s) == nil {
			for _, n := range p.pids {
				if n <= 0 {
					t.Errorf("pid %d accepted from %q", n, s)
				}
			}
		}
		one := &PIDs{one: true}
		if one.Set(s) == nil && len(one.pids) != 1 {
			t.Errorf("one PID flag took %v from %q", one.pids, s)
		}
	})
}
