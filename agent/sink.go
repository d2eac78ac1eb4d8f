package agent

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/macprof/macprof/exporter"
	"github.com/macprof/macprof/exporter/otlp"
	"github.com/macprof/macprof/exporter/pyroscope"
	"github.com/macprof/macprof/exporter/upload"
	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/symcache"
)

// Queue holds encoded windows for one exporter until they are sent;
// *upload.Uploader is the one the agent uses.
type Queue interface {
	Enqueue(data []byte, meta map[string]string) error
	Shutdown(ctx context.Context) error
	Stats() upload.Stats
}

// Sink is one exporter behind its queue.
type Sink struct {
	// Name names the exporter in logs and metrics; Target says where it
	// sends.
	Name, Target string
	Queue        Queue
	// Encode turns a window into what the exporter sends: one item or
	// more (Pyroscope: one per process), each with the metadata to send
	// along.
	Encode func(*profile.Window, *symcache.Cache) ([]upload.Item, error)
	// Close, when set, releases the exporter once its queue is shut down.
	Close func() error
	// Probe, when set, checks that the endpoint answers and takes exports
	// without sending data (an empty export): the agent asks it of an
	// exporter that has sent nothing after the first window, and at the
	// end of a run.
	Probe func(ctx context.Context) error

	reached atomic.Bool // a Probe succeeded
}

// Exporters says which exporters NewSinks builds and how each queues.
type Exporters struct {
	// OTLP builds an OTLP exporter when its Endpoint is set.
	OTLP otlp.Config
	// Pyroscope, when set, builds a Pyroscope exporter.
	Pyroscope *pyroscope.Config
	// Host and Version describe the agent in OTLP resources.
	Host, Version string
	// AppOnly, when set, keeps only the frames of each process's own
	// images in every exported profile (--app-only, --app-images).
	AppOnly *exporter.AppFilter

	// SpoolDir, when set, keeps each queue on disk too, in a folder per
	// exporter.
	SpoolDir   string
	QueueItems int
	QueueBytes int64
	// RetryMax is the longest wait between retries; zero means Window, so
	// that a recovered exporter is used again within one window.
	RetryMax, Window time.Duration
	Log              *slog.Logger
}

// queue returns the upload configuration of the exporter called name.
func (e Exporters) queue(name string) upload.Config {
	dir := ""
	if e.SpoolDir != "" {
		dir = e.SpoolDir + string(os.PathSeparator) + name
	}
	maxBackoff := e.RetryMax
	if maxBackoff <= 0 {
		maxBackoff = e.Window
	}
	return upload.Config{Name: name, MaxItems: e.QueueItems, MaxBytes: e.QueueBytes, SpoolDir: dir, Logger: e.Log,
		InitialBackoff: min(time.Second, maxBackoff), MaxBackoff: maxBackoff}
}

// NewSinks builds the exporters e names, each behind its queue: none when
// it names none.
func NewSinks(e Exporters) ([]*Sink, error) {
	var sinks []*Sink
	if e.OTLP.Endpoint != "" {
		oc := e.OTLP
		if oc.UserAgent == "" {
			oc.UserAgent = UserAgent(e.Version)
		}
		exp, err := otlp.New(oc)
		if err != nil {
			return nil, fmt.Errorf("OTLP exporter: %v", err)
		}
		up, err := upload.New(exp.Sink(), e.queue("otlp"))
		if err != nil {
			exp.Close()
			return nil, fmt.Errorf("OTLP queue: %v", err)
		}
		bo := e.OTLP.BuildOptions(e.Host, e.Version)
		bo.AppOnly = e.AppOnly
		sinks = append(sinks, &Sink{Name: "otlp", Target: exp.Target(), Queue: up, Close: exp.Close, Probe: exp.Probe,
			Encode: func(w *profile.Window, c *symcache.Cache) ([]upload.Item, error) {
				b, err := otlp.Marshal(w, c, bo)
				return []upload.Item{{Data: b}}, err
			}})
	}
	if e.Pyroscope != nil {
		pc := *e.Pyroscope
		if pc.HostName == "" {
			pc.HostName = e.Host
		}
		if pc.UserAgent == "" {
			pc.UserAgent = UserAgent(e.Version)
		}
		pc.Labels = pushLabels(e.OTLP.ResourceAttributes, pc.Labels)
		pc.AppOnly = e.AppOnly
		cl, err := pyroscope.New(pc)
		if err != nil {
			closeSinks(sinks)
			//lint:ignore ST1005 the message starts with the product's name, as the command prints it
			return nil, fmt.Errorf("Pyroscope exporter: %v", err)
		}
		up, err := upload.New(cl, e.queue("pyroscope"))
		if err != nil {
			closeSinks(sinks)
			//lint:ignore ST1005 the message starts with the product's name, as the command prints it
			return nil, fmt.Errorf("Pyroscope queue: %v", err)
		}
		sinks = append(sinks, &Sink{Name: "pyroscope", Target: cl.Target(), Queue: up, Encode: cl.Encode, Probe: cl.Probe})
	}
	return sinks, nil
}

