package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"regexp"
	"runtime/debug"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/macprof/macprof/exporter/otlp"
	"github.com/macprof/macprof/exporter/pyroscope"
	"github.com/macprof/macprof/exporter/upload"
	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/sampler"
	"github.com/macprof/macprof/symcache"
	"github.com/macprof/macprof/target"
)

func init() {
	register(command{name: "agent", summary: "profile processes continuously and export to an OpenTelemetry collector or Pyroscope", run: runAgent})
}

const agentHelp = `
Samples the given processes continuously, in windows (15 s by default), and
sends each window to an OpenTelemetry Collector (OTLP profiles, gRPC or HTTP)
and/or to Grafana Pyroscope. Made to run always-on across a fleet:

  - a low default rate (19 Hz) keeps its cost on the target under 1%;
  - processes named by --name are looked up again every --rescan: new ones
    are picked up, exited ones dropped without noise;
  - windows wait in a bounded queue (and, with --spool-dir, on disk across
    restarts) while an exporter is down, are retried with backoff and
    jitter, and the oldest are dropped (and counted) when the queue is full;
  - SIGTERM or SIGINT flushes what is queued within --shutdown-timeout.

The OTLP exporter honours the standard OTEL_EXPORTER_OTLP_* variables
(endpoint, headers, protocol, TLS, timeout, compression), OTEL_SERVICE_NAME
and OTEL_RESOURCE_ATTRIBUTES; flags override them. A collector needs
--feature-gates=service.profilesSupport to accept profiles (deploy/ has a
configuration). The agent's own metrics (samples taken and missed, stop
times, exports, queue depth) go to the same collector as OTLP metrics, or to
stdout with --telemetry stdout.

--config FILE reads flags from a JSON object ({"name": "^myapp$",
"otlp-endpoint": "collector:4317", "pid": [12, 34]}); flags on the command
line win.

Examples:
  macprof agent --name '^(nginx|myapp)$' --otlp-endpoint localhost:4317 --otlp-insecure
  OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318 OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf macprof agent --pid 1234
  macprof agent --name myapp --pyroscope-url http://pyroscope:4040 --pyroscope-app myapp.cpu
`

// intsFlag is a repeatable integer flag.
type intsFlag []int

func (f *intsFlag) String() string { return fmt.Sprint([]int(*f)) }
func (f *intsFlag) Set(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return fmt.Errorf("not a PID: %q", v)
	}
	*f = append(*f, n)
	return nil
}

// procEntry is one process of the system, for --name matching.
type procEntry struct {
	pid     int
	names   []string // short name, executable base name
	cmdline string
}

// agentConfig is what runAgent parsed.
type agentConfig struct {
	pids            []int
	name            *regexp.Regexp
	hz              int
	window, rescan  time.Duration
	mode            profile.Mode
	duration        time.Duration
	shutdownTimeout time.Duration
	telemetry       string
	opts            target.Options
}

