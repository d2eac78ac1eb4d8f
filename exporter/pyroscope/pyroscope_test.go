package pyroscope_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	pprof "github.com/google/pprof/profile"

	"github.com/macprof/macprof/exporter/pyroscope"
	"github.com/macprof/macprof/exporter/upload"
	"github.com/macprof/macprof/internal/fixture"
	"github.com/macprof/macprof/profile"
)

// ingest is a fake Pyroscope /ingest endpoint that checks each request
// against the documented API and keeps what it decoded.
type ingest struct {
	t  *testing.T
	mu sync.Mutex
	// Expected request properties.
	wantAuth, wantTenant, wantUA string
	status                       int
	message                      string // the refusal's body ("not now" by default)
	// What arrived.
	queries  []map[string]string
	profiles []*pprof.Profile
}

// known lists the documented /ingest query parameters.
var known = map[string]bool{"name": true, "from": true, "until": true, "format": true, "sampleRate": true, "spyName": true, "units": true, "aggregationType": true}

func (in *ingest) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fail := func(code int, format string, args ...any) {
		in.t.Errorf("ingest: "+format, args...)
		http.Error(w, "bad request", code)
	}
	if r.Method != http.MethodPost || r.URL.Path != "/prefix/ingest" {
		fail(http.StatusNotFound, "%s %s", r.Method, r.URL.Path)
		return
	}
	q := map[string]string{}
	for k, v := range r.URL.Query() {
		if !known[k] {
			fail(http.StatusBadRequest, "undocumented query parameter %q", k)
			return
		}
		if len(v) != 1 {
			fail(http.StatusBadRequest, "parameter %s given %d times", k, len(v))
			return
		}
		q[k] = v[0]
	}
	for _, k := range []string{"name", "from", "until"} {
		if q[k] == "" {
			fail(http.StatusBadRequest, "required parameter %s missing", k)
			return
		}
	}
	from, err1 := strconv.ParseInt(q["from"], 10, 64)
	until, err2 := strconv.ParseInt(q["until"], 10, 64)
	if err1 != nil || err2 != nil || until <= from || from < 1_600_000_000 || until > time.Now().Unix()+60 {
		fail(http.StatusBadRequest, "from %q until %q are not Unix seconds of a recent window", q["from"], q["until"])
		return
	}
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	// Pyroscope's handler parses a multipart form only when format is
	// absent, and takes the body as a raw pprof with format=pprof.
	if multi := mt == "multipart/form-data"; multi != (q["format"] == "") || !multi && q["format"] != "pprof" {
		fail(http.StatusUnprocessableEntity, "Content-Type %s with format %q", mt, q["format"])
		return
	}
	if ua := r.Header.Get("User-Agent"); in.wantUA != "" && ua != in.wantUA {
		fail(http.StatusBadRequest, "User-Agent %q, want %q", ua, in.wantUA)
		return
	}
	if r.Header.Get("Authorization") != in.wantAuth {
		fail(http.StatusUnauthorized, "Authorization %q, want %q", r.Header.Get("Authorization"), in.wantAuth)
		return
	}
	if r.Header.Get("X-Scope-OrgID") != in.wantTenant {
		fail(http.StatusUnauthorized, "X-Scope-OrgID %q, want %q", r.Header.Get("X-Scope-OrgID"), in.wantTenant)
		return
	}
	var data []byte
	if mt == "multipart/form-data" {
		mr := multipart.NewReader(r.Body, params["boundary"])
		for {
			part, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				fail(http.StatusBadRequest, "multipart: %v", err)
				return
			}
			if part.FormName() != "profile" {
				fail(http.StatusBadRequest, "unexpected form field %q", part.FormName())
				return
			}
			data, _ = io.ReadAll(part)
		}
	} else {
		data, _ = io.ReadAll(r.Body)
	}
	p, err := pprof.Parse(bytes.NewReader(data))
	if err != nil {
		fail(http.StatusBadRequest, "profile does not parse as pprof: %v", err)
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.status != 0 {
		w.Header().Set("Retry-After", "3")
		msg := in.message
		if msg == "" {
			msg = "not now"
		}
		http.Error(w, msg, in.status)
		return
	}
	in.queries = append(in.queries, q)
	in.profiles = append(in.profiles, p)
}

