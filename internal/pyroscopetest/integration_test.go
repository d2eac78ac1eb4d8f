package pyroscopetest_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/macprof/macprof/exporter/otlp"
	"github.com/macprof/macprof/exporter/pyroscope"
	"github.com/macprof/macprof/internal/collectortest"
	"github.com/macprof/macprof/internal/fixture"
	"github.com/macprof/macprof/internal/pyroscopetest"
	"github.com/macprof/macprof/profile"
)

// SamplesProfileType is the series /ingest makes of a pprof's samples/count.
const samplesProfileType = "process_cpu:samples:count:cpu:nanoseconds"

// twoProcessWindow is the fixture window (the test binary, threads worker,
// io and an unnamed one: 59 samples of 10 ms, 52 of them in LeafWork, 7 in
// MiddleWork) plus a second process, "My
// App" (4 samples on thread main).
func twoProcessWindow(t *testing.T) (*fixture.Fixture, *profile.Window) {
	fx := fixture.NewFixture(t, os.Getpid())
	w := *fx.Window
	other := w.Processes[0]
	other.PID, other.Executable = os.Getpid()+1, "/Applications/My App.app/Contents/MacOS/My App"
	w.Processes = []profile.Process{w.Processes[0], other}
	w.Samples = append(slices.Clone(w.Samples), profile.Sample{Stack: 0, PID: other.PID, Thread: 21, ThreadName: "main", Count: 4})
	return fx, &w
}

// check reads a service back from Pyroscope: its CPU total (ns) and, where
// given, its samples total equal what was sent, its flame graph holds the
// workload's functions with the self time sent (leafSelf samples in
// LeafWork, middleSelf in MiddleWork), and its series carry the labels in
// want.
func check(t *testing.T, s *pyroscopetest.Server, fx *fixture.Fixture, service string, samples, leafSelf, middleSelf int64, countSeries bool, want map[string]string) {
	t.Helper()
	sel := `{service_name="` + service + `"}`
	cpuNS := samples * fx.Window.Period.Nanoseconds()
	f, err := s.WaitMerge(pyroscopetest.CPUProfileType, sel, cpuNS, 30*time.Second)
	if err != nil {
		t.Fatalf("%s: %v\nserver log:\n%s", service, err, s.Log())
	}
	if f.Total != cpuNS {
		t.Errorf("%s: CPU total %d ns, want %d (%d samples of %v)", service, f.Total, cpuNS, samples, fx.Window.Period)
	}
	fns := f.Functions()
	for _, fn := range []string{fx.Leaf, fx.Middle, fx.Root} {
		if !slices.Contains(fns, fn) {
			t.Errorf("%s: function %s missing from the flame graph %v", service, fn, fns)
		}
	}
	period := fx.Window.Period.Nanoseconds()
	if self := f.Self(); self[fx.Leaf] != leafSelf*period || self[fx.Middle] != middleSelf*period || self[fx.Root] != 0 {
		t.Errorf("%s: self time %v, want %s %d, %s %d and %s 0 (samples of %d ns)", service, self, fx.Leaf, leafSelf*period,
			fx.Middle, middleSelf*period, fx.Root, period)
	}
	if countSeries {
		c, err := s.Merge(samplesProfileType, sel)
		if err != nil || c.Total != samples {
			t.Errorf("%s: samples total %v (%v), want %d", service, c, err, samples)
		}
	}
	series, err := s.Series(sel)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range want {
		found := false
		for _, ls := range series {
			found = found || ls[k] == v
		}
		if !found {
			t.Errorf("%s: no series with %s=%q: %v", service, k, v, series)
		}
	}
}