func runAgent(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("agent", "macprof agent [--pid PID]... [--name REGEX] [exporter flags]", agentHelp, stderr)
	var pids intsFlag
	fs.Var(&pids, "pid", "profile process `PID` (repeatable)")
	name := fs.String("name", "", "profile every process whose name, executable or command line matches `REGEX`")
	hz := fs.Int("F", sampler.DefaultAgentHz, "sampling rate in `HZ` per thread")
	window := fs.Duration("window", 15*time.Second, "export a profile every `DURATION`")
	rescan := fs.Duration("rescan", 10*time.Second, "look for processes matching --name every `DURATION`")
	mode := fs.String("mode", "cpu", "`MODE`: cpu or wall")
	dur := fs.Duration("d", 0, "stop after `DURATION` (0: run until SIGTERM)")
	shutdown := fs.Duration("shutdown-timeout", 10*time.Second, "how long SIGTERM may take to flush queued windows")
	spool := fs.String("spool-dir", os.Getenv("MACPROF_SPOOL"), "keep queued windows in `DIR` too, so that a restart sends them (default $MACPROF_SPOOL)")
	queueItems := fs.Int("queue-windows", 64, "queue at most `N` windows per exporter")
	queueBytes := fs.Int64("queue-bytes", 64<<20, "queue at most `BYTES` per exporter")
	retryMax := fs.Duration("retry-max", 0, "longest wait between export retries (default: the window length, so that a recovered exporter is used again within one window)")
	telemetry := fs.String("telemetry", "auto", "the agent's own metrics: `WHERE` = otlp, stdout, none, or auto (otlp when an OTLP endpoint is set)")
	logFormat := fs.String("log-format", "text", "log as `FORMAT` text or json (to stderr)")
	verbose := fs.Bool("v", false, "log each export")
	configFile := fs.String("config", "", "read flags from a JSON `FILE`")
	otlpFlags := otlp.BindFlags(fs, "otlp-")
	pyroFlags := pyroscope.BindFlags(fs, "pyroscope-")

	// A config file is applied first, then the command line over it.
	if path := configPathFrom(args); path != "" {
		if err := applyConfigFile(fs, path); err != nil {
			fmt.Fprintf(stderr, "macprof agent: %v\n", err)
			return 2
		}
	}
	if st, ok := parseFlags(fs, args); !ok {
		return st
	}
	_ = configFile // applied above, before the command line
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "macprof agent: "+format+"\n", a...)
		return 2
	}
	cfg := agentConfig{opts: target.Options{Continuous: true}, pids: pids, hz: *hz, window: *window, rescan: *rescan, duration: *dur, shutdownTimeout: *shutdown, telemetry: *telemetry}
	if *name != "" {
		re, err := regexp.Compile(*name)
		if err != nil {
			return fail("--name: %v", err)
		}
		cfg.name = re
	}
	if len(cfg.pids) == 0 && cfg.name == nil {
		return fail("name the processes to profile: --pid PID and/or --name REGEX")
	}
	switch *mode {
	case "cpu":
		cfg.mode = profile.ModeCPU
	case "wall":
		cfg.mode = profile.ModeWall
	default:
		return fail("--mode must be cpu or wall")
	}
	if cfg.window < time.Second || cfg.rescan < 100*time.Millisecond {
		return fail("--window must be at least 1s and --rescan at least 100ms")
	}

	var level slog.LevelVar
	if *verbose {
		level.Set(slog.LevelDebug)
	}
	var handler slog.Handler = slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: &level})
	if *logFormat == "json" {
		handler = slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: &level})
	}
	log := slog.New(handler)

	// Exporters.
	var sinks []*agentSink
	otlpCfg, err := otlpFlags.Resolve(os.Getenv)
	if err != nil {
		return fail("%v", err)
	}
	host, _ := os.Hostname()
	version := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		version = bi.Main.Version
	}
	uploadCfg := func(name string) upload.Config {
		dir := ""
		if *spool != "" {
			dir = *spool + string(os.PathSeparator) + name
		}
		maxBackoff := *retryMax
		if maxBackoff <= 0 {
			maxBackoff = *window
		}
		return upload.Config{Name: name, MaxItems: *queueItems, MaxBytes: *queueBytes, SpoolDir: dir, Logger: log,
			InitialBackoff: min(time.Second, maxBackoff), MaxBackoff: maxBackoff}
	}
	if otlpCfg.Endpoint != "" {
		exp, err := otlp.New(otlpCfg)
		if err != nil {
			return fail("OTLP exporter: %v", err)
		}
		defer exp.Close()
		up, err := upload.New(exp.Sink(), uploadCfg("otlp"))
		if err != nil {
			return fail("OTLP queue: %v", err)
		}
		bo := otlpCfg.BuildOptions(host, version)
		sinks = append(sinks, &agentSink{name: "otlp", target: exp.Target(), up: up, encode: func(w *profile.Window, c *symcache.Cache) ([]byte, map[string]string, error) {
			b, err := otlp.Marshal(w, c, bo)
			return b, nil, err
		}})
	}
	if pcfg, enabled := pyroFlags.Config(os.Getenv); enabled {
		cl, err := pyroscope.New(pcfg)
		if err != nil {
			return fail("Pyroscope exporter: %v", err)
		}
		up, err := upload.New(cl, uploadCfg("pyroscope"))
		if err != nil {
			return fail("Pyroscope queue: %v", err)
		}
		sinks = append(sinks, &agentSink{name: "pyroscope", target: cl.Target(), up: up, encode: pyroscope.Encode})
	}
	if len(sinks) == 0 {
		return fail("no exporter: set --otlp-endpoint (or OTEL_EXPORTER_OTLP_ENDPOINT) and/or --pyroscope-url")
	}
	a := &agent{cfg: cfg, log: log, sinks: sinks, targets: map[int]target.Target{}}
	return a.run(otlpCfg, host)
}

