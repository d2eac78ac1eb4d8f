package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/macprof/macprof/exporter/otlp"
	"github.com/macprof/macprof/internal/httpsafe"
	"github.com/macprof/macprof/profile"
)

// telemetry is the agent's own metrics, through the OpenTelemetry SDK.
type telemetry struct {
	provider *sdkmetric.MeterProvider
	exp      *loggedExporter
	samples  metric.Int64Counter
	// unsampled counts the samples of CPU time not attributed to a stack;
	// its share of samples is the share of CPU time.
	unsampled metric.Int64Counter
	missed    metric.Int64Counter
	captures  metric.Int64Counter
	stops     metric.Float64Histogram
	cpu       metric.Float64Counter
}

// startTelemetry starts reporting the agent's own metrics where
// Config.Telemetry says; it returns nil for none. OTLP metrics go to the
// profiles' collector over the profiles' protocol (gRPC, or HTTP at
// /v1/metrics beside the profiles' path), with their headers and
// compression.
func (a *agent) startTelemetry(ctx context.Context) (*telemetry, error) {
	otlpCfg := a.cfg.OTLP
	var exp sdkmetric.Exporter
	var err error
	mode := a.cfg.Telemetry
	if mode == "auto" {
		mode = "none"
		if otlpCfg.Endpoint != "" {
			mode = "otlp"
		}
	}
	switch mode {
	case "none":
		return nil, nil
	case "stdout":
		exp, err = stdoutmetric.New()
	case "otlp":
		exp, err = otlpMetrics(ctx, otlpCfg)
	default:
		return nil, fmt.Errorf("--telemetry must be otlp, stdout, none or auto, not %q", mode)
	}
	if err != nil {
		return nil, err
	}
	le := &loggedExporter{Exporter: exp, log: a.log, target: mode}
	if mode == "otlp" {
		if _, endpoint, _, err := otlpCfg.MetricsTarget(); err == nil {
			le.target = endpoint
		}
	}
	// The SDK reports its other errors there; through the agent's log they
	// are redacted like every other line. Failed exports are logged by le.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		if !errors.As(err, new(loggedError)) {
			a.log.Warn("agent metrics", "err", err)
		}
	}))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(le, sdkmetric.WithInterval(30*time.Second))))
	m := mp.Meter("github.com/macprof/macprof/agent")
	t := &telemetry{provider: mp, exp: le}
	t.samples, _ = m.Int64Counter("macprof.samples", metric.WithDescription("samples taken"))
	t.unsampled, _ = m.Int64Counter("macprof.samples.unsampled", metric.WithDescription("samples of CPU time that could not be attributed to a stack ([unsampled]); a share of macprof.samples"))
	t.missed, _ = m.Int64Counter("macprof.samples.missed", metric.WithDescription("ticks or threads that gave no sample, by reason"))
	t.captures, _ = m.Int64Counter("macprof.captures", metric.WithDescription("thread captures (a stop of one thread)"))
	t.stops, _ = m.Float64Histogram("macprof.stop.duration", metric.WithUnit("s"), metric.WithDescription("how long a target thread was stopped per capture"))
	t.cpu, _ = m.Float64Counter("macprof.cpu", metric.WithUnit("s"), metric.WithDescription("the agent's own CPU time"))
	for _, sk := range a.sinks {
		sk := sk
		attrs := metric.WithAttributes(attribute.String("exporter", sk.Name))
		_, err := m.Int64ObservableCounter("macprof.export.sent", metric.WithDescription("windows the exporter accepted"),
			metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
				o.Observe(sk.Queue.Stats().Sent, attrs)
				return nil
			}))
		if err != nil {
			return nil, err
		}
		m.Int64ObservableCounter("macprof.export.failed", metric.WithDescription("failed export attempts"),
			metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
				o.Observe(sk.Queue.Stats().Failed, attrs)
				return nil
			}))
		m.Int64ObservableCounter("macprof.export.dropped", metric.WithDescription("windows dropped because the queue was full"),
			metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
				o.Observe(sk.Queue.Stats().Dropped, attrs)
				return nil
			}))
		m.Int64ObservableGauge("macprof.queue.windows", metric.WithDescription("windows waiting to be exported"),
			metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
				o.Observe(sk.Queue.Stats().QueueItems, attrs)
				return nil
			}))
		m.Int64ObservableGauge("macprof.queue.bytes", metric.WithUnit("By"), metric.WithDescription("bytes waiting to be exported"),
			metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
				o.Observe(sk.Queue.Stats().QueueBytes, attrs)
				return nil
			}))
	}
	m.Int64ObservableGauge("macprof.targets", metric.WithDescription("processes being profiled"),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(int64(a.targets.len()))
			return nil
		}))
	return t, nil
}

