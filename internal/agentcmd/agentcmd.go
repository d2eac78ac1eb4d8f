// Package agentcmd is the macprof agent command: its flags, help and the
// start of an agent.Run. It lives apart from cmd/macprof so that the agent's
// exporters (gRPC, OTLP, otel, net/http) are linked only into
// cmd/macprof-agent, not into every macprof command's start-up.
package agentcmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"os/user"
	"regexp"
	"strconv"
	"time"

	"github.com/macprof/macprof/agent"
	"github.com/macprof/macprof/exporter/otlp"
	"github.com/macprof/macprof/exporter/pyroscope"
	"github.com/macprof/macprof/internal/cli"
	"github.com/macprof/macprof/internal/httpsafe"
	"github.com/macprof/macprof/sampler"
	"github.com/macprof/macprof/target"
)

const help = `
Samples the given processes continuously, in windows (15 s by default), and
sends each window to an OpenTelemetry Collector (OTLP profiles over
http/protobuf, the default, or gRPC) and/or to Grafana Pyroscope (a service
per process, named after its executable unless --pyroscope-app names one).
On Linux in cpu mode the kernel samples the threads (perf_event), as record
does, where it allows. Made to run always-on across a fleet:

  - a low default rate (19 Hz) keeps its cost on the target under 1%;
  - processes named by --name are looked up again every --rescan: new ones
    are picked up, exited ones dropped without noise; --name takes only the
    processes of the agent's own user (root's, when it runs as root), or of
    --user, and never one whose real, effective and saved user ids differ
    (a setuid program), whatever it calls itself; every profile carries its
    process's uid (process.user.id; Pyroscope label process_user_id);
  - windows wait in a bounded queue (and, with --spool-dir, on disk across
    restarts) while an exporter is down, are retried with backoff and
    jitter, and the oldest are dropped (and counted) when the queue is full;
  - the first failed export of each exporter is logged at WARN with its
    reason, then at most once a minute; an agent none of whose exports to
    an exporter succeeded exits with status 1 (config errors exit 2);
  - SIGTERM or SIGINT flushes what is queued within --shutdown-timeout.

An http/protobuf endpoint takes profiles at its path, or at
/v1development/profiles when it has none; a gRPC one is host:port
(localhost:4317 by default). The OTLP exporter honours the standard
OTEL_EXPORTER_OTLP_* variables
(endpoint, headers, protocol, TLS, timeout, compression), OTEL_SERVICE_NAME
and OTEL_RESOURCE_ATTRIBUTES; flags override them. A collector needs
--feature-gates=service.profilesSupport to accept profiles (deploy/ has a
configuration). The agent's own metrics (samples taken and missed, stop
times, exports, queue depth) go to the same collector as OTLP metrics over the
same protocol (HTTP: /v1/metrics), or to stdout with --telemetry stdout.

--config FILE reads flags from a JSON object ({"name": "^myapp$",
"otlp-endpoint": "http://collector:4318", "pid": [12, 34]}); flags on the command
line win.

Examples:
  macprof agent --name '^(nginx|myapp)$' --otlp-endpoint http://localhost:4318
  OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4317 OTEL_EXPORTER_OTLP_PROTOCOL=grpc macprof agent --pid 1234
  macprof agent --name myapp --pyroscope-url http://pyroscope:4040 --pyroscope-label env=prod
  sudo macprof agent --name '^myapp$' --user www-data --otlp-endpoint http://localhost:4318
`