// configPathFrom finds --config in args before the flags are parsed.
func configPathFrom(args []string) string {
	for i, a := range args {
		for _, p := range []string{"--config", "-config"} {
			if a == p && i+1 < len(args) {
				return args[i+1]
			}
			if len(a) > len(p)+1 && a[:len(p)+1] == p+"=" {
				return a[len(p)+1:]
			}
		}
		if a == "--" {
			break
		}
	}
	return ""
}

// applyConfigFile sets flags from a JSON object: strings, numbers, booleans,
// or arrays of them for repeatable flags.
func applyConfigFile(fs *flag.FlagSet, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "config" || fs.Lookup(k) == nil {
			return fmt.Errorf("config %s: unknown setting %q (settings are the agent's flag names)", path, k)
		}
		vals, ok := m[k].([]any)
		if !ok {
			vals = []any{m[k]}
		}
		for _, v := range vals {
			s := fmt.Sprint(v)
			if f, ok := v.(float64); ok {
				s = strconv.FormatFloat(f, 'f', -1, 64)
			}
			if err := fs.Set(k, s); err != nil {
				return fmt.Errorf("config %s: %s: %w", path, k, err)
			}
		}
	}
	return nil
}

// agentSink is one exporter behind its upload queue.
type agentSink struct {
	name, target string
	up           *upload.Uploader
	encode       func(*profile.Window, *symcache.Cache) ([]byte, map[string]string, error)
}

type agent struct {
	cfg   agentConfig
	log   *slog.Logger
	sinks []*agentSink

	mu      sync.Mutex
	targets map[int]target.Target
	s       *sampler.Sampler

	windowsDropped, encodeErrors int64
}

func (a *agent) run(otlpCfg otlp.Config, host string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	if a.cfg.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, a.cfg.duration)
		defer cancel()
	}
	tel, err := a.startTelemetry(ctx, otlpCfg)
	if err != nil {
		a.log.Warn("agent metrics disabled", "err", err)
	}

	windows := make(chan *profile.Window, 4)
	s, err := sampler.New(sampler.Config{
		Hz:          a.cfg.hz,
		Mode:        a.cfg.mode,
		Window:      a.cfg.window,
		KeepRunning: true,
		OnWindow: func(w *profile.Window) {
			select {
			case windows <- w:
			default:
				// The encoder is behind: drop this window, keep sampling.
				a.mu.Lock()
				a.windowsDropped++
				a.mu.Unlock()
				a.log.Warn("window dropped: exporters are behind", "samples", len(w.Samples))
			}
			if tel != nil {
				tel.window(ctx, w)
			}
		},
		OnExit: func(t target.Target) {
			a.mu.Lock()
			delete(a.targets, t.PID())
			a.mu.Unlock()
			t.Close()
			a.log.Debug("target exited", "pid", t.PID())
		},
	})
	if err != nil {
		a.log.Error("sampler", "err", err)
		return 2
	}
	a.s = s
	for _, pid := range a.cfg.pids {
		if err := a.attach(pid); err != nil {
			a.log.Error("cannot profile", "pid", pid, "err", err)
			if a.cfg.name == nil && len(a.cfg.pids) == 1 {
				return 1
			}
		}
	}
	for _, sk := range a.sinks {
		a.log.Info("exporting", "exporter", sk.name, "to", sk.target)
	}
	a.log.Info("agent started", "hz", a.cfg.hz, "window", a.cfg.window, "mode", a.cfg.mode.String(), "host", host)

	var wg sync.WaitGroup
	if a.cfg.name != nil {
		wg.Add(1)
		go func() { defer wg.Done(); a.watchNames(ctx) }()
	}
	encodeDone := make(chan struct{})
	go func() {
		defer close(encodeDone)
		cache := symcache.New(symcache.Options{})
		for w := range windows {
			a.export(w, cache)
		}
	}()

	if err := s.Run(ctx); err != nil && !errors.Is(err, sampler.ErrAllExited) {
		a.log.Error("sampling stopped", "err", err)
	}
	wg.Wait()
	close(windows)
	<-encodeDone
	a.mu.Lock()
	for pid, t := range a.targets {
		t.Close()
		delete(a.targets, pid)
	}
	a.mu.Unlock()

	// Flush what is queued, within the deadline.
	sctx, cancel := context.WithTimeout(context.Background(), a.cfg.shutdownTimeout)
	defer cancel()
	for _, sk := range a.sinks {
		err := sk.up.Shutdown(sctx)
		st := sk.up.Stats()
		a.log.Info("exporter stopped", "exporter", sk.name, "sent", st.Sent, "failed_attempts", st.Failed,
			"dropped", st.Dropped, "rejected", st.Rejected, "left_in_queue", st.QueueItems, "err", err)
	}
	if tel != nil {
		tel.shutdown(sctx)
	}
	a.log.Info("agent stopped", "windows_dropped", a.windowsDropped, "encode_errors", a.encodeErrors)
	return 0
}

