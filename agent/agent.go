// Package agent profiles processes continuously: it keeps a registry of
// targets (given PIDs, and processes whose names match, looked up again
// every rescan), hands each window the sampler closes to every exporter's
// upload queue, and reports its own metrics.
package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/macprof/macprof/exporter/otlp"
	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/sampler"
	"github.com/macprof/macprof/symcache"
	"github.com/macprof/macprof/target"
)

// Config configures an agent. The OS backend comes in as functions, so
// that the agent itself is portable.
type Config struct {
	// PIDs are processes to profile from the start.
	PIDs []int
	// Name, when set, picks every process whose name, executable or
	// command line matches, now and every Rescan, among the processes of
	// user UID only: a process of another user, or one whose real,
	// effective and saved user ids differ (a setuid program), is never
	// picked, whatever it calls itself.
	Name   *regexp.Regexp
	UID    int
	Rescan time.Duration
	Hz     int
	// Window is how much time each exported profile covers.
	Window time.Duration
	Mode   profile.Mode
	// StopThreads captures threads only by stopping them. Otherwise, in
	// cpu mode, a backend that can (Linux: perf_event) captures running
	// threads from the kernel's own samples of them, as record does,
	// which costs the targets and the agent far less than a stop per
	// sample.
	StopThreads bool
	// DWARFLines gives native frames file:line and inlined calls from the
	// objects' DWARF. Without it only Go code has lines (from its own line
	// table) and other frames are named by symbol: reading libc's debug
	// file alone costs more CPU than minutes of sampling.
	DWARFLines bool
	// ShutdownTimeout bounds the flush of queued windows at the end.
	ShutdownTimeout time.Duration
	// Duration, when positive, ends the run after that long.
	Duration time.Duration
	// Telemetry is where the agent's own metrics go: otlp, stdout, none,
	// or auto (otlp when OTLP has an endpoint, over its protocol).
	Telemetry string
	// OTLP is the OTLP exporter's configuration; otlp telemetry goes to its
	// endpoint.
	OTLP otlp.Config
	// Host is the host name to log.
	Host string
	// Sinks are the exporters; Run closes them when it returns.
	Sinks []*Sink
	Log   *slog.Logger

	// Attach opens the OS backend for a running process.
	Attach func(pid int, o target.Options) (target.Target, error)
	// ListProcesses lists the system's processes for Name; nil reads the
	// OS's list.
	ListProcesses func() []Process
	// ProcessOwner returns the user a process runs as, ok false when its
	// real, effective and saved user ids differ or it is gone; nil asks the
	// OS.
	ProcessOwner func(pid int) (uid int, ok bool)
}

// registry is the set of targets being profiled, by PID.
type registry struct {
	mu      sync.Mutex
	targets map[int]target.Target
}

func (r *registry) add(t target.Target) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.targets == nil {
		r.targets = map[int]target.Target{}
	}
	r.targets[t.PID()] = t
}

func (r *registry) remove(pid int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.targets, pid)
}

func (r *registry) has(pid int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.targets[pid]
	return ok
}

func (r *registry) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.targets)
}

// closeAll closes and forgets every target.
func (r *registry) closeAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for pid, t := range r.targets {
		t.Close()
		delete(r.targets, pid)
	}
}

type agent struct {
	cfg     Config
	log     *slog.Logger
	sinks   []*Sink
	targets registry
	owners  owners
	s       *sampler.Sampler

	windowsDropped, encodeErrors atomic.Int64
}