func TestPushMultipartBasicAuth(t *testing.T) {
	in := &ingest{t: t, wantAuth: "Basic dXNlcjpwYXNz", wantTenant: "team-a", wantUA: "macprof/v1.2.3"}
	srv := httptest.NewServer(in)
	defer srv.Close()
	c, err := pyroscope.New(pyroscope.Config{
		URL:               srv.URL + "/prefix/",
		AppName:           "checkout",
		Labels:            map[string]string{"env": "prod", "deployment.environment.name": "eu"},
		HostName:          "mac-1",
		UserAgent:         "macprof/v1.2.3",
		BasicAuthUser:     "user",
		BasicAuthPassword: "pass",
		TenantID:          "team-a",
	})
	if err != nil {
		t.Fatal(err)
	}
	fx := fixture.NewFixture(t, 321)
	if err := c.PushWindow(context.Background(), fx.Window, fixture.NewCache()); err != nil {
		t.Fatal(err)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.queries) != 1 {
		t.Fatalf("%d pushes", len(in.queries))
	}
	q := in.queries[0]
	want := map[string]string{
		"name":       "checkout{deployment_environment_name=eu,env=prod,host_name=mac-1,process_pid=321}",
		"from":       strconv.FormatInt(fx.Window.Start.Unix(), 10),
		"until":      strconv.FormatInt(fx.Window.End.Unix(), 10),
		"spyName":    "macprof",
		"sampleRate": "100",
	}
	for k, v := range want {
		if q[k] != v {
			t.Errorf("query %s = %q, want %q", k, q[k], v)
		}
	}
	if len(q) != len(want) {
		t.Errorf("query %v has parameters beyond %v", q, want)
	}
	p := in.profiles[0]
	var leaf, worker bool
	for _, s := range p.Sample {
		if len(s.Location) > 0 && len(s.Location[0].Line) > 0 && s.Location[0].Line[0].Function.Name == fx.Leaf {
			leaf = true
		}
		if len(s.Label["thread"]) > 0 && s.Label["thread"][0] == "worker" && s.Value[0] == 50 {
			worker = true
		}
	}
	if !leaf || !worker {
		t.Errorf("pprof body lacks the leaf function (%v) or the worker thread's 50 samples (%v):\n%v", leaf, worker, p)
	}
}