func (a *agent) attach(pid int) error {
	t, err := attach(pid, a.cfg.opts)
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.targets[pid] = t
	a.mu.Unlock()
	a.s.Add(t)
	a.log.Info("profiling", "pid", pid)
	return nil
}

// watchNames attaches to processes matching --name, now and every rescan.
func (a *agent) watchNames(ctx context.Context) {
	self := os.Getpid()
	failed := map[int]bool{}
	scan := func() {
		for _, p := range listProcesses() {
			if p.pid == self || failed[p.pid] {
				continue
			}
			a.mu.Lock()
			_, have := a.targets[p.pid]
			a.mu.Unlock()
			if have || !a.matches(p) {
				continue
			}
			if err := a.attach(p.pid); err != nil {
				// Once per process: it may be gone already, or not ours
				// to trace; either way, no noise every rescan.
				failed[p.pid] = true
				a.log.Warn("cannot profile matching process", "pid", p.pid, "err", err)
			}
		}
		if len(failed) > 4096 {
			clear(failed)
		}
	}
	scan()
	t := time.NewTicker(a.cfg.rescan)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			scan()
		}
	}
}

func (a *agent) matches(p procEntry) bool {
	for _, n := range p.names {
		if a.cfg.name.MatchString(n) {
			return true
		}
	}
	return p.cmdline != "" && a.cfg.name.MatchString(p.cmdline)
}

// export encodes a window for every sink and queues it.
func (a *agent) export(w *profile.Window, cache *symcache.Cache) {
	if len(w.Samples) == 0 {
		return
	}
	for _, sk := range a.sinks {
		data, meta, err := sk.encode(w, cache)
		if err != nil {
			a.mu.Lock()
			a.encodeErrors++
			a.mu.Unlock()
			a.log.Error("encode window", "exporter", sk.name, "err", err)
			continue
		}
		if err := sk.up.Enqueue(data, meta); err != nil {
			a.log.Warn("queue window", "exporter", sk.name, "err", err)
		}
		a.log.Debug("window queued", "exporter", sk.name, "bytes", len(data), "samples", len(w.Samples))
	}
}

// telemetry is the agent's own metrics, through the OpenTelemetry SDK.
type telemetry struct {
	provider *sdkmetric.MeterProvider
	samples  metric.Int64Counter
	missed   metric.Int64Counter
	captures metric.Int64Counter
	stops    metric.Float64Histogram
	cpu      metric.Float64Counter
}

