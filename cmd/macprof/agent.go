package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"time"

	"github.com/macprof/macprof/agent"
	"github.com/macprof/macprof/exporter/otlp"
	"github.com/macprof/macprof/exporter/pyroscope"
	"github.com/macprof/macprof/sampler"
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
	if err := agent.ApplyConfigFile(fs, args); err != nil {
		fmt.Fprintf(stderr, "macprof agent: %v\n", err)
		return 2
	}
	appOnly := appOnlyFlags(fs)
	if st, ok := parseFlags(fs, args); !ok {
		return st
	}
	_ = configFile // applied above, before the command line
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "macprof agent: "+format+"\n", a...)
		return 2
	}
	cfg := agent.Config{PIDs: pids, Hz: *hz, Window: *window, Rescan: *rescan, Duration: *dur, ShutdownTimeout: *shutdown, Telemetry: *telemetry, Attach: attach}
	if *name != "" {
		re, err := regexp.Compile(*name)
		if err != nil {
			return fail("--name: %v", err)
		}
		cfg.Name = re
	}
	m, ok := parseMode(*mode)
	if !ok {
		return fail("--mode must be cpu or wall, not %q", *mode)
	}
	cfg.Mode = m
	log, err := agent.NewLogger(stderr, *logFormat, *verbose)
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		return fail("%v", err)
	}

	// Exporters.
	otlpCfg, err := otlpFlags.Resolve(os.Getenv)
	if err != nil {
		return fail("%v", err)
	}
	host, _ := os.Hostname()
	version, _ := buildVersion()
	app, err := appOnly()
	if err != nil {
		return fail("%v", err)
	}
	exps := agent.Exporters{OTLP: otlpCfg, Host: host, Version: version, SpoolDir: *spool, QueueItems: *queueItems,
		QueueBytes: *queueBytes, RetryMax: *retryMax, Window: *window, Log: log, AppOnly: app}
	if pcfg, enabled := pyroFlags.Config(os.Getenv); enabled {
		exps.Pyroscope = &pcfg
	}
	if err := exps.Validate(); err != nil {
		return fail("%v", err)
	}
	sinks, err := agent.NewSinks(exps)
	if err != nil {
		return fail("%v", err)
	}
	if len(sinks) == 0 {
		return fail("no exporter: set --otlp-endpoint (or OTEL_EXPORTER_OTLP_ENDPOINT) and/or --pyroscope-url")
	}
	cfg.OTLP, cfg.Host, cfg.Sinks, cfg.Log = otlpCfg, host, sinks, log
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	defer stop()
	return agent.Run(ctx, cfg)
}
