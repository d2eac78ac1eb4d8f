//go:build linux && (amd64 || arm64)

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/procstat"
	"github.com/macprof/macprof/internal/testprog"
)

// badInputWait bounds how long macprof may take to refuse a bad input,
// which it does before it starts anything; a command that accepts the input
// runs on and fails the case.
const badInputWait = 10 * time.Second

type badInput struct {
	args []string
	want string // the first line of stderr; the whole of it unless code is 2
	code int
}

// usageTail matches what follows the error line of a usage error: the
// command's short usage and where its help is, not the whole help.
func usageTail(cmd string) *regexp.Regexp {
	q := regexp.QuoteMeta(cmd)
	return regexp.MustCompile(`^Usage: macprof ` + q + `( .*)?\n(       macprof ` + q + ` .*\n)*run 'macprof ` + q + ` --help' for more\n$`)
}

// runBadInputs runs the built macprof on each case and checks its exit
// status and that it said exactly the one line wanted, followed, for a
// usage error (status 2), by the short usage.
func runBadInputs(t *testing.T, cases []badInput) {
	t.Helper()
	macprof, _ := macprofBinary(t)
	for _, c := range cases {
		ctx, cancel := context.WithTimeout(context.Background(), badInputWait)
		cmd := exec.CommandContext(ctx, macprof, c.args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		start := time.Now()
		err := cmd.Run()
		took := time.Since(start)
		timedOut := ctx.Err() != nil
		cancel()
		var ee *exec.ExitError
		code := 0
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		if timedOut {
			t.Errorf("%q: still running after %v: the bad input was accepted\n%s", c.args, badInputWait, stderr.String())
			continue
		}
		first, rest, _ := strings.Cut(stderr.String(), "\n")
		ok := code == c.code && first == c.want
		if c.code == 2 {
			ok = ok && usageTail(c.args[0]).MatchString(rest)
		} else {
			ok = ok && rest == ""
		}
		if !ok {
			t.Errorf("%q: status %d, stderr\n%q\nwant status %d, stderr starting\n%q", c.args, code, stderr.String(), c.code, c.want+"\n")
		}
		t.Logf("%q: refused in %v", c.args, took.Round(time.Millisecond))
	}
}

// sleeper starts a process to name in the cases, so that a command that
// wrongly accepts them profiles it rather than someone else's.
func sleeper(t *testing.T) string {
	t.Helper()
	p := exec.Command("sleep", "60")
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Process.Kill(); p.Wait() })
	return strconv.Itoa(p.Process.Pid)
}

func TestRecordBadInput(t *testing.T) {
	out := filepath.Join(t.TempDir(), "p.folded")
	runBadInputs(t, []badInput{
		{[]string{"record", "-d", "-1s", "-o", out, "--", "sleep", "60"}, "macprof record: -d must be positive, or 0 to record until the target exits, not -1s", 2},
		{[]string{"record", "-F", "0", "-o", out, "--", "sleep", "60"}, "macprof record: -F must be between 1 and 10000 Hz, not 0", 2},
		{[]string{"record", "-F", "10001", "-o", out, "--", "sleep", "60"}, "macprof record: -F must be between 1 and 10000 Hz, not 10001", 2},
		{[]string{"record", "-F", "fast", "-o", out, "--", "sleep", "60"}, `macprof record: invalid value "fast" for flag -F: parse error`, 2},
		{[]string{"record", "-p", "-5", "-o", out}, `macprof record: invalid value "-5" for flag -p: not a PID (a positive number): "-5"`, 2},
		{[]string{"record", "-o", out}, "macprof record: give a process (-p PID) or a command to run (-- CMD ARGS...)", 2},
		{[]string{"record", "-p", "1", "-o", out, "--", "sleep", "60"}, "macprof record: give either -p PID or a command, not both", 2},
		{[]string{"record", "--", "sleep", "60"}, "macprof record: give at least one output with -o FILE (e.g. -o cpu.pb.gz or -o flame.svg)", 2},
		{[]string{"record", "--max-frames", "0", "-o", out, "--", "sleep", "60"}, "macprof record: --max-frames must be between 1 and 10000, not 0", 2},
		{[]string{"record", "--max-frames", "-3", "-o", out, "--", "sleep", "60"}, "macprof record: --max-frames must be between 1 and 10000, not -3", 2},
		{[]string{"record", "--mode", "idle", "-o", out, "--", "sleep", "60"}, `macprof record: --mode must be cpu or wall, not "idle"`, 2},
		{[]string{"record", "--capture", "peek", "-o", out, "--", "sleep", "60"}, `macprof record: --capture must be auto or stop, not "peek"`, 2},
	})
}