// pushLabels returns the labels of every Pyroscope push: the user's
// resource attributes (--resource-attr, OTEL_RESOURCE_ATTRIBUTES), which
// the OTLP exporter sends too, with --pyroscope-label's over them; the
// client turns dots into underscores, as Pyroscope lists only undotted
// names. service.name is not a label: it names the service.
func pushLabels(resource, labels map[string]string) map[string]string {
	if len(resource) == 0 {
		return labels
	}
	out := make(map[string]string, len(resource)+len(labels))
	for k, v := range resource {
		if k != otlp.AttrServiceName {
			out[k] = v
		}
	}
	for k, v := range labels {
		out[k] = v
	}
	return out
}

// UserAgent is the User-Agent of every export: macprof/VERSION, as the
// OpenTelemetry exporter specification asks of an exporter's product.
func UserAgent(version string) string {
	if version == "" || version == "(devel)" {
		version = "devel"
	}
	return "macprof/" + version
}

// probeTimeout bounds one probe of an exporter's endpoint.
const probeTimeout = 10 * time.Second

// probe checks that sk's endpoint answers (Sink.Probe), noting it when it
// does; a sink without Probe counts as answering.
func (a *agent) probe(ctx context.Context, sk *Sink) error {
	if sk.Probe == nil {
		sk.reached.Store(true)
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	err := sk.Probe(ctx)
	if err == nil {
		sk.reached.Store(true)
	}
	return err
}

// checkFirstWindow waits for the first window to be exported, then checks
// the endpoint of every exporter that has sent nothing yet and says why at
// WARN: its endpoint does not answer, or it answers but refused every
// export; or, at INFO, that there was nothing to send. after is the first
// window plus the time its export may take.
func (a *agent) checkFirstWindow(ctx context.Context, after time.Duration) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(after):
	}
	for _, sk := range a.sinks {
		st := sk.Queue.Stats()
		if st.Sent > 0 {
			continue
		}
		err := a.probe(ctx, sk)
		if ctx.Err() != nil {
			return // the run ended: Run checks again
		}
		failed := st.Failed + st.Dropped + st.Rejected
		switch {
		case err != nil:
			a.log.Warn("exporter: nothing sent in the first window, and its endpoint does not take an empty export",
				"exporter", sk.Name, "to", sk.Target, "failed_attempts", st.Failed, "err", err)
		case failed > 0:
			a.log.Warn("exporter: its endpoint takes an empty export, but no export succeeded in the first window (see the warning above for why)",
				"exporter", sk.Name, "to", sk.Target, "failed_attempts", st.Failed, "dropped", st.Dropped, "rejected", st.Rejected)
		default:
			a.log.Info("exporter: nothing to send in the first window (no samples); its endpoint answers",
				"exporter", sk.Name, "to", sk.Target)
		}
	}
}

// closeSinks closes the sinks that have something to close.
func closeSinks(sinks []*Sink) {
	for _, sk := range sinks {
		if sk.Close != nil {
			sk.Close()
		}
	}
}

// export encodes a window for every sink and queues it; an empty window is
// not sent.
func (a *agent) export(w *profile.Window, cache *symcache.Cache) {
	if len(w.Samples) == 0 {
		return
	}
	for _, sk := range a.sinks {
		items, err := sk.Encode(w, cache)
		if err != nil {
			a.encodeErrors.Add(1)
			a.log.Error("encode window", "exporter", sk.Name, "err", err)
			continue
		}
		for _, it := range items {
			if err := sk.Queue.Enqueue(it.Data, it.Meta); err != nil {
				a.log.Warn("queue window", "exporter", sk.Name, "err", err)
			}
			a.log.Debug("window queued", "exporter", sk.Name, "bytes", len(it.Data), "samples", w.SampleCount(), "stacks", len(w.Stacks))
		}
	}
}