// Run profiles until ctx ends (SIGTERM), Duration passes or, without Name,
// every process named by PID has exited, then flushes the exporters'
// queues within ShutdownTimeout. It returns the exit status: 1 when no
// process named by PID can be profiled and there is no Name, or when an
// exporter never succeeded in the whole run (a collector down from the
// start, a server that refuses every push, an endpoint that does not
// answer even when there was nothing to send, metrics refused every time);
// 2 when the sampler refuses the configuration; else 0.
func Run(ctx context.Context, cfg Config) int {
	defer closeSinks(cfg.Sinks)
	if cfg.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Duration)
		defer cancel()
	}
	a := &agent{cfg: cfg, log: cfg.Log, sinks: cfg.Sinks}
	var tel *telemetry // set before sampling starts

	windows := make(chan *profile.Window, 4)
	s, err := sampler.New(sampler.Config{
		Hz:     cfg.Hz,
		Mode:   cfg.Mode,
		Window: cfg.Window,
		// Without --name no target can come after the last one exits.
		KeepRunning: cfg.Name != nil,
		OnWindow: func(w *profile.Window) {
			a.owners.label(w)
			select {
			case windows <- w:
			default:
				// The encoder is behind: drop this window, keep sampling.
				a.windowsDropped.Add(1)
				a.log.Warn("window dropped: exporters are behind", "samples", w.SampleCount())
			}
			if tel != nil {
				tel.window(ctx, w)
			}
		},
		OnExit: func(t target.Target) {
			a.targets.remove(t.PID())
			a.owners.exited(t.PID())
			t.Close()
			a.log.Debug("target exited", "pid", t.PID())
		},
	})
	if err != nil {
		a.log.Error("sampler", "err", err)
		return 2
	}
	a.s = s
	attached := 0
	for _, pid := range cfg.PIDs {
		if err := a.attach(pid, nil); err != nil {
			a.log.Error("cannot profile", "pid", pid, "err", err)
			continue
		}
		attached++
	}
	if attached == 0 && cfg.Name == nil {
		a.log.Error("nothing to profile: no process given by --pid can be profiled, and there is no --name to find more")
		return 1
	}
	if tel, err = a.startTelemetry(ctx); err != nil {
		a.log.Warn("agent metrics disabled", "err", err)
	}
	for _, sk := range a.sinks {
		a.log.Info("exporting", "exporter", sk.Name, "to", sk.Target)
	}
	a.log.Info("agent started", "hz", cfg.Hz, "window", cfg.Window, "mode", cfg.Mode.String(), "host", cfg.Host)

	var wg sync.WaitGroup
	if cfg.Name != nil {
		wg.Add(1)
		go func() { defer wg.Done(); a.watchNames(ctx) }()
	}
	checkCtx, stopCheck := context.WithCancel(ctx)
	defer stopCheck()
	if cfg.Window > 0 {
		wg.Add(1)
		go func() { defer wg.Done(); a.checkFirstWindow(checkCtx, cfg.Window+min(cfg.Window, 5*time.Second)) }()
	}
	encodeDone := make(chan struct{})
	go func() {
		defer close(encodeDone)
		cache := symcache.New(symcache.Options{NoDWARFLines: !cfg.DWARFLines})
		for w := range windows {
			a.export(w, cache)
		}
	}()

	if err := s.Run(ctx); errors.Is(err, sampler.ErrAllExited) {
		a.log.Info("every process given by --pid has exited, and there is no --name to find more: stopping")
	} else if err != nil {
		a.log.Error("sampling stopped", "err", err)
	}
	stopCheck()
	wg.Wait()
	close(windows)
	<-encodeDone
	a.targets.closeAll()

	// Flush what is queued, within the deadline.
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	status := 0
	for _, sk := range a.sinks {
		err := sk.Queue.Shutdown(sctx)
		st := sk.Queue.Stats()
		args := []any{"exporter", sk.Name, "sent", st.Sent, "failed_attempts", st.Failed,
			"dropped", st.Dropped, "rejected", st.Rejected, "left_in_queue", st.QueueItems, "err", err}
		if st.Sent == 0 && st.Failed+st.Dropped > 0 {
			// Nothing this exporter sent arrived: the run was useless for
			// it, which a supervisor (and whoever reads its status) must
			// see.
			status = 1
			a.log.Error("exporter stopped: no export succeeded since start", args...)
			continue
		}
		if st.Sent == 0 && !sk.reached.Load() {
			// Nothing to send, or not yet: whether the exporter could
			// have sent anything decides.
			if perr := a.probe(sctx, sk); perr != nil {
				status = 1
				a.log.Error("exporter stopped: its endpoint never took an export in the whole run", append(args, "probe_err", perr)...)
				continue
			}
		}
		a.log.Info("exporter stopped", args...)
	}
	if tel != nil && !tel.shutdown(sctx) {
		status = 1
	}
	a.log.Info("agent stopped", "windows_dropped", a.windowsDropped.Load(), "encode_errors", a.encodeErrors.Load(), "status", status)
	return status
}

// NewLogger returns the agent's logger: to w, with format "text" as text
// or "json" as JSON; with verbose, each export is logged too. Another
// format is an error rather than text, so that a log pipeline that expects
// JSON is not fed text. Credentials in URLs are redacted from every line.
func NewLogger(w io.Writer, format string, verbose bool) (*slog.Logger, error) {
	var level slog.LevelVar
	if verbose {
		level.Set(slog.LevelDebug)
	}
	switch format {
	case "text":
		return slog.New(redactHandler{slog.NewTextHandler(w, &slog.HandlerOptions{Level: &level})}), nil
	case "json":
		return slog.New(redactHandler{slog.NewJSONHandler(w, &slog.HandlerOptions{Level: &level})}), nil
	}
	return nil, fmt.Errorf("--log-format must be text or json, not %q", format)
}

// agentMaxDrainInterval lets the agent drain kernel samples every 5 s
// rather than every 100 ms as record does: each drain wakes the agent, and
// its windows last 15 s, so new threads found seconds later lose nothing
// that matters; a ring half full wakes it sooner (SamplesWaiting), so
// none overflows meanwhile (bench/RESULTS.md has the wake-ups this saves).
const agentMaxDrainInterval = 5 * time.Second

// attach starts profiling pid; with owner set, only while pid runs as
// that user.
func (a *agent) attach(pid int, owner *int) error {
	opts := target.Options{Continuous: true, Unattended: true, Kernel: target.KernelSampling{MaxDrainInterval: agentMaxDrainInterval}}
	if a.cfg.Mode == profile.ModeCPU && !a.cfg.StopThreads && a.cfg.Hz > 0 {
		opts.Kernel.Period = time.Second / time.Duration(a.cfg.Hz)
		opts.Kernel.SamplesWaiting = a.s.DrainSoon
	}
	t, err := a.cfg.Attach(pid, opts)
	if err != nil {
		return err
	}
	uid, known := a.processOwner(pid)
	if owner != nil {
		if err := ownerError(uid, known, *owner); err != nil {
			t.Close()
			return err
		}
	}
	args := []any{"pid", pid}
	if known {
		a.owners.set(pid, uid)
		args = append(args, "uid", uid)
	}
	a.targets.add(t)
	a.s.Add(t)
	a.log.Info("profiling", args...)
	return nil
}