func TestAgentBadInput(t *testing.T) {
	dir := t.TempDir()
	config := func(name, body string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	null := config("null.json", `{"name": null, "otlp-endpoint": "localhost:1"}`)
	nullPID := config("nullpid.json", `{"pid": [12, null]}`)
	object := config("object.json", `{"name": {"re": "x"}}`)
	zeroHz := config("zerohz.json", `{"F": 0}`)
	const ep = "--otlp-endpoint=localhost:1"
	pid := sleeper(t)
	runBadInputs(t, []badInput{
		{[]string{"agent", "--pid", pid, "-F", "0", ep}, "macprof agent: -F must be between 1 and 10000 Hz, not 0", 2},
		{[]string{"agent", "--pid", pid, "-F", "20000", ep}, "macprof agent: -F must be between 1 and 10000 Hz, not 20000", 2},
		{[]string{"agent", "--pid", pid, "-d", "-1s", ep}, "macprof agent: -d must be positive, or 0 to run until SIGTERM, not -1s", 2},
		{[]string{"agent", "--pid", pid, "--window", "500ms", ep}, "macprof agent: --window must be at least 1s, not 500ms", 2},
		{[]string{"agent", "--pid", pid, "--rescan", "0", ep}, "macprof agent: --rescan must be at least 100ms, not 0s", 2},
		{[]string{"agent", "--pid", pid, "--shutdown-timeout", "-5s", ep}, "macprof agent: --shutdown-timeout must not be negative, not -5s", 2},
		{[]string{"agent", "--pid", pid, "--telemetry", "prometheus", ep}, `macprof agent: --telemetry must be otlp, stdout, none or auto, not "prometheus"`, 2},
		{[]string{"agent", "--pid", pid, "--log-format", "logfmt", ep}, `macprof agent: --log-format must be text or json, not "logfmt"`, 2},
		{[]string{"agent", "--pid", pid, "--mode", "idle", ep}, `macprof agent: --mode must be cpu or wall, not "idle"`, 2},
		{[]string{"agent", "--pid", pid, "--queue-windows", "-1", ep}, "macprof agent: --queue-windows must be at least 2, not -1", 2},
		{[]string{"agent", "--pid", pid, "--queue-windows", "0", ep}, "macprof agent: --queue-windows must be at least 2, not 0", 2},
		{[]string{"agent", "--pid", pid, "--queue-bytes", "-1", ep}, "macprof agent: --queue-bytes must be positive, not -1", 2},
		{[]string{"agent", "--pid", pid, "--retry-max", "-1s", ep}, "macprof agent: --retry-max must be positive, or 0 for the window length, not -1s", 2},
		{[]string{"agent", "--pid", pid, "--otlp-timeout", "-1s", ep}, "macprof agent: --otlp-timeout (or OTEL_EXPORTER_OTLP_TIMEOUT) must not be negative, not -1s", 2},
		{[]string{"agent", "--pid", pid, "--pyroscope-url", "http://localhost:1", "--pyroscope-timeout", "-1s"}, "macprof agent: --pyroscope-timeout must not be negative, not -1s", 2},
		{[]string{"agent", "--pid", "0", ep}, `macprof agent: invalid value "0" for flag --pid: not a PID (a positive number): "0"`, 2},
		{[]string{"agent", ep}, "macprof agent: name the processes to profile: --pid PID and/or --name REGEX", 2},
		{[]string{"agent", "--name", "(", ep}, "macprof agent: --name: error parsing regexp: missing closing ): `(`", 2},
		{[]string{"agent", "--config", null}, "macprof agent: config " + null + ": name: want a string, number or boolean (or an array of them), not null", 2},
		{[]string{"agent", "--config", nullPID}, "macprof agent: config " + nullPID + ": pid: want a string, number or boolean (or an array of them), not null", 2},
		{[]string{"agent", "--config", object}, "macprof agent: config " + object + ": name: want a string, number or boolean (or an array of them), not an object", 2},
		{[]string{"agent", "--config", zeroHz, "--pid", pid, ep}, "macprof agent: -F must be between 1 and 10000 Hz, not 0", 2},
	})
}

// TestAgentPIDsGone runs an agent on processes that are gone, and on one
// that exits while it runs, without --name: it says so and stops rather
// than run on with nothing to profile.
func TestAgentPIDsGone(t *testing.T) {
	macprof, _ := macprofBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), badInputWait)
	defer cancel()
	b, err := exec.CommandContext(ctx, macprof, "agent", "--pid", "4194000", "--pid", "4194001", "--otlp-endpoint=localhost:1").CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || ctx.Err() != nil ||
		!strings.Contains(string(b), `msg="nothing to profile: no process given by --pid can be profiled, and there is no --name to find more"`) {
		t.Errorf("agent on PIDs that are gone: %v (context %v)\n%s", err, ctx.Err(), b)
	}

	// A process that exits a moment after the agent attached: the agent
	// stops, and exits 0 because its endpoint answers (one that did not
	// would make it exit 1: TestAgentNeverSilent).
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	defer endpoint.Close()
	p := exec.Command("sleep", "1")
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	defer p.Wait()
	ctx2, cancel2 := context.WithTimeout(context.Background(), badInputWait)
	defer cancel2()
	b, err = exec.CommandContext(ctx2, macprof, "agent", "--pid", strconv.Itoa(p.Process.Pid), "--telemetry", "none", "--otlp-endpoint="+endpoint.URL).CombinedOutput()
	if err != nil || ctx2.Err() != nil || !strings.Contains(string(b), `msg="every process given by --pid has exited, and there is no --name to find more: stopping"`) {
		t.Errorf("agent on a process that exits: %v (context %v)\n%s", err, ctx2.Err(), b)
	}
}

