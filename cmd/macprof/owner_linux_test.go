//go:build linux && (amd64 || arm64)

package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	collpb "go.opentelemetry.io/proto/slim/otlp/collector/profiles/v1development"
	pb "go.opentelemetry.io/proto/slim/otlp/profiles/v1development"
	"google.golang.org/protobuf/proto"

	"github.com/macprof/macprof/internal/collectortest"
)

// otlpSink is an OTLP/HTTP endpoint that keeps the resources of what it
// receives: process.pid -> process.user.id ("" when absent).
type otlpSink struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen map[string]string
	reqs []string // request URIs and headers, for leaks
}

func newOTLPSink(t *testing.T) *otlpSink {
	s := &otlpSink{seen: map[string]string{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		defer s.mu.Unlock()
		s.reqs = append(s.reqs, r.URL.RequestURI())
		var req collpb.ExportProfilesServiceRequest
		if proto.Unmarshal(body, &req) != nil {
			return // metrics, or not a profile
		}
		samples, err := collectortest.Flatten(&pb.ProfilesData{ResourceProfiles: req.ResourceProfiles, Dictionary: req.Dictionary})
		if err != nil {
			t.Errorf("profiles received: %v", err)
			return
		}
		for _, x := range samples {
			s.seen[x.Resource["process.pid"]] = x.Resource["process.user.id"]
		}
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *otlpSink) received() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for k, v := range s.seen {
		out[k] = v
	}
	return out
}

// startAs starts bin, busy, as the user cred names (nil: the test's own).
func startAs(t *testing.T, bin string, cred *syscall.Credential) int {
	t.Helper()
	cmd := exec.Command(bin, "-threads", "1", "-duration", "0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid
}

// runAgentBounded runs macprof agent with args to its end (bounded) and returns
// its log.
func runAgentBounded(t *testing.T, args ...string) string {
	t.Helper()
	macprof, _ := macprofBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, macprof, append([]string{"agent"}, args...)...).CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("agent %q still running after 30 s: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestAgentNameTakesOnlyItsUsersProcesses: two processes of the same name,
// one of the agent's user (root) and one of another (uid 65534): --name
// attaches the agent's user's only, --user 65534 the other's only, and each
// profile says whose process it is (issue 27, defect 4).
func TestAgentNameTakesOnlyItsUsersProcesses(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test starts a process of another user: run it as root")
	}
	_, demo := macprofBinary(t)
	dir, err := os.MkdirTemp("", "macprof-owner-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil { // uid 65534 runs from it
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "ownedapp")
	b, err := os.ReadFile(demo)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	mine := strconv.Itoa(startAs(t, bin, nil))
	other := strconv.Itoa(startAs(t, bin, &syscall.Credential{Uid: 65534, Gid: 65534}))
	profiling := regexp.MustCompile(`msg=profiling pid=(\d+)`)
	for _, tc := range []struct {
		user          []string
		want, wantUID string
		not           string
	}{
		{nil, mine, "0", other},
		{[]string{"--user", "65534"}, other, "65534", mine},
	} {
		sink := newOTLPSink(t)
		args := append([]string{"--name", "^ownedapp$", "--rescan", "200ms", "--window", "1s", "-F", "49", "-d", "3s",
			"--telemetry", "none", "--otlp-endpoint", sink.srv.URL}, tc.user...)
		log := runAgentBounded(t, args...)
		var attached []string
		for _, m := range profiling.FindAllStringSubmatch(log, -1) {
			attached = append(attached, m[1])
		}
		if len(attached) != 1 || attached[0] != tc.want {
			t.Errorf("agent %q attached %v; want only %s, not %s (another user's)\n%s", tc.user, attached, tc.want, tc.not, log)
		}
		got := sink.received()
		if uid, ok := got[tc.want]; !ok || uid != tc.wantUID {
			t.Errorf("agent %q: profiles by process.pid -> process.user.id %v; want %s -> %s", tc.user, got, tc.want, tc.wantUID)
		}
		if _, ok := got[tc.not]; ok {
			t.Errorf("agent %q exported profiles of %s, another user's process", tc.user, tc.not)
		}
	}
}

// TestAgentRefusesHostileSetup: a spool directory that is /etc or that
// others can write, a config header with CR LF, and a --user that is not
// one are refused with status 2 before anything runs, and /etc gets no
// otlp folder (issue 27, defects 3 and 8).
func TestAgentRefusesHostileSetup(t *testing.T) {
	dir := t.TempDir()
	open := filepath.Join(dir, "open")
	if err := os.Mkdir(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	crlf := filepath.Join(dir, "crlf.json")
	if err := os.WriteFile(crlf, []byte(`{"otlp-header": "X-Api-Key=abc\r\nX-Evil: 1"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, etcOtlp := os.Stat("/etc/otlp")
	const ep = "--otlp-endpoint=localhost:1"
	pid := sleeper(t)
	runBadInputs(t, []badInput{
		{[]string{"agent", "--pid", pid, ep, "--spool-dir", "/etc"}, "macprof agent: OTLP queue: upload: spool directory /etc has mode 0755: others could read its items or plant their own; the spool needs a directory of its own with mode 0700 (mkdir -m 700 a new one)", 2},
		{[]string{"agent", "--pid", pid, ep, "--spool-dir", open}, "macprof agent: OTLP queue: upload: spool directory " + open + " has mode 0777: others could read its items or plant their own; the spool needs a directory of its own with mode 0700 (mkdir -m 700 a new one)", 2},
		{[]string{"agent", "--pid", pid, "--config", crlf, ep}, `macprof agent: OTLP exporter: otlp: header X-Api-Key: its value has a control character ('\r')`, 2},
		{[]string{"agent", "--name", "x", "--user", "no-such-user-27", ep}, "macprof agent: --user: user: unknown user no-such-user-27", 2},
		{[]string{"agent", "--pid", pid, "--user", "0", ep}, "macprof agent: --user picks whose processes --name takes: give --name too", 2},
	})
	if _, err := os.Stat("/etc/otlp"); err == nil && etcOtlp != nil {
		os.Remove("/etc/otlp")
		t.Error("--spool-dir /etc created /etc/otlp")
	}
}

// TestAgentLogRedactsCredentials: the password and API key of an endpoint's
// URL appear in no line the agent logs, through exports that fail and
// succeed (issue 27, defect 8).
func TestAgentLogRedactsCredentials(t *testing.T) {
	_, demo := macprofBinary(t)
	startAs(t, demo, nil)
	sink := newOTLPSink(t)
	ep := strings.Replace(sink.srv.URL, "http://", "http://ann:hunter2@", 1) + "/v1development/profiles?api_key=s3cret"
	log := runAgentBounded(t, "--name", onlyThis(demo), "--rescan", "200ms", "--window", "1s", "-F", "49", "-d", "2s", "-v",
		"--otlp-endpoint", ep, "--pyroscope-url", "http://bob:hunter2@127.0.0.1:1", "--telemetry", "none", "--shutdown-timeout", "1s")
	if strings.Contains(log, "hunter2") || strings.Contains(log, "s3cret") || !strings.Contains(log, "REDACTED") {
		t.Errorf("the agent's log shows a credential:\n%s", log)
	}
	if len(sink.received()) == 0 {
		t.Errorf("the endpoint received no profile\n%s", log)
	}
}