// window records one window's figures.
func (t *telemetry) window(ctx context.Context, w *profile.Window) {
	t.samples.Add(ctx, w.SampleCount())
	t.unsampled.Add(ctx, w.UnsampledCount())
	for reason, c := range w.Missed {
		t.missed.Add(ctx, c, metric.WithAttributes(attribute.String("reason", reason.ID())))
	}
	t.captures.Add(ctx, w.Stats.Captures)
	for _, b := range w.Stats.StopBuckets {
		for i := int64(0); i < b.Count && i < 100000; i++ {
			t.stops.Record(ctx, b.Low.Seconds())
		}
	}
	t.cpu.Add(ctx, w.Stats.ProfilerCPU.Seconds())
}

// shutdown exports what is left and stops; it reports false when no
// export of the run succeeded and one failed, which it logs at ERROR.
func (t *telemetry) shutdown(ctx context.Context) bool {
	t.provider.Shutdown(ctx)
	sent, failed := t.exp.sent.Load(), t.exp.failed.Load()
	if sent == 0 && failed > 0 {
		t.exp.log.Error("agent metrics stopped: no export succeeded since start", "to", t.exp.target, "failed_attempts", failed)
		return false
	}
	return true
}

// loggedExporter logs the failed exports of the agent's metrics as the
// uploader logs those of profiles: the first at once at WARN with its
// reason, then at most once a minute with how many failed in between.
type loggedExporter struct {
	sdkmetric.Exporter
	log          *slog.Logger
	target       string
	sent, failed atomic.Int64

	mu       sync.Mutex
	lastWarn time.Time
	held     int64
}

// metricsWarnEvery bounds how often failed metric exports are logged.
const metricsWarnEvery = time.Minute

// Export exports rm and logs a failure; the error it returns is marked as
// logged, for the SDK's error handler.
func (e *loggedExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	err := e.Exporter.Export(ctx, rm)
	if err == nil {
		e.sent.Add(1)
		return nil
	}
	n := e.failed.Add(1)
	e.mu.Lock()
	now := time.Now()
	warn := n == 1 || now.Sub(e.lastWarn) >= metricsWarnEvery
	held := e.held
	if warn {
		e.lastWarn, e.held = now, 0
	} else {
		e.held++
	}
	e.mu.Unlock()
	if warn {
		args := []any{"to", e.target, "err", err}
		if n == 1 && strings.Contains(err.Error(), "404") {
			args = append(args, "hint", "an endpoint that takes no metrics (Grafana Pyroscope has no /v1/metrics) wants --telemetry none")
		} else if n > 1 {
			args = append(args, "failed_since_last_warning", held)
		}
		e.log.Warn("agent metrics: export failed", args...)
	}
	return loggedError{err}
}

// loggedError is an error loggedExporter has logged.
type loggedError struct{ error }

func (e loggedError) Unwrap() error { return e.error }

// otlpMetrics returns the OTLP metrics exporter beside the profiles'.
func otlpMetrics(ctx context.Context, c otlp.Config) (sdkmetric.Exporter, error) {
	protocol, endpoint, plaintext, err := c.MetricsTarget()
	if err != nil {
		return nil, err
	}
	gzip := c.Compression == otlp.CompressionGzip
	if protocol == otlp.ProtocolGRPC {
		opts := []otlpmetricgrpc.Option{otlpmetricgrpc.WithEndpoint(endpoint)}
		if plaintext {
			opts = append(opts, otlpmetricgrpc.WithInsecure())
		}
		if len(c.Headers) > 0 {
			opts = append(opts, otlpmetricgrpc.WithHeaders(c.Headers))
		}
		if gzip {
			opts = append(opts, otlpmetricgrpc.WithCompressor("gzip"))
		}
		return otlpmetricgrpc.New(ctx, opts...)
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = otlp.DefaultTimeout
	}
	// As the profiles' client: the headers go to the endpoint's origin only.
	client := httpsafe.SameOrigin(&http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone(), Timeout: timeout})
	opts := []otlpmetrichttp.Option{otlpmetrichttp.WithEndpointURL(endpoint), otlpmetrichttp.WithHTTPClient(client)}
	if len(c.Headers) > 0 {
		opts = append(opts, otlpmetrichttp.WithHeaders(c.Headers))
	}
	if gzip {
		opts = append(opts, otlpmetrichttp.WithCompression(otlpmetrichttp.GzipCompression))
	}
	return otlpmetrichttp.New(ctx, opts...)
}
