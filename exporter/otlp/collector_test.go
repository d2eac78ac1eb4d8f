package otlp_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/macprof/macprof/exporter/otlp"
	"github.com/macprof/macprof/exporter/upload"
	"github.com/macprof/macprof/internal/collectortest"
	"github.com/macprof/macprof/internal/fixture"
	"github.com/macprof/macprof/internal/testprog"
)

// TestRealCollector sends a window of the test binary's own functions to a
// real OpenTelemetry Collector (built from deploy/, started with the
// profiles feature gate) over gRPC and over HTTP, and finds the functions,
// thread names, build IDs and resource attributes in what its file exporter
// wrote.
func TestRealCollector(t *testing.T) {
	col := collectortest.Start(t)
	for _, tc := range []struct {
		name string
		cfg  otlp.Config
		pid  int
	}{
		{"grpc", otlp.Config{Protocol: otlp.ProtocolGRPC, Endpoint: col.GRPCAddr, Insecure: ptr(true)}, 4242},
		{"grpc-gzip", otlp.Config{Protocol: otlp.ProtocolGRPC, Endpoint: "http://" + col.GRPCAddr, Compression: otlp.CompressionGzip}, 4243},
		{"http", otlp.Config{Protocol: otlp.ProtocolHTTPProtobuf, Endpoint: "http://" + col.HTTPAddr, EndpointIsBase: true, Compression: otlp.CompressionGzip}, 4244},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx := fixture.NewFixture(t, tc.pid)
			exp, err := otlp.New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer exp.Close()
			opts := otlp.BuildOptions{ServiceName: "checkout", HostName: "mac-42", Attributes: map[string]string{"deployment.environment.name": "ci"}}
			body, err := otlp.Marshal(fx.Window, fixture.NewCache(), opts)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := exp.Send(ctx, body); err != nil {
				t.Fatalf("export to %s: %v\ncollector log:\n%s", exp.Target(), err, col.Log())
			}
			pid := strconv.Itoa(tc.pid)
			mine := func(ss []collectortest.Sample) []collectortest.Sample {
				var out []collectortest.Sample
				for _, s := range ss {
					if s.Resource[otlp.AttrProcessPID] == pid {
						out = append(out, s)
					}
				}
				return out
			}
			all, ok := col.WaitSamples(20*time.Second, func(ss []collectortest.Sample) bool { return len(mine(ss)) >= 3 })
			got := mine(all)
			if !ok {
				t.Fatalf("the file exporter wrote %d samples of pid %s in 20 s (want 3); %d in all\ncollector log:\n%s", len(got), pid, len(all), col.Log())
			}
			wantRes := map[string]string{
				otlp.AttrServiceName:          "checkout",
				otlp.AttrHostName:             "mac-42",
				otlp.AttrProcessPID:           pid,
				otlp.AttrExecutableName:       filepath.Base(fx.Executable),
				otlp.AttrExecutablePath:       fx.Executable,
				"deployment.environment.name": "ci",
			}
			byThread := map[string]collectortest.Sample{}
			for _, s := range got {
				for k, v := range wantRes {
					if s.Resource[k] != v {
						t.Errorf("resource %s = %q, want %q (resource %v)", k, s.Resource[k], v, s.Resource)
					}
				}
				if s.SampleType != "samples/count" || s.PeriodType != "cpu/nanoseconds" || s.Period != 10e6 {
					t.Errorf("sample type %s, period type %s, period %d", s.SampleType, s.PeriodType, s.Period)
				}
				byThread[s.Attrs[otlp.AttrThreadID]] = s
			}
			worker, io, anon := byThread["11"], byThread["12"], byThread["13"]
			if worker.Attrs[otlp.AttrThreadName] != "worker" || worker.Value != 50 {
				t.Errorf("thread 11: %+v", worker)
			}
			if want := []string{fx.Leaf, fx.Middle, fx.Root}; !slices.Equal(worker.Frames, want) {
				t.Errorf("thread 11 frames %q, want %q", worker.Frames, want)
			}
			if io.Attrs[otlp.AttrThreadName] != "io" || io.Value != 7 || !slices.Equal(io.Frames, []string{fx.Middle, fx.Root}) {
				t.Errorf("thread 12: %+v", io)
			}
			if _, named := anon.Attrs[otlp.AttrThreadName]; named || anon.Value != 2 || !slices.Equal(anon.Frames, []string{fx.Leaf, "[truncated]"}) {
				t.Errorf("thread 13: %+v", anon)
			}
			if fx.BuildID == "" {
				t.Fatalf("the test binary %s has no GNU build ID to check", fx.Executable)
			}
			if len(worker.BuildIDs) == 0 || worker.BuildIDs[0] != fx.BuildID || worker.Files[0] != fx.Executable {
				t.Errorf("mapping of the leaf: build ID %q file %q, want %q %q", worker.BuildIDs, worker.Files, fx.BuildID, fx.Executable)
			}
		})
	}
	if _, err := os.Stat(col.OutFile); err != nil {
		t.Fatal(err)
	}
}