func TestPushRawBearerAndErrors(t *testing.T) {
	in := &ingest{t: t, wantAuth: "Bearer tok"}
	srv := httptest.NewServer(in)
	defer srv.Close()
	c, err := pyroscope.New(pyroscope.Config{URL: srv.URL + "/prefix", AppName: "svc", BearerToken: "tok", Raw: true, SpyName: "custom"})
	if err != nil {
		t.Fatal(err)
	}
	fx := fixture.NewFixture(t, 1)
	items, err := c.Encode(fx.Window, fixture.NewCache())
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 {
		t.Fatalf("%d items for one process", len(items))
	}
	data, meta := items[0].Data, items[0].Meta
	// Through the uploader, as the agent does.
	u, err := upload.New(c, upload.Config{InitialBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	u.Enqueue(data, meta)
	if err := u.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	in.mu.Lock()
	if len(in.queries) != 1 || in.queries[0]["name"] != "svc{process_pid=1}" || in.queries[0]["format"] != "pprof" || in.queries[0]["spyName"] != "custom" {
		t.Errorf("queries %v", in.queries)
	}
	in.status = http.StatusServiceUnavailable
	in.mu.Unlock()
	err = c.Push(context.Background(), data, meta)
	var pe *pyroscope.PushError
	if !errors.As(err, &pe) || !pe.Retryable || pe.RetryAfter() != 3*time.Second {
		t.Errorf("503: %v", err)
	}
	in.mu.Lock()
	in.status = http.StatusBadRequest
	in.mu.Unlock()
	if err := c.Push(context.Background(), data, meta); !errors.As(err, &pe) || pe.Retryable || !pe.Permanent() {
		t.Errorf("400: %v", err)
	}
	// Pyroscope starting or stopping refuses an ingest with 422 and a
	// gRPC Unavailable status: it passes, the window is kept.
	in.mu.Lock()
	in.status, in.message = http.StatusUnprocessableEntity, "rpc error: code = Unavailable desc = service is unavailable"
	in.mu.Unlock()
	if err := c.Push(context.Background(), data, meta); !errors.As(err, &pe) || !pe.Retryable || pe.Permanent() {
		t.Errorf("422 Unavailable: %v", err)
	}
	in.mu.Lock()
	in.message = "invalid profile"
	in.mu.Unlock()
	if err := c.Push(context.Background(), data, meta); !errors.As(err, &pe) || pe.Retryable {
		t.Errorf("422 of a bad profile: %v", err)
	}
	if err := c.Push(context.Background(), data, map[string]string{"from": "x", "until": "2"}); err == nil {
		t.Error("bad metadata accepted")
	}
	srv.Close()
	if err := c.Push(context.Background(), data, meta); !errors.As(err, &pe) || !pe.Retryable {
		t.Errorf("server gone: %v", err)
	}
}

func TestEncodeTimes(t *testing.T) {
	fx := fixture.NewFixture(t, 1)
	w := *fx.Window
	w.Start = time.Unix(1700000000, 500)
	w.End = time.Unix(1700000009, 1) // ends within second 9: until rounds up
	w.Period = 5 * time.Millisecond
	c, err := pyroscope.New(pyroscope.Config{URL: "http://h"})
	if err != nil {
		t.Fatal(err)
	}
	items, err := c.Encode(&w, fixture.NewCache())
	if err != nil {
		t.Fatal(err)
	}
	meta := items[0].Meta
	if meta["from"] != "1700000000" || meta["until"] != "1700000010" || meta["sampleRate"] != "200" {
		t.Errorf("meta %v", meta)
	}
	w.End = w.Start
	if items, _ = c.Encode(&w, fixture.NewCache()); items[0].Meta["until"] != "1700000001" {
		t.Errorf("empty window: until %s", meta["until"])
	}
}

func TestConfigErrors(t *testing.T) {
	for _, cfg := range []pyroscope.Config{
		{AppName: "a"},
		{URL: "localhost:4040", AppName: "a"},
		{URL: "http://h/?x=1", AppName: "a"},
		{URL: "http://h", AppName: "a{b}"},
		{URL: "http://h", HostName: "a=b"},
		{URL: "http://h", AppName: "a", Labels: map[string]string{"1bad": "v"}},
		{URL: "http://h", AppName: "a", Labels: map[string]string{"k": "a,b"}},
		{URL: "http://h", AppName: "a", BearerToken: "t", BasicAuthUser: "u"},
	} {
		if _, err := pyroscope.New(cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		} else if !strings.HasPrefix(err.Error(), "pyroscope: ") {
			t.Errorf("error %q lacks context", err)
		}
	}
}

// A window of two processes is two pushes, each named after its
// executable (as service.name would be), with its PID as a label; samples
// of a PID the window does not describe go to unknown_service.
func TestEncodeOneServicePerProcess(t *testing.T) {
	fx := fixture.NewFixture(t, 100)
	w := *fx.Window
	other := w.Processes[0]
	other.PID, other.Executable = 200, "/Applications/My App.app/Contents/MacOS/My App"
	other.UID, other.HasUID = 1001, true // the agent's --name sets it
	w.Processes = append([]profile.Process{}, w.Processes[0], other)
	w.Samples = append([]profile.Sample{}, w.Samples...)
	w.Samples = append(w.Samples, profile.Sample{Stack: 0, PID: 200, Thread: 21, ThreadName: "main", Count: 4},
		profile.Sample{Stack: 1, PID: 300, Thread: 31, Count: 5})
	c, err := pyroscope.New(pyroscope.Config{URL: "http://h", HostName: "box"})
	if err != nil {
		t.Fatal(err)
	}
	items, err := c.Encode(&w, fixture.NewCache())
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name  string
		total int64
	}{
		{filepath.Base(fx.Executable) + "{host_name=box,process_pid=100}", 59},
		{"My_App{host_name=box,process_pid=200,process_user_id=1001}", 4},
		{"unknown_service{host_name=box,process_pid=300}", 5},
	}
	if len(items) != len(want) {
		t.Fatalf("%d items, want %d", len(items), len(want))
	}
	for i, it := range items {
		p, err := pprof.ParseData(it.Data)
		if err != nil {
			t.Fatal(err)
		}
		var total int64
		for _, s := range p.Sample {
			total += s.Value[0]
		}
		if it.Meta["name"] != want[i].name || total != want[i].total {
			t.Errorf("item %d: name %q with %d samples, want %q with %d", i, it.Meta["name"], total, want[i].name, want[i].total)
		}
	}
}

// The debugging label unwind=cfi is left out unless asked for: Pyroscope
// makes a series of each label set, so it would split a thread's samples
// into two series.
func TestEncodeUnwindLabelOff(t *testing.T) {
	fx := fixture.NewFixture(t, 100)
	w := *fx.Window
	w.Stacks = append([]profile.Stack{}, w.Stacks...)
	w.Stacks[0].CFI = true
	for _, on := range []bool{false, true} {
		c, err := pyroscope.New(pyroscope.Config{URL: "http://h", UnwindLabel: on})
		if err != nil {
			t.Fatal(err)
		}
		items, err := c.Encode(&w, fixture.NewCache())
		if err != nil || len(items) != 1 {
			t.Fatalf("%d items, %v", len(items), err)
		}
		p, err := pprof.ParseData(items[0].Data)
		if err != nil {
			t.Fatal(err)
		}
		labelled := 0
		for _, s := range p.Sample {
			if len(s.Label["unwind"]) > 0 {
				labelled++
			}
			if s.Label["thread"] == nil && len(s.NumLabel["thread_id"]) == 0 {
				t.Errorf("sample lost its thread labels: %v %v", s.Label, s.NumLabel)
			}
		}
		if on != (labelled > 0) {
			t.Errorf("UnwindLabel %v: %d samples labelled unwind", on, labelled)
		}
	}
}

// Probe pushes an empty profile: nil where /ingest takes it, the status
// where it refuses, the transport's error where nothing answers.
func TestProbe(t *testing.T) {
	var got []string
	var mu sync.Mutex
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.URL.Path+" "+r.URL.Query().Get("name")+" "+strconv.Itoa(len(b)))
		mu.Unlock()
		w.WriteHeader(status)
	}))
	defer srv.Close()
	c, err := pyroscope.New(pyroscope.Config{URL: srv.URL, Raw: true, AppName: "svc"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Probe(context.Background()); err != nil {
		t.Errorf("probe of a server that takes it: %v", err)
	}
	status = http.StatusUnauthorized
	if err := c.Probe(context.Background()); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("probe refused with 401: %v", err)
	}
	mu.Lock()
	if len(got) != 2 || got[0] != "/ingest svc 0" {
		t.Errorf("requests %q, want two empty pushes to /ingest as svc", got)
	}
	mu.Unlock()
	srv.Close()
	if err := c.Probe(context.Background()); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("probe of a closed server: %v", err)
	}
}

// An Encode after the first allocates far less than a new gzip writer's
// tables (about 800 KB at the default level, each export's before): the
// writer is reused.
func TestEncodeReusesTheGzipWriter(t *testing.T) {
	fx := fixture.NewFixture(t, 100)
	c, err := pyroscope.New(pyroscope.Config{URL: "http://h"})
	if err != nil {
		t.Fatal(err)
	}
	cache := fixture.NewCache()
	if _, err := c.Encode(fx.Window, cache); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const calls = 10
	for range calls {
		if _, err := c.Encode(fx.Window, cache); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / calls; per > 400<<10 {
		t.Errorf("an Encode allocated %d KiB, want less than 400 KiB", per>>10)
	}
}
