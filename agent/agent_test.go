package agent

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/macprof/macprof/exporter/otlp"
	"github.com/macprof/macprof/exporter/pyroscope"
	"github.com/macprof/macprof/exporter/upload"
	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/sampler"
	"github.com/macprof/macprof/symcache"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/target/targettest"
)

// fake is a process of one busy thread, always in the same stack, until
// its Exit.
func fake(pid int) *targettest.Fake { return targettest.OneThread(pid, 0x1000, 0x2000) }

// fakeQueue keeps what was queued.
type fakeQueue struct {
	mu       sync.Mutex
	items    []string
	meta     []map[string]string
	shutdown bool
}

func (q *fakeQueue) Enqueue(data []byte, meta map[string]string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.items = append(q.items, string(data))
	q.meta = append(q.meta, meta)
	return nil
}
func (q *fakeQueue) Shutdown(ctx context.Context) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.shutdown = true
	return nil
}
func (q *fakeQueue) Stats() upload.Stats {
	q.mu.Lock()
	defer q.mu.Unlock()
	return upload.Stats{Sent: int64(len(q.items))}
}

func (q *fakeQueue) queued() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.items)
}

// fakeSink is an exporter that encodes a window as its sample count.
func fakeSink(name string, q *fakeQueue, fail bool) *Sink {
	return &Sink{Name: name, Target: "nowhere", Queue: q, Encode: func(w *profile.Window, _ *symcache.Cache) ([]upload.Item, error) {
		if fail {
			return nil, errors.New("cannot encode")
		}
		return []upload.Item{{Data: []byte(name + ":" + strings.Repeat("s", int(w.SampleCount()))), Meta: map[string]string{"by": name}}}, nil
	}}
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestRegistry(t *testing.T) {
	var r registry
	a, b := fake(1), fake(2)
	r.add(a)
	r.add(b)
	if !r.has(1) || !r.has(2) || r.has(3) || r.len() != 2 {
		t.Fatalf("after two adds: has 1 %v, 2 %v, 3 %v, len %d", r.has(1), r.has(2), r.has(3), r.len())
	}
	r.remove(1)
	if r.has(1) || r.len() != 1 || a.Closes() > 0 {
		t.Fatalf("after remove: has 1 %v, len %d, closed %v (remove leaves closing to the caller)", r.has(1), r.len(), a.Closes() > 0)
	}
	r.closeAll()
	if b.Closes() == 0 || r.len() != 0 {
		t.Fatalf("closeAll: closed %v, len %d", b.Closes() > 0, r.len())
	}
}

func newTestAgent(t *testing.T, cfg Config) *agent {
	s, err := sampler.New(sampler.Config{Hz: 19, KeepRunning: true})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Log = quietLog()
	return &agent{cfg: cfg, log: cfg.Log, sinks: cfg.Sinks, s: s}
}

// TestWatcherScan matches a fake process list: by short name, by
// executable name, by command line; never itself; only processes of the
// agent's user (issue 27, defect 4); a process that cannot be attached is
// tried once.
func TestWatcherScan(t *testing.T) {
	var tried []int
	const uid = 1000
	owner := map[int]int{100: uid, 101: uid, 102: uid, 103: uid, 104: uid, 105: uid, 106: uid, 107: 0}
	a := newTestAgent(t, Config{Name: regexp.MustCompile(`^(nginx|myapp)$|--serve`), UID: uid, ProcessOwner: func(pid int) (int, bool) {
		u, ok := owner[pid]
		return u, ok
	}, Attach: func(pid int, o target.Options) (target.Target, error) {
		tried = append(tried, pid)
		if !o.Continuous {
			t.Errorf("attach options %+v, want continuous", o)
		}
		if pid == 104 {
			return nil, errors.New("not ours to trace")
		}
		return fake(pid), nil
	}})
	procs := []Process{
		{PID: 1, Names: []string{"myapp"}, UID: uid, HasUID: true}, // the agent itself
		{PID: 100, Names: []string{"nginx"}, UID: uid, HasUID: true},
		{PID: 101, Names: []string{"python3", "myapp"}, UID: uid, HasUID: true},
		{PID: 102, Names: []string{"python3"}, Cmdline: "python3 app.py --serve", UID: uid, HasUID: true},
		{PID: 103, Names: []string{"nginx-helper"}, Cmdline: "nginx-helper", UID: uid, HasUID: true},
		{PID: 104, Names: []string{"myapp"}, UID: uid, HasUID: true},
		{PID: 110, Names: []string{"myapp"}, UID: 1001, HasUID: true}, // another user's
		{PID: 111, Names: []string{"myapp"}, UID: 0, HasUID: true},    // root's
		{PID: 112, Names: []string{"myapp"}},                          // ids differ: setuid
		{PID: 107, Names: []string{"myapp"}, UID: uid, HasUID: true},  // exec'd a setuid program since
	}
	w := &watcher{a: a, self: 1, list: func() []Process { return procs }, failed: map[int]bool{}}
	w.scan()
	if want := []int{100, 101, 102, 104, 107}; !slices.Equal(tried, want) {
		t.Errorf("first scan attached %v, want %v", tried, want)
	}
	if a.targets.has(107) {
		t.Error("a process that no longer runs as the user is profiled")
	}
	procs = append(procs, Process{PID: 105, Names: []string{"myapp"}, UID: uid, HasUID: true})
	tried = nil
	w.scan()
	if want := []int{105}; !slices.Equal(tried, want) {
		t.Errorf("second scan attached %v, want only the new process %v", tried, want)
	}
	if a.targets.len() != 4 || a.targets.has(104) {
		t.Errorf("registry holds %d targets (104: %v), want 100, 101, 102, 105", a.targets.len(), a.targets.has(104))
	}
}

// TestExportFansOut sends a window to two exporters; one whose encoding
// fails does not keep the others from theirs, and an empty window is not
// sent.
func TestExportFansOut(t *testing.T) {
	q1, q2, q3 := &fakeQueue{}, &fakeQueue{}, &fakeQueue{}
	a := newTestAgent(t, Config{Sinks: []*Sink{fakeSink("one", q1, false), fakeSink("bad", q3, true), fakeSink("two", q2, false)}})
	cache := symcache.New(symcache.Options{})
	a.export(&profile.Window{Stacks: make([]profile.Stack, 1), Samples: []profile.Sample{{Count: 3}}}, cache)
	a.export(&profile.Window{}, cache)
	if got := q1.queued(); !slices.Equal(got, []string{"one:sss"}) || q1.meta[0]["by"] != "one" {
		t.Errorf("first exporter got %q %v", got, q1.meta)
	}
	if got := q2.queued(); !slices.Equal(got, []string{"two:sss"}) {
		t.Errorf("second exporter got %q", got)
	}
	if len(q3.queued()) != 0 || a.encodeErrors.Load() != 1 {
		t.Errorf("failing exporter queued %q, %d encode errors", q3.queued(), a.encodeErrors.Load())
	}
}

// TestRun runs the agent on a fake process for two windows: each exporter
// gets them, queues are shut down, targets closed, and the log says so.
func TestRun(t *testing.T) {
	q1, q2 := &fakeQueue{}, &fakeQueue{}
	closed := 0
	s1 := fakeSink("one", q1, false)
	s1.Close = func() error { closed++; return nil }
	tg := fake(7)
	var log bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
	defer cancel()
	code := Run(ctx, Config{PIDs: []int{7}, Hz: 20, Window: time.Second, Mode: profile.ModeWall, ShutdownTimeout: time.Second,
		Telemetry: "none", Sinks: []*Sink{s1, fakeSink("two", q2, false)}, Log: slog.New(slog.NewTextHandler(&log, nil)),
		Attach: func(pid int, o target.Options) (target.Target, error) { return tg, nil }})
	if code != 0 {
		t.Errorf("status %d:\n%s", code, log.String())
	}
	for _, q := range []*fakeQueue{q1, q2} {
		if n := len(q.queued()); n < 2 || !q.shutdown {
			t.Errorf("exporter queued %d windows (want 2 or 3), shut down %v", n, q.shutdown)
		}
	}
	if tg.Closes() == 0 || closed != 1 {
		t.Errorf("target closed %v, sink closed %d times", tg.Closes() > 0, closed)
	}
	for _, want := range []string{"msg=profiling pid=7", "msg=\"exporter stopped\" exporter=one sent=", "windows_dropped=0 encode_errors=0"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}

	// No process named can be profiled, and there is no name to find
	// more: status 1, at once.
	code = Run(context.Background(), Config{PIDs: []int{8, 9}, Hz: 20, Window: time.Second, Telemetry: "none", Log: quietLog(),
		Attach: func(int, target.Options) (target.Target, error) { return nil, errors.New("no such process") }})
	if code != 1 {
		t.Errorf("status %d for processes that cannot be profiled, want 1", code)
	}
}

// TestRunStopsWhenPIDsExit runs the agent on two processes, one that
// cannot be profiled and one that exits: without a name to find more, it
// stops then rather than run on doing nothing; the last window is sent.
func TestRunStopsWhenPIDsExit(t *testing.T) {
	q := &fakeQueue{}
	tg := fake(7)
	go func() {
		time.Sleep(300 * time.Millisecond)
		tg.Exit()
	}()
	var log bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Run(context.Background(), Config{PIDs: []int{6, 7}, Hz: 20, Window: time.Minute, Mode: profile.ModeWall, ShutdownTimeout: time.Second,
			Telemetry: "none", Sinks: []*Sink{fakeSink("one", q, false)}, Log: slog.New(slog.NewTextHandler(&log, nil)),
			Attach: func(pid int, o target.Options) (target.Target, error) {
				if pid == 6 {
					return nil, errors.New("no such process")
				}
				return tg, nil
			}})
	}()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("status %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the agent runs on with every process gone")
	}
	if n := len(q.queued()); n != 1 || tg.Closes() == 0 {
		t.Errorf("%d windows sent, want the last one; target closed %v", n, tg.Closes() > 0)
	}
	if !strings.Contains(log.String(), `msg="every process given by --pid has exited, and there is no --name to find more: stopping"`) {
		t.Errorf("log:\n%s", log.String())
	}
}

func TestApplyConfigFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.json")
	if err := os.WriteFile(path, []byte(`{"name": "^myapp$", "pid": [12, 34], "F": 49, "v": true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	newFlags := func() (*flag.FlagSet, *string, *[]string, *int, *bool) {
		fs := flag.NewFlagSet("agent", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var pids []string
		fs.Func("pid", "", func(s string) error { pids = append(pids, s); return nil })
		fs.String("config", "", "")
		return fs, fs.String("name", "", ""), &pids, fs.Int("F", 19, ""), fs.Bool("v", false, "")
	}
	for _, args := range [][]string{{"--config", path}, {"-config=" + path, "-F", "99"}} {
		fs, name, pids, hz, v := newFlags()
		if err := ApplyConfigFile(fs, args); err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		wantHz := 49
		if slices.Contains(args, "-F") {
			wantHz = 99 // the command line wins
		}
		if *name != "^myapp$" || !slices.Equal(*pids, []string{"12", "34"}) || *hz != wantHz || !*v {
			t.Errorf("%q: name %q pids %q F %d v %v", args, *name, *pids, *hz, *v)
		}
	}
	fs, _, _, _, _ := newFlags()
	if err := ApplyConfigFile(fs, []string{"--", "--config", path}); err != nil {
		t.Errorf("--config after --: %v", err)
	}
	os.WriteFile(path, []byte(`{"nmae": "x"}`), 0o644)
	if err := ApplyConfigFile(fs, []string{"--config", path}); err == nil || !strings.Contains(err.Error(), `unknown setting "nmae"`) {
		t.Errorf("an unknown setting: %v", err)
	}
	// A value that is not a string, number or boolean is refused, not
	// turned into the text "<nil>" or "map[...]".
	for body, want := range map[string]string{
		`{"name": null}`:         "name: want a string, number or boolean (or an array of them), not null",
		`{"pid": [1, null]}`:     "pid: want a string, number or boolean (or an array of them), not null",
		`{"name": {"a": "b"}}`:   "name: want a string, number or boolean (or an array of them), not an object",
		`{"pid": [[1, 2], [3]]}`: "pid: want a string, number or boolean (or an array of them), not a nested array",
	} {
		fs, name, _, _, _ := newFlags()
		os.WriteFile(path, []byte(body), 0o644)
		if err := ApplyConfigFile(fs, []string{"--config", path}); err == nil || err.Error() != "config "+path+": "+want || *name != "" {
			t.Errorf("%s: err %v, name %q", body, err, *name)
		}
	}
}

func TestTelemetryChoice(t *testing.T) {
	for _, tc := range []struct {
		mode, endpoint, protocol string
		on                       bool
		err                      string
	}{
		{mode: "auto"},
		{mode: "auto", endpoint: "http://localhost:4318", protocol: "http/protobuf", on: true},
		{mode: "auto", endpoint: "localhost:4317", protocol: "grpc", on: true},
		{mode: "none", endpoint: "localhost:4317"},
		{mode: "stdout", on: true},
		{mode: "bogus", err: `--telemetry must be otlp, stdout, none or auto, not "bogus"`},
	} {
		a := newTestAgent(t, Config{Telemetry: tc.mode, OTLP: otlp.Config{Endpoint: tc.endpoint, Protocol: tc.protocol}})
		tel, err := a.startTelemetry(context.Background())
		if (tel != nil) != tc.on || (err != nil) != (tc.err != "") || err != nil && err.Error() != tc.err {
			t.Errorf("%+v: telemetry %v, err %v", tc, tel != nil, err)
		}
		if tel != nil {
			tel.window(context.Background(), &profile.Window{Stacks: make([]profile.Stack, 1), Samples: []profile.Sample{{Count: 2}}})
			// Nothing listens at the OTLP endpoints: do not wait for them.
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			tel.shutdown(ctx)
			cancel()
		}
	}
}

// With http/protobuf (the default protocol), the agent's own metrics go
// over HTTP to /v1/metrics beside the profiles' path, with the profiles'
// headers.
func TestTelemetryOverHTTP(t *testing.T) {
	var mu sync.Mutex
	var paths, bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		paths = append(paths, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type")+" "+r.Header.Get("X-Team"))
		bodies = append(bodies, string(b))
		mu.Unlock()
	}))
	defer srv.Close()
	a := newTestAgent(t, Config{Telemetry: "auto", OTLP: otlp.Config{Endpoint: srv.URL + "/otlp/v1development/profiles",
		Headers: map[string]string{"X-Team": "perf"}}})
	tel, err := a.startTelemetry(context.Background())
	if err != nil || tel == nil {
		t.Fatalf("telemetry %v, err %v", tel, err)
	}
	tel.window(context.Background(), &profile.Window{Stacks: make([]profile.Stack, 1), Samples: []profile.Sample{{Count: 2}},
		Missed: map[profile.MissReason]int64{profile.MissStopTimeout: 1}})
	tel.shutdown(context.Background())
	mu.Lock()
	defer mu.Unlock()
	if len(paths) == 0 || paths[0] != "POST /otlp/v1/metrics application/x-protobuf perf" {
		t.Fatalf("requests %q, want POST /otlp/v1/metrics with the profiles' header", paths)
	}
	if all := strings.Join(bodies, ""); !strings.Contains(all, "macprof.samples.missed") || !strings.Contains(all, "stop_timeout") {
		t.Errorf("metrics lack macprof.samples.missed with reason stop_timeout")
	}
}

// In cpu mode the agent asks the backend for kernel samples at its period
// (as record does), drained at most agentMaxDrainInterval apart and sooner
// when a buffer is half full; with StopThreads, and in wall mode, it does
// not.
func TestAttachKernelSamples(t *testing.T) {
	for _, tc := range []struct {
		mode profile.Mode
		stop bool
		want time.Duration
	}{
		{profile.ModeCPU, false, time.Second / 19},
		{profile.ModeCPU, true, 0},
		{profile.ModeWall, false, 0},
	} {
		var got target.Options
		a := newTestAgent(t, Config{Hz: 19, Mode: tc.mode, StopThreads: tc.stop, Attach: func(pid int, o target.Options) (target.Target, error) {
			got = o
			return fake(pid), nil
		}})
		if err := a.attach(42, nil); err != nil {
			t.Fatal(err)
		}
		if !got.Continuous || got.Kernel.Period != tc.want {
			t.Errorf("mode %v stop %v: options %+v, want continuous with kernel sample period %v", tc.mode, tc.stop, got, tc.want)
		}
		if kernel := tc.want > 0; (got.Kernel.SamplesWaiting != nil) != kernel || got.Kernel.MaxDrainInterval != agentMaxDrainInterval {
			t.Errorf("mode %v stop %v: woken by half-full buffers %v, drains at most %v apart; want %v and %v",
				tc.mode, tc.stop, got.Kernel.SamplesWaiting != nil, got.Kernel.MaxDrainInterval, kernel, agentMaxDrainInterval)
		}
	}
}

// idleTarget is a process with no thread to sample: it gives no samples.
type idleTarget struct{ *targettest.Fake }

func (f *idleTarget) Threads(dst []target.ThreadID) ([]target.ThreadID, error) { return dst[:0], nil }

// An exporter whose endpoint does not answer is never silent, even when
// there is nothing to send: once the first window is over it probes the
// endpoint and logs WARN with the reason, and the run exits 1; with an
// endpoint that takes the (empty) probe, it says so at INFO and exits 0.
func TestRunIdleTargetDeadExporter(t *testing.T) {
	live := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	defer live.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	for _, c := range []struct {
		endpoint string
		status   int
		want     string
	}{
		{dead.URL, 1, `level=WARN msg="exporter: nothing sent in the first window, and its endpoint does not take an empty export" exporter=otlp`},
		{live.URL, 0, `level=INFO msg="exporter: nothing to send in the first window (no samples); its endpoint answers" exporter=otlp`},
	} {
		sinks, err := NewSinks(Exporters{OTLP: otlp.Config{Endpoint: c.endpoint}, Window: time.Second, Log: quietLog()})
		if err != nil {
			t.Fatal(err)
		}
		var log safeLog
		start := time.Now()
		code := Run(context.Background(), Config{PIDs: []int{7}, Hz: 20, Window: 300 * time.Millisecond, Duration: 1500 * time.Millisecond,
			Mode: profile.ModeCPU, ShutdownTimeout: time.Second, Telemetry: "none", Sinks: sinks, Log: slog.New(slog.NewTextHandler(&log, nil)),
			Attach: func(pid int, o target.Options) (target.Target, error) { return &idleTarget{fake(pid)}, nil }})
		out := log.String()
		if code != c.status {
			t.Errorf("%s: status %d, want %d:\n%s", c.endpoint, code, c.status, out)
		}
		i := strings.Index(out, c.want)
		if i < 0 {
			t.Errorf("%s: log lacks %s:\n%s", c.endpoint, c.want, out)
			continue
		}
		if line := out[i:]; c.status == 1 && !strings.Contains(line[:strings.IndexByte(line, '\n')], "connection refused") {
			t.Errorf("the warning does not say why: %s", line)
		}
		if c.status == 1 && !strings.Contains(out, "exporter stopped: its endpoint never took an export in the whole run") {
			t.Errorf("no error at the end of the run:\n%s", out)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("run took %v", d)
		}
	}
}

// safeLog is a log buffer written from several goroutines.
type safeLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *safeLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *safeLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The agent's own metrics refused (Grafana Pyroscope's OTLP port has no
// /v1/metrics: 404) are logged at WARN with the reason, like failed
// profile exports, and a run whose metrics never got through fails.
func TestTelemetryFailuresLogged(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	var log safeLog
	a := newTestAgent(t, Config{Telemetry: "otlp", OTLP: otlp.Config{Endpoint: srv.URL}})
	a.log = slog.New(slog.NewTextHandler(&log, nil))
	tel, err := a.startTelemetry(context.Background())
	if err != nil || tel == nil {
		t.Fatalf("telemetry %v, err %v", tel, err)
	}
	tel.window(context.Background(), &profile.Window{Stacks: make([]profile.Stack, 1), Samples: []profile.Sample{{Count: 2}}})
	if tel.shutdown(context.Background()) {
		t.Error("shutdown reports success for metrics refused every time")
	}
	out := log.String()
	for _, want := range []string{`level=WARN msg="agent metrics: export failed"`, "404", "--telemetry none",
		`level=ERROR msg="agent metrics stopped: no export succeeded since start"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

// With -v each queued window is logged with its number of samples (the
// sum of their counts), not of its distinct sample entries.
func TestExportLogsSampleCount(t *testing.T) {
	q := &fakeQueue{}
	a := newTestAgent(t, Config{Sinks: []*Sink{fakeSink("one", q, false)}})
	var log safeLog
	a.log = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a.export(&profile.Window{Stacks: make([]profile.Stack, 2), Samples: []profile.Sample{{Stack: 0, Count: 3}, {Stack: 1, Count: 4}}},
		symcache.New(symcache.Options{}))
	if !strings.Contains(log.String(), "samples=7 stacks=2") {
		t.Errorf("log does not count 7 samples in 2 stacks:\n%s", log.String())
	}
}

// The user's resource attributes label every Pyroscope push as they label
// OTLP resources, dots turned into underscores, --pyroscope-label's over
// them; service.name is the service, not a label.
func TestPyroscopeGetsResourceAttributes(t *testing.T) {
	sinks, err := NewSinks(Exporters{
		OTLP:      otlp.Config{ResourceAttributes: map[string]string{"deployment.environment.name": "prod", "team": "a", "service.name": "s"}},
		Pyroscope: &pyroscope.Config{URL: "http://127.0.0.1:1", Labels: map[string]string{"team": "b"}, HostName: "h"},
		Window:    time.Second, Log: quietLog()})
	if err != nil || len(sinks) != 1 {
		t.Fatalf("%d sinks, %v", len(sinks), err)
	}
	defer closeSinks(sinks)
	items, err := sinks[0].Encode(&profile.Window{Period: 10 * time.Millisecond, Stacks: []profile.Stack{{PCs: []uint64{0x1000}}},
		Samples: []profile.Sample{{Stack: 0, PID: 5, Thread: 5, Count: 1}}}, symcache.New(symcache.Options{}))
	if err != nil || len(items) != 1 {
		t.Fatalf("%d items, %v", len(items), err)
	}
	if name := items[0].Meta[pyroscope.MetaName]; name != "unknown_service{deployment_environment_name=prod,host_name=h,process_pid=5,team=b}" {
		t.Errorf("push name %q", name)
	}
}

// TestWatcherQuietAboutExitedProcesses: a matching process that exited
// before the attach (a zombie the process list still shows, its profile
// dropped) is no warning; one that cannot be traced is.
func TestWatcherQuietAboutExitedProcesses(t *testing.T) {
	const uid = 1000
	var logged bytes.Buffer
	a := newTestAgent(t, Config{Name: regexp.MustCompile(`^myapp$`), UID: uid, ProcessOwner: func(int) (int, bool) { return uid, true },
		Attach: func(pid int, o target.Options) (target.Target, error) {
			if pid == 200 {
				return nil, fmt.Errorf("cannot attach to PID %d: it exited (%w)", pid, target.ErrExited)
			}
			return nil, errors.New("not ours to trace")
		}})
	a.log = slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelWarn}))
	procs := []Process{{PID: 200, Names: []string{"myapp"}, UID: uid, HasUID: true}, {PID: 201, Names: []string{"myapp"}, UID: uid, HasUID: true}}
	w := &watcher{a: a, self: 1, list: func() []Process { return procs }, failed: map[int]bool{}}
	w.scan()
	if s := logged.String(); strings.Contains(s, "pid=200") || !strings.Contains(s, "pid=201") {
		t.Errorf("warnings:\n%s\nwant one for 201 (not ours), none for 200 (exited)", s)
	}
}