func (a *agent) startTelemetry(ctx context.Context, otlpCfg otlp.Config) (*telemetry, error) {
	var exp sdkmetric.Exporter
	var err error
	mode := a.cfg.telemetry
	if mode == "auto" {
		mode = "none"
		if otlpCfg.Endpoint != "" && (otlpCfg.Protocol == "" || otlpCfg.Protocol == otlp.ProtocolGRPC) {
			mode = "otlp"
		}
	}
	switch mode {
	case "none":
		return nil, nil
	case "stdout":
		exp, err = stdoutmetric.New()
	case "otlp":
		opts := []otlpmetricgrpc.Option{otlpmetricgrpc.WithEndpoint(trimScheme(otlpCfg.Endpoint))}
		if otlpCfg.Insecure != nil && *otlpCfg.Insecure || hasScheme(otlpCfg.Endpoint, "http://") {
			opts = append(opts, otlpmetricgrpc.WithInsecure())
		}
		if len(otlpCfg.Headers) > 0 {
			opts = append(opts, otlpmetricgrpc.WithHeaders(otlpCfg.Headers))
		}
		exp, err = otlpmetricgrpc.New(ctx, opts...)
	default:
		return nil, fmt.Errorf("--telemetry must be otlp, stdout, none or auto, not %q", mode)
	}
	if err != nil {
		return nil, err
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp, sdkmetric.WithInterval(30*time.Second))))
	m := mp.Meter("github.com/macprof/macprof/agent")
	t := &telemetry{provider: mp}
	t.samples, _ = m.Int64Counter("macprof.samples", metric.WithDescription("samples taken"))
	t.missed, _ = m.Int64Counter("macprof.samples.missed", metric.WithDescription("ticks or threads that gave no sample, by reason"))
	t.captures, _ = m.Int64Counter("macprof.captures", metric.WithDescription("thread captures (a stop of one thread)"))
	t.stops, _ = m.Float64Histogram("macprof.stop.duration", metric.WithUnit("s"), metric.WithDescription("how long a target thread was stopped per capture"))
	t.cpu, _ = m.Float64Counter("macprof.cpu", metric.WithUnit("s"), metric.WithDescription("the agent's own CPU time"))
	for _, sk := range a.sinks {
		sk := sk
		attrs := metric.WithAttributes(attribute.String("exporter", sk.name))
		_, err := m.Int64ObservableCounter("macprof.export.sent", metric.WithDescription("windows the exporter accepted"),
			metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
				o.Observe(sk.up.Stats().Sent, attrs)
				return nil
			}))
		if err != nil {
			return nil, err
		}
		m.Int64ObservableCounter("macprof.export.failed", metric.WithDescription("failed export attempts"),
			metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
				o.Observe(sk.up.Stats().Failed, attrs)
				return nil
			}))
		m.Int64ObservableCounter("macprof.export.dropped", metric.WithDescription("windows dropped because the queue was full"),
			metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
				o.Observe(sk.up.Stats().Dropped, attrs)
				return nil
			}))
		m.Int64ObservableGauge("macprof.queue.windows", metric.WithDescription("windows waiting to be exported"),
			metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
				o.Observe(sk.up.Stats().QueueItems, attrs)
				return nil
			}))
		m.Int64ObservableGauge("macprof.queue.bytes", metric.WithUnit("By"), metric.WithDescription("bytes waiting to be exported"),
			metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
				o.Observe(sk.up.Stats().QueueBytes, attrs)
				return nil
			}))
	}
	m.Int64ObservableGauge("macprof.targets", metric.WithDescription("processes being profiled"),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			a.mu.Lock()
			n := len(a.targets)
			a.mu.Unlock()
			o.Observe(int64(n))
			return nil
		}))
	return t, nil
}

// window records one window's figures.
func (t *telemetry) window(ctx context.Context, w *profile.Window) {
	var n int64
	for _, s := range w.Samples {
		n += s.Count
	}
	t.samples.Add(ctx, n)
	for reason, c := range w.Missed {
		t.missed.Add(ctx, c, metric.WithAttributes(attribute.String("reason", reason.String())))
	}
	t.captures.Add(ctx, w.Stats.Captures)
	for _, b := range w.Stats.StopBuckets {
		for i := int64(0); i < b.Count && i < 100000; i++ {
			t.stops.Record(ctx, b.Low.Seconds())
		}
	}
	t.cpu.Add(ctx, w.Stats.ProfilerCPU.Seconds())
}

func (t *telemetry) shutdown(ctx context.Context) { t.provider.Shutdown(ctx) }

func hasScheme(s, scheme string) bool { return len(s) >= len(scheme) && s[:len(scheme)] == scheme }

func trimScheme(s string) string {
	for _, p := range []string{"http://", "https://"} {
		if hasScheme(s, p) {
			return s[len(p):]
		}
	}
	return s
}
