// Package collectortest runs a real OpenTelemetry Collector for tests: it
// builds the collector from deploy/ (deploy/build-collector.sh, cached
// between runs), starts it on free loopback ports with a file exporter
// writing into a temporary directory, stops and restarts it on demand, and
// decodes what the file exporter wrote. Windows to send it come from
// internal/fixture.
//
// A collector that cannot be built fails the test with the builder's
// output: it is never skipped. MACPROF_COLLECTOR names a prebuilt binary to
// use instead of building one.
package collectortest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	pb "go.opentelemetry.io/proto/slim/otlp/profiles/v1development"
)

// FeatureGate is the flag the collector needs to accept profiles.
const FeatureGate = "--feature-gates=service.profilesSupport"

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// RepoRoot returns the repository's root directory (found from this source
// file's location).
func RepoRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("collectortest: cannot locate the source tree")
	}
	root := filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
	if _, err := os.Stat(filepath.Join(root, "deploy", "build-collector.sh")); err != nil {
		return "", fmt.Errorf("collectortest: deploy/build-collector.sh not found under %s: %w", root, err)
	}
	return root, nil
}

// Binary returns the collector binary, building it on first use in this
// process (the script skips the build when its cache is current). It fails
// the test, with the build's output, when the collector cannot be built.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		if p := os.Getenv("MACPROF_COLLECTOR"); p != "" {
			if _, err := os.Stat(p); err != nil {
				buildErr = fmt.Errorf("MACPROF_COLLECTOR=%s: %w", p, err)
			}
			buildPath = p
			return
		}
		root, err := RepoRoot()
		if err != nil {
			buildErr = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "/bin/sh", filepath.Join(root, "deploy", "build-collector.sh"))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			buildErr = fmt.Errorf("deploy/build-collector.sh failed: %v\n%s", err, tail(stderr.String(), 4000))
			return
		}
		lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
		buildPath = strings.TrimSpace(lines[len(lines)-1])
		if _, err := os.Stat(buildPath); err != nil {
			buildErr = fmt.Errorf("deploy/build-collector.sh printed %q, which does not exist: %v", buildPath, err)
		}
	})
	if buildErr != nil {
		t.Fatalf("collectortest: cannot build the OpenTelemetry Collector (needs Go and the module proxy; set MACPROF_COLLECTOR to a prebuilt otelcol-macprof to skip the build): %v", buildErr)
	}
	return buildPath
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// Collector is a running (or stopped) collector process.
type Collector struct {
	t testing.TB
	// GRPCAddr and HTTPAddr are the OTLP receiver's loopback addresses.
	GRPCAddr, HTTPAddr string
	// OutFile is where the file exporter writes.
	OutFile string
	// Dir holds the config, output and log.
	Dir string

	bin, config, logPath string
	env                  []string
	mu                   sync.Mutex
	cmd                  *exec.Cmd
	done                 chan struct{}
	waitErr              error
}

// Start builds (if needed) and starts a collector with an OTLP receiver
// (gRPC and HTTP) on free loopback ports, exporting profiles to a file in a
// temporary directory and to the debug exporter. It is stopped when the
// test ends.
func Start(t testing.TB) *Collector {
	t.Helper()
	c := newCollector(t, "")
	conf := fmt.Sprintf(`receivers:
  otlp:
    protocols:
      grpc:
        endpoint: %s
      http:
        endpoint: %s
exporters:
  debug:
    verbosity: basic
  file:
    path: %s
    format: proto
    flush_interval: 100ms
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    profiles:
      receivers: [otlp]
      exporters: [file, debug]
`, c.GRPCAddr, c.HTTPAddr, c.OutFile)
	if err := os.WriteFile(c.config, []byte(conf), 0o600); err != nil {
		t.Fatalf("collectortest: %v", err)
	}
	t.Cleanup(func() { c.Stop() })
	c.Restart()
	return c
}