// TestRealCollectorDownAndBack checks what the uploader relies on: a send
// to a stopped collector fails as retryable, and succeeds after restart.
func TestRealCollectorDownAndBack(t *testing.T) {
	col := collectortest.Start(t)
	exp, err := otlp.New(otlp.Config{Protocol: otlp.ProtocolGRPC, Endpoint: col.GRPCAddr, Insecure: ptr(true), Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer exp.Close()
	fx := fixture.NewFixture(t, 5151)
	body, err := otlp.Marshal(fx.Window, fixture.NewCache(), otlp.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	col.Stop()
	err = exp.Send(context.Background(), body)
	var xe *otlp.ExportError
	if err == nil || !asExportError(err, &xe) || !xe.Retryable {
		t.Fatalf("send to a stopped collector: %v, want a retryable *ExportError", err)
	}
	col.Restart()
	if !testprog.PollEvery(30*time.Second, 200*time.Millisecond, func() bool {
		err = exp.Send(context.Background(), body)
		return err == nil
	}) {
		t.Fatalf("send after restart: %v", err)
	}
	if _, ok := col.WaitSamples(20*time.Second, func(ss []collectortest.Sample) bool { return len(ss) >= 3 }); !ok {
		t.Fatalf("nothing arrived after restart; log:\n%s", col.Log())
	}
}

// TestUploaderThroughCollectorOutage plugs the pieces together as the agent
// does: windows encoded by Marshal queue in an uploader whose sink is the
// OTLP exporter; the collector is down while they are queued, comes back,
// and every window arrives.
func TestUploaderThroughCollectorOutage(t *testing.T) {
	col := collectortest.Start(t)
	exp, err := otlp.New(otlp.Config{Protocol: otlp.ProtocolGRPC, Endpoint: col.GRPCAddr, Insecure: ptr(true), Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer exp.Close()
	spool := t.TempDir()
	if err := os.Chmod(spool, 0o700); err != nil { // as the agent's --spool-dir must be
		t.Fatal(err)
	}
	u, err := upload.New(exp.Sink(), upload.Config{Name: "otlp", MaxItems: 16, InitialBackoff: 50 * time.Millisecond, MaxBackoff: 500 * time.Millisecond, SpoolDir: filepath.Join(spool, "otlp")})
	if err != nil {
		t.Fatal(err)
	}
	col.Stop()
	cache := fixture.NewCache()
	pids := []int{6001, 6002, 6003, 6004, 6005}
	for _, pid := range pids {
		body, err := otlp.Marshal(fixture.NewFixture(t, pid).Window, cache, otlp.BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := u.Enqueue(body, nil); err != nil {
			t.Fatal(err)
		}
	}
	testprog.WaitFor(t, 20*time.Second, func() bool { return u.Stats().Failed >= 3 }, "a few failed attempts")
	if st := u.Stats(); st.Failed == 0 || st.Sent != 0 || st.QueueItems != 5 {
		t.Fatalf("while the collector is down: %+v", st)
	}
	col.Restart()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := u.Shutdown(ctx); err != nil {
		t.Fatalf("flush after restart: %v; log:\n%s", err, col.Log())
	}
	if st := u.Stats(); st.Sent != 5 || st.Dropped != 0 {
		t.Errorf("after restart: %+v", st)
	}
	seen := map[string]bool{}
	col.WaitSamples(20*time.Second, func(ss []collectortest.Sample) bool {
		for _, s := range ss {
			seen[s.Resource[otlp.AttrProcessPID]] = true
		}
		for _, pid := range pids {
			if !seen[strconv.Itoa(pid)] {
				return false
			}
		}
		return true
	})
	for _, pid := range pids {
		if !seen[strconv.Itoa(pid)] {
			t.Errorf("window of pid %d never arrived", pid)
		}
	}
}