// Every way macprof sends profiles reaches a real Pyroscope, and what
// Pyroscope stores is what was sent: /ingest as a multipart form (the
// agent's default) and as a raw pprof, OTLP over HTTP and gRPC straight to
// Pyroscope, and OTLP through the shipped collector configuration's
// otlp_grpc/pyroscope route.
func TestRealPyroscope(t *testing.T) {
	s := pyroscopetest.Start(t)
	ctx := context.Background()

	// /ingest, multipart: a service per process, named after its
	// executable, with host and PID labels and thread names.
	fx, w := twoProcessWindow(t)
	mp, err := pyroscope.New(pyroscope.Config{URL: s.URL, HostName: "box-1", UserAgent: "macprof/test",
		Labels: map[string]string{"deployment.environment.name": "it"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := mp.PushWindow(ctx, w, fixture.NewCache()); err != nil {
		t.Fatalf("multipart push: %v", err)
	}
	// Every exporter's probe (an empty export) is taken, and stores no
	// service (the list of services is checked at the end).
	if err := mp.Probe(ctx); err != nil {
		t.Errorf("multipart probe: %v", err)
	}
	// /ingest, raw pprof, under a name given by --pyroscope-app.
	raw, err := pyroscope.New(pyroscope.Config{URL: s.URL, AppName: "macprof-raw", Raw: true, HostName: "box-2"})
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.PushWindow(ctx, fx.Window, fixture.NewCache()); err != nil {
		t.Fatalf("raw push: %v", err)
	}
	if err := raw.Probe(ctx); err != nil {
		t.Errorf("raw probe: %v", err)
	}
	// OTLP straight to Pyroscope's receivers.
	insecure := true
	for _, c := range []struct{ protocol, service string }{
		{otlp.ProtocolHTTPProtobuf, "macprof-otlp-http"},
		{otlp.ProtocolGRPC, "macprof-otlp-grpc"},
	} {
		e, err := otlp.New(otlp.Config{Protocol: c.protocol, Endpoint: s.URL, EndpointIsBase: true, Insecure: &insecure})
		if err != nil {
			t.Fatal(err)
		}
		body, err := otlp.Marshal(fx.Window, fixture.NewCache(), otlp.BuildOptions{ServiceName: c.service, HostName: "box-3",
			Attributes: map[string]string{"deployment.environment.name": "it"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Send(ctx, body); err != nil {
			t.Fatalf("OTLP %s: %v", c.protocol, err)
		}
		if err := e.Probe(ctx); err != nil {
			t.Errorf("OTLP %s probe: %v", c.protocol, err)
		}
		e.Close()
	}
	// Through the collector as deploy/otel-collector.yaml configures it.
	col := collectortest.StartDeploy(t, map[string]string{"PYROSCOPE_OTLP_ENDPOINT": s.Addr, "PYROSCOPE_INSECURE": "true"})
	ce, err := otlp.New(otlp.Config{Protocol: otlp.ProtocolHTTPProtobuf, Endpoint: "http://" + col.HTTPAddr, EndpointIsBase: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ce.Close()
	body, err := otlp.Marshal(fx.Window, fixture.NewCache(), otlp.BuildOptions{ServiceName: "macprof-collector", HostName: "box-4",
		Attributes: map[string]string{"deployment.environment.name": "it"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := ce.Send(ctx, body); err != nil {
		t.Fatalf("OTLP to the collector: %v", err)
	}
	if err := ce.Probe(ctx); err != nil {
		t.Errorf("OTLP probe of the collector: %v", err)
	}

	exe := filepath.Base(fx.Executable)
	pid := strconv.Itoa(os.Getpid())
	check(t, s, fx, exe, 59, 52, 7, true, map[string]string{"host_name": "box-1", "process_pid": pid,
		"deployment_environment_name": "it", "thread": "worker", "pyroscope_spy": "macprof"})
	check(t, s, fx, "My_App", 4, 4, 0, true, map[string]string{"host_name": "box-1", "thread": "main",
		"process_pid": strconv.Itoa(os.Getpid() + 1)})
	check(t, s, fx, "macprof-raw", 59, 52, 7, true, map[string]string{"host_name": "box-2", "process_pid": pid, "thread": "io"})
	for _, svc := range []string{"macprof-otlp-http", "macprof-otlp-grpc", "macprof-collector"} {
		host := "box-3"
		if svc == "macprof-collector" {
			host = "box-4"
		}
		check(t, s, fx, svc, 59, 52, 7, false, map[string]string{"__otel__": "true", "host_name": host, "process_pid": pid,
			"thread": "worker", "deployment_environment_name": "it"})
	}
	// Each path's host, pid and thread labels select the samples they
	// name: the worker thread's 50 (fixture.NewFixture), "My App"'s 4.
	for _, f := range []struct {
		service, host, pid, thread string
		samples                    int64
	}{
		{exe, "box-1", pid, "worker", 50},
		{"My_App", "box-1", strconv.Itoa(os.Getpid() + 1), "main", 4},
		{"macprof-raw", "box-2", pid, "worker", 50},
		{"macprof-otlp-http", "box-3", pid, "worker", 50},
		{"macprof-otlp-grpc", "box-3", pid, "worker", 50},
		{"macprof-collector", "box-4", pid, "worker", 50},
	} {
		sel := `{service_name="` + f.service + `",host_name="` + f.host + `",process_pid="` + f.pid + `",thread="` + f.thread + `"}`
		want := f.samples * fx.Window.Period.Nanoseconds()
		got, err := s.Merge(pyroscopetest.CPUProfileType, sel)
		if err != nil || got.Total != want {
			t.Errorf("%s: CPU %v (%v), want %d ns", sel, got, err, want)
		}
	}
	services, err := s.LabelValues("service_name")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{exe, "My_App", "macprof-collector", "macprof-otlp-grpc", "macprof-otlp-http", "macprof-raw"}
	slices.Sort(want)
	if !slices.Equal(services, want) {
		t.Errorf("services %q, want %q", services, want)
	}
	if t.Failed() {
		t.Logf("collector log:\n%s", tail(col.Log()))
	}
}

func tail(s string) string {
	if len(s) > 4000 {
		return "..." + s[len(s)-4000:]
	}
	return s
}