// Run runs macprof agent with args (everything after "agent"), reaching
// processes through attach, and returns the exit status.
func Run(args []string, stdout, stderr io.Writer, attach func(pid int, opts target.Options) (target.Target, error)) int {
	fs := cli.NewFlagSet("agent", "macprof agent [-p PID[,PID...]]... [--name REGEX] [-d SECONDS] [exporter flags]", help, stderr)
	pids := fs.PIDs(true, "profile process `PID` (repeatable, or a comma-separated list)")
	name := fs.String("name", "", "profile every process of the agent's user (or --user) whose name, executable or command line matches `REGEX`")
	owner := fs.String("user", "", "--name takes the processes of `USER` (a name or a uid) rather than the agent's own user's (e.g. --user www-data)")
	hz := fs.Int("F", sampler.DefaultAgentHz, "sampling rate in `HZ` per thread")
	window := fs.Duration("window", "", 15*time.Second, "export a profile every `SECONDS` (or a duration: 1m)")
	rescan := fs.Duration("rescan", "", 10*time.Second, "look for processes matching --name every `SECONDS` (or a duration: 500ms)")
	mode := fs.String("mode", "cpu", "`MODE`: cpu or wall")
	capture := fs.String("capture", "auto", "`HOW` threads are captured in cpu mode on Linux: auto (kernel samples where allowed, else stops) or stop (ptrace stops only)")
	dwarfLines := fs.Bool("dwarf-lines", false, "give native frames file:line and inlined calls from DWARF (Go code has them either way); reading a large debug file costs more CPU than minutes of sampling")
	dur := fs.Duration("d", "duration", 0, "stop after `SECONDS` (or a duration: 10m); 0 runs until SIGTERM")
	shutdown := fs.Duration("shutdown-timeout", "", 10*time.Second, "how long SIGTERM may take to flush queued windows, in `SECONDS` (or a duration)")
	spool := fs.String("spool-dir", os.Getenv("MACPROF_SPOOL"), "keep queued windows in `DIR` too, so that a restart sends them (default $MACPROF_SPOOL)")
	queueItems := fs.Int("queue-windows", 64, "queue at most `N` windows per exporter")
	queueBytes := fs.Int64("queue-bytes", 64<<20, "queue at most `BYTES` per exporter")
	retryMax := fs.Duration("retry-max", "", 0, "longest wait between export retries, in `SECONDS` (or a duration); default: the window length, so that a recovered exporter is used again within one window")
	telemetry := fs.String("telemetry", "auto", "the agent's own metrics: `WHERE` = otlp, stdout, none, or auto (otlp when an OTLP endpoint is set)")
	logFormat := fs.String("log-format", "text", "log as `FORMAT` text or json (to stderr)")
	verbose := fs.Bool("v", false, "log each export")
	configFile := fs.String("config", "", "read flags from a JSON `FILE`")
	otlpFlags := otlp.BindFlags(fs.FlagSet, "otlp-")
	pyroFlags := pyroscope.BindFlags(fs.FlagSet, "pyroscope-")

	// A config file is applied first, then the command line over it.
	// Every message is redacted: one may quote an endpoint's credentials.
	fail := func(format string, a ...any) int {
		return fs.UsageError("%s", httpsafe.Redact(fmt.Sprintf(format, a...)))
	}
	if err := agent.ApplyConfigFile(fs.FlagSet, args); err != nil {
		return fail("%v", err)
	}
	appOnly := cli.AppOnlyFlags(fs.FlagSet)
	if st, ok := fs.ParseArgs(args); !ok {
		return st
	}
	_ = configFile // applied above, before the command line
	cfg := agent.Config{PIDs: pids.List(), Hz: *hz, Window: *window, Rescan: *rescan, Duration: *dur, ShutdownTimeout: *shutdown, Telemetry: *telemetry, Attach: attach}
	if *name != "" {
		re, err := regexp.Compile(*name)
		if err != nil {
			return fail("--name: %v", err)
		}
		cfg.Name = re
	}
	cfg.UID = os.Geteuid()
	if *owner != "" {
		if cfg.Name == nil {
			return fail("--user picks whose processes --name takes: give --name too")
		}
		uid, err := lookupUID(*owner)
		if err != nil {
			return fail("--user: %v", err)
		}
		cfg.UID = uid
	}
	m, ok := cli.ParseMode(*mode)
	if !ok {
		return fail("--mode must be cpu or wall, not %q", *mode)
	}
	cfg.Mode = m
	if *capture != "auto" && *capture != "stop" {
		return fail("--capture must be auto or stop, not %q", *capture)
	}
	cfg.StopThreads = *capture == "stop"
	cfg.DWARFLines = *dwarfLines
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
	version, _ := cli.BuildVersion()
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
	ctx, stop := signal.NotifyContext(context.Background(), cli.StopSignals...)
	defer stop()
	return agent.Run(ctx, cfg)
}

// lookupUID returns the user id of --user: a number as it is, else the
// user of that name.
func lookupUID(s string) (int, error) {
	if n, err := strconv.ParseUint(s, 10, 31); err == nil {
		return int(n), nil
	}
	u, err := user.Lookup(s)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(u.Uid)
}