// newCollector describes a collector (not started) on free loopback ports
// in a temporary directory, with config as its configuration (default: a
// file in that directory).
func newCollector(t testing.TB, config string) *Collector {
	bin := Binary(t)
	dir := t.TempDir()
	if config == "" {
		config = filepath.Join(dir, "collector.yaml")
	}
	return &Collector{
		t:        t,
		bin:      bin,
		Dir:      dir,
		GRPCAddr: freeAddr(t),
		HTTPAddr: freeAddr(t),
		OutFile:  filepath.Join(dir, "profiles.pb"),
		config:   config,
		logPath:  filepath.Join(dir, "collector.log"),
	}
}

// StartDeploy starts a collector with the shipped deploy/otel-collector.yaml:
// its receivers on free loopback ports, its file exporter writing into a
// temporary directory, and env setting the configuration's other variables
// (PYROSCOPE_OTLP_ENDPOINT, ...). It is stopped when the test ends.
func StartDeploy(t testing.TB, env map[string]string) *Collector {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	c := newCollector(t, filepath.Join(root, "deploy", "otel-collector.yaml"))
	c.env = []string{"OTLP_GRPC_LISTEN=" + c.GRPCAddr, "OTLP_HTTP_LISTEN=" + c.HTTPAddr, "MACPROF_PROFILES_FILE=" + c.OutFile}
	for k, v := range env {
		c.env = append(c.env, k+"="+v)
	}
	t.Cleanup(func() { c.Stop() })
	c.Restart()
	return c
}

func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("collectortest: no free port: %v", err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Restart starts the collector again after Stop (or for the first time),
// on the same ports and output file, and waits until both receivers accept
// connections.
func (c *Collector) Restart() {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd != nil {
		c.t.Fatalf("collectortest: collector already running")
	}
	logf, err := os.OpenFile(c.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		c.t.Fatalf("collectortest: %v", err)
	}
	cmd := exec.Command(c.bin, "--config", c.config, FeatureGate)
	if c.env != nil {
		cmd.Env = append(os.Environ(), c.env...)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		c.t.Fatalf("collectortest: starting %s: %v", c.bin, err)
	}
	c.cmd = cmd
	c.done = make(chan struct{})
	go func(done chan struct{}) {
		c.waitErr = cmd.Wait()
		logf.Close()
		close(done)
	}(c.done)
	deadline := time.Now().Add(60 * time.Second)
	for _, addr := range []string{c.GRPCAddr, c.HTTPAddr} {
		for {
			conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
			if err == nil {
				conn.Close()
				break
			}
			select {
			case <-c.done:
				c.t.Fatalf("collectortest: collector exited while starting (%v); log:\n%s", c.waitErr, c.Log())
			default:
			}
			if time.Now().After(deadline) {
				c.t.Fatalf("collectortest: collector not listening on %s after 60 s; log:\n%s", addr, c.Log())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// Stop stops the collector (SIGTERM, then SIGKILL after 10 s) and waits for
// it to exit. Stopping a stopped collector does nothing.
func (c *Collector) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd == nil {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
	c.cmd = nil
}

// Log returns the collector's output so far (its last 16 KiB).
func (c *Collector) Log() string {
	b, err := os.ReadFile(c.logPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	return tail(string(b), 16<<10)
}

// Profiles decodes everything the file exporter wrote so far.
func (c *Collector) Profiles() ([]*pb.ProfilesData, error) { return ReadProfilesFile(c.OutFile) }

// Samples decodes and flattens everything the file exporter wrote so far.
func (c *Collector) Samples() ([]Sample, error) {
	ds, err := c.Profiles()
	if err != nil {
		return nil, err
	}
	var out []Sample
	for _, d := range ds {
		s, err := Flatten(d)
		if err != nil {
			return out, err
		}
		out = append(out, s...)
	}
	return out, nil
}

// WaitSamples polls the file exporter's output until done accepts the
// samples or the timeout passes, then returns the last samples read and
// whether done accepted them.
func (c *Collector) WaitSamples(timeout time.Duration, done func([]Sample) bool) ([]Sample, bool) {
	deadline := time.Now().Add(timeout)
	for {
		s, err := c.Samples()
		if err == nil && done(s) {
			return s, true
		}
		if time.Now().After(deadline) {
			if err != nil {
				c.t.Logf("collectortest: decoding %s: %v", c.OutFile, err)
			}
			return s, false
		}
		time.Sleep(100 * time.Millisecond)
	}
}