func TestSnapshotBadInput(t *testing.T) {
	// A child that is never waited for stays a zombie.
	z := exec.Command("true")
	if err := z.Start(); err != nil {
		t.Fatal(err)
	}
	defer z.Wait()
	testprog.WaitFor(t, badInputWait, func() bool {
		s, err := procstat.Read(z.Process.Pid)
		return err == nil && s.State == 'Z'
	}, "the child to become a zombie")
	pid := sleeper(t)
	runBadInputs(t, []badInput{
		{[]string{"snapshot"}, "macprof snapshot: give the process as -p PID", 2},
		{[]string{"snapshot", "-p", "-3"}, `macprof snapshot: invalid value "-3" for flag -p: not a PID (a positive number): "-3"`, 2},
		{[]string{"snapshot", "-p", pid, "extra"}, `macprof snapshot: unexpected argument "extra": give the process as -p PID`, 2},
		{[]string{"snapshot", "-p", pid, "--max-frames", "0"}, "macprof snapshot: --max-frames must be between 1 and 10000, not 0", 2},
		{[]string{"snapshot", "-p", pid, "--max-frames", "10001"}, "macprof snapshot: --max-frames must be between 1 and 10000, not 10001", 2},
		{[]string{"snapshot", "-p", strconv.Itoa(z.Process.Pid)},
			fmt.Sprintf("macprof snapshot: process %d (true) has exited: it is a zombie until its parent (PID %d) reaps it, and has no stacks", z.Process.Pid, os.Getpid()), 1},
	})
}

// TestSymbolizeBadInput gives symbolize damaged files: every error names
// the file.
func TestSymbolizeBadInput(t *testing.T) {
	dir := t.TempDir()
	exe, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated")
	os.WriteFile(truncated, exe[:3000], 0o644)
	badHeader := filepath.Join(dir, "badheader")
	damaged := bytes.Clone(exe)
	copy(damaged[0x28:], bytes.Repeat([]byte{0xff}, 8)) // e_shoff
	os.WriteFile(badHeader, damaged, 0o644)
	tiny := filepath.Join(dir, "tiny")
	os.WriteFile(tiny, []byte("\x7fE"), 0o644)
	runBadInputs(t, []badInput{
		{[]string{"symbolize", "0x1"}, "macprof symbolize: -o BINARY is required", 2},
		{[]string{"symbolize", "-o", truncated, "0x1"}, "macprof symbolize: " + truncated + ": damaged ELF file: EOF", 1},
		{[]string{"symbolize", "-o", tiny, "0x1"}, "macprof symbolize: " + tiny + ": too short to be a binary", 1},
	})
	// The header's own error text is debug/elf's; what matters is the name.
	macprof, _ := macprofBinary(t)
	b, _ := exec.Command(macprof, "symbolize", "-o", badHeader, "0x1").CombinedOutput()
	if !regexp.MustCompile(`^macprof symbolize: ` + regexp.QuoteMeta(badHeader) + `: damaged ELF file: .+\n$`).Match(b) {
		t.Errorf("a damaged section header offset: %q", b)
	}
}
