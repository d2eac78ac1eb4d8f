package agent

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/macprof/macprof/exporter/otlp"
	"github.com/macprof/macprof/internal/httpsafe"
	"github.com/macprof/macprof/profile"
)

// telemetry is the agent's own metrics, through the OpenTelemetry SDK.
type telemetry struct {
	provider *sdkmetric.MeterProvider
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
	// The SDK reports failed exports there; through the agent's log they
	// are redacted like every other line.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { a.log.Warn("agent metrics", "err", err) }))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp, sdkmetric.WithInterval(30*time.Second))))
	m := mp.Meter("github.com/macprof/macprof/agent")
	t := &telemetry{provider: mp}
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

func (t *telemetry) shutdown(ctx context.Context) { t.provider.Shutdown(ctx) }

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
