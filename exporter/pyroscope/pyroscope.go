// Package pyroscope pushes profile windows as pprof profiles to Grafana
// Pyroscope's HTTP ingest API, one push per process, the way Pyroscope's own
// Go client (grafana/pyroscope-go, upstream/remote) does.
package pyroscope

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/macprof/macprof/exporter"
	"github.com/macprof/macprof/exporter/upload"
	"github.com/macprof/macprof/internal/httpsafe"
	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/symcache"
)

// IngestPath is the ingest endpoint under the server's URL.
const IngestPath = "/ingest"

// DefaultSpyName is sent as spyName unless Config.SpyName is set.
const DefaultSpyName = "macprof"

// UnknownService names the pushes of samples whose process has no known
// executable, as OpenTelemetry's service.name default does.
const UnknownService = "unknown_service"

// Labels every push carries besides the configured ones (Pyroscope keeps
// only label names of [A-Za-z0-9_]: these are the OpenTelemetry keys
// host.name, process.pid and process.user.id, when the process's user is
// known, as Prometheus-style names). The pprof's own
// string sample label "thread" (the thread's name) becomes a series label
// too; its numeric labels (thread_id, pid) are not kept by Pyroscope.
const (
	LabelHostName      = "host_name"
	LabelProcessPID    = "process_pid"
	LabelProcessUserID = "process_user_id"
)

// Metadata keys of an encoded push (upload.Item.Meta).
const (
	MetaFrom       = "from"
	MetaUntil      = "until"
	MetaSampleRate = "sampleRate"
	// MetaName is the name parameter ("service{k=v,...}").
	MetaName = "name"
)

// Config configures a Client.
type Config struct {
	// URL is the Pyroscope server (http://host:4040, or a path prefix
	// behind a proxy); IngestPath is appended.
	URL string
	// AppName, when set, is the service name of every push. When empty,
	// each process is its own service named after its executable, as
	// OpenTelemetry's service.name would be.
	AppName string
	// Labels are added to every push's name: service{k=v,...}. Dots in
	// keys become underscores (Pyroscope drops names with dots); keys
	// must then match [A-Za-z_][A-Za-z0-9_]*, values may not contain
	// {},= or newlines.
	Labels map[string]string
	// HostName, when set, is sent as the host_name label.
	HostName string
	// SpyName is sent as spyName (default DefaultSpyName).
	SpyName string
	// UserAgent is the User-Agent header (macprof/VERSION), when set.
	UserAgent string
	// BasicAuthUser and BasicAuthPassword set HTTP basic auth.
	BasicAuthUser, BasicAuthPassword string
	// BearerToken sets "Authorization: Bearer <token>" (exclusive with
	// basic auth).
	BearerToken string
	// TenantID, when set, is sent as X-Scope-OrgID.
	TenantID string
	// Headers are extra HTTP headers.
	Headers map[string]string
	// Timeout bounds each push (default 30 s).
	Timeout time.Duration
	// AppOnly, when set, keeps only the frames of each process's own
	// images (exporter.Options.AppOnly).
	AppOnly *exporter.AppFilter
	// Raw sends the profile as the request body with format=pprof instead
	// of a multipart form (which Pyroscope parses only without format).
	Raw bool
	// HTTPClient overrides the HTTP client (TLS settings, proxies).
	HTTPClient *http.Client
	// UnwindLabel keeps the debugging label unwind=cfi on samples walked
	// with unwind tables. It is off by default: Pyroscope makes a series
	// of each label set, so it would split a thread in two.
	UnwindLabel bool
}

// Client pushes profiles to one Pyroscope server. It is safe for
// concurrent use, and implements upload.Sink.
type Client struct {
	cfg    Config
	ingest string
	labels map[string]string
	client *http.Client
}

var labelKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// New checks cfg and returns a Client.
func New(cfg Config) (*Client, error) {
	if cfg.URL == "" {
		return nil, errors.New("pyroscope: no server URL")
	}
	shown := httpsafe.RedactURL(cfg.URL)
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("pyroscope: server URL %q: %s", shown, httpsafe.Redact(err.Error()))
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("pyroscope: server URL %q: want http(s)://host[:port][/prefix]", shown)
	}
	if u.RawQuery != "" {
		return nil, fmt.Errorf("pyroscope: server URL %q: no query allowed", shown)
	}
	if err := checkHeaders(cfg); err != nil {
		return nil, err
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + IngestPath
	labels := make(map[string]string, len(cfg.Labels)+1)
	for k, v := range cfg.Labels {
		labels[strings.ReplaceAll(k, ".", "_")] = v
	}
	if cfg.HostName != "" {
		labels[LabelHostName] = cfg.HostName
	}
	if cfg.AppName != "" {
		if err := checkService(cfg.AppName); err != nil {
			return nil, err
		}
	}
	if _, err := AppName("x", labels); err != nil {
		return nil, err
	}
	if cfg.BearerToken != "" && (cfg.BasicAuthUser != "" || cfg.BasicAuthPassword != "") {
		return nil, errors.New("pyroscope: use basic auth or a bearer token, not both")
	}
	if cfg.SpyName == "" {
		cfg.SpyName = DefaultSpyName
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	c := &Client{cfg: cfg, ingest: u.String(), labels: labels}
	if cfg.HTTPClient != nil {
		// A copy, so that the caller's client keeps its own policy.
		cl := *cfg.HTTPClient
		c.client = httpsafe.SameOrigin(&cl)
	} else {
		// As Pyroscope's Go client: no redirects, which would drop the
		// Authorization header and turn into a confusing 401.
		c.client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	return c, nil
}

// checkHeaders refuses a header, token or tenant that is not valid in an
// HTTP header: with a CR or LF every push would fail, as if the server
// were down.
func checkHeaders(cfg Config) error {
	for k, v := range cfg.Headers {
		if err := httpsafe.CheckHeader(k, v); err != nil {
			return fmt.Errorf("pyroscope: %w", err)
		}
	}
	for _, h := range [][2]string{{"Authorization", cfg.BearerToken}, {"X-Scope-OrgID", cfg.TenantID}, {"User-Agent", cfg.UserAgent}} {
		if err := httpsafe.CheckHeader(h[0], h[1]); err != nil {
			return fmt.Errorf("pyroscope: %w", err)
		}
	}
	return nil
}

func checkService(app string) error {
	if app == "" {
		return errors.New("pyroscope: no application name")
	}
	for _, r := range app {
		if !nameRune(r) {
			return fmt.Errorf("pyroscope: application name %q: %q is not allowed (letters, digits and _ - . / are)", app, r)
		}
	}
	return nil
}

// AppName returns the name parameter for a service and its labels,
// "app{k1=v1,k2=v2}" with keys sorted, checking both.
func AppName(app string, labels map[string]string) (string, error) {
	if err := checkService(app); err != nil {
		return "", err
	}
	if len(labels) == 0 {
		return app, nil
	}
	keys := make([]string, 0, len(labels))
	for k, v := range labels {
		if !labelKey().MatchString(k) {
			return "", fmt.Errorf("pyroscope: label key %q: want [A-Za-z_][A-Za-z0-9_]* (dots become underscores)", k)
		}
		if strings.ContainsAny(v, "{},=\n\r") {
			return "", fmt.Errorf("pyroscope: label %s value %q: it may not contain braces, commas, '=' or newlines", k, v)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(app)
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(labels[k])
	}
	b.WriteByte('}')
	return b.String(), nil
}

// ServiceName is the service a process's profile goes to: the base name of
// its executable, as OpenTelemetry's service.name (process.executable.name)
// would be, with each character /ingest refuses in a name (it takes
// letters, digits and _ - . /) replaced by '_' ("My App" is My_App);
// UnknownService without an executable.
func ServiceName(executable string) string {
	if executable == "" {
		return UnknownService
	}
	return strings.Map(func(r rune) rune {
		if nameRune(r) {
			return r
		}
		return '_'
	}, filepath.Base(executable))
}

// nameRune reports whether /ingest takes r in a service name.
func nameRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-./", r)
}

// Encode builds one gzipped pprof profile (exporter.Profile) per process of
// a window, each with the metadata its push needs: the name
// (service{host_name=...,process_pid=...,labels}), from and until (Unix
// seconds; until at least from+1) and sampleRate (Hz). Samples of a PID the
// window does not describe go to UnknownService under that PID.
func (c *Client) Encode(w *profile.Window, cache *symcache.Cache) ([]upload.Item, error) {
	if err := w.CheckValid(); err != nil {
		return nil, fmt.Errorf("pyroscope: %w", err)
	}
	times := windowMeta(w)
	var items []upload.Item
	for _, part := range splitByProcess(w) {
		p, err := exporter.Profile(part.w, cache, exporter.Options{AppOnly: c.cfg.AppOnly})
		if err != nil {
			return nil, fmt.Errorf("pyroscope: %w", err)
		}
		if !c.cfg.UnwindLabel {
			for _, s := range p.Sample {
				// Samples of one thread share their label map.
				delete(s.Label, exporter.LabelUnwind)
			}
		}
		var buf bytes.Buffer
		if err := exporter.Gzip(&buf, p.WriteUncompressed); err != nil {
			return nil, fmt.Errorf("pyroscope: encoding pprof: %w", err)
		}
		service := c.cfg.AppName
		if service == "" {
			service = ServiceName(part.executable)
		}
		labels := make(map[string]string, len(c.labels)+1)
		for k, v := range c.labels {
			labels[k] = v
		}
		labels[LabelProcessPID] = strconv.Itoa(part.pid)
		if ps := part.w.Processes; len(ps) > 0 && ps[0].HasUID {
			labels[LabelProcessUserID] = strconv.Itoa(ps[0].UID)
		}
		name, err := AppName(service, labels)
		if err != nil {
			return nil, err
		}
		meta := make(map[string]string, len(times)+1)
		for k, v := range times {
			meta[k] = v
		}
		meta[MetaName] = name
		items = append(items, upload.Item{Data: buf.Bytes(), Meta: meta})
	}
	return items, nil
}

// windowMeta returns a window's from, until and sampleRate.
func windowMeta(w *profile.Window) map[string]string {
	from := w.Start.Unix()
	until := w.End.Unix()
	if w.End.After(w.End.Truncate(time.Second)) {
		until++ // round up: the window ends within that second
	}
	if until <= from {
		until = from + 1
	}
	rate := int64(1)
	if w.Period > 0 {
		rate = max(1, int64(time.Second/w.Period))
	}
	return map[string]string{
		MetaFrom:       strconv.FormatInt(from, 10),
		MetaUntil:      strconv.FormatInt(until, 10),
		MetaSampleRate: strconv.FormatInt(rate, 10),
	}
}

type processPart struct {
	w          *profile.Window
	pid        int
	executable string
}

// splitByProcess returns one window per process that has samples, in the
// window's order, then one per PID the window does not describe. They share
// w's stacks; the missed counts, which belong to no process, go with the
// first.
func splitByProcess(w *profile.Window) []processPart {
	index := map[int]int{}
	var parts []processPart
	for _, p := range w.Processes {
		if p.Gen != 0 {
			continue // its PID's part takes it below
		}
		if _, dup := index[p.PID]; dup {
			continue
		}
		index[p.PID] = len(parts)
		sub := &profile.Window{Start: w.Start, End: w.End, Period: w.Period, Mode: w.Mode, Stacks: w.Stacks,
			Processes: []profile.Process{p}}
		parts = append(parts, processPart{w: sub, pid: p.PID, executable: p.Executable})
	}
	// The image sets a process had in turn (Gen) go with its part, so
	// that each sample is symbolized with its own.
	for _, p := range w.Processes {
		if p.Gen == 0 {
			continue
		}
		i, ok := index[p.PID]
		if !ok {
			i = len(parts)
			index[p.PID] = i
			sub := &profile.Window{Start: w.Start, End: w.End, Period: w.Period, Mode: w.Mode, Stacks: w.Stacks}
			parts = append(parts, processPart{w: sub, pid: p.PID, executable: p.Executable})
		}
		parts[i].w.Processes = append(parts[i].w.Processes, p)
	}
	for _, s := range w.Samples {
		if s.Count <= 0 {
			continue
		}
		i, ok := index[s.PID]
		if !ok {
			i = len(parts)
			index[s.PID] = i
			sub := &profile.Window{Start: w.Start, End: w.End, Period: w.Period, Mode: w.Mode, Stacks: w.Stacks}
			parts = append(parts, processPart{w: sub, pid: s.PID})
		}
		parts[i].w.Samples = append(parts[i].w.Samples, s)
	}
	out := parts[:0]
	for _, p := range parts {
		if len(p.w.Samples) > 0 {
			out = append(out, p)
		}
	}
	if len(out) > 0 {
		out[0].w.Missed = w.Missed
	}
	return out
}

// PushWindow encodes a window and pushes each process's profile.
func (c *Client) PushWindow(ctx context.Context, w *profile.Window, cache *symcache.Cache) error {
	items, err := c.Encode(w, cache)
	if err != nil {
		return err
	}
	for _, it := range items {
		if err := c.Push(ctx, it.Data, it.Meta); err != nil {
			return err
		}
	}
	return nil
}

// Send pushes an uploader item made by Encode (upload.Sink).
func (c *Client) Send(ctx context.Context, it *upload.Item) error {
	return c.Push(ctx, it.Data, it.Meta)
}

// Probe pushes an empty profile (no bytes), which Pyroscope accepts and
// stores nothing of: nil means /ingest answers and takes pushes with these
// credentials, an error why not.
func (c *Client) Probe(ctx context.Context) error {
	now := strconv.FormatInt(time.Now().Unix(), 10)
	return c.Push(ctx, nil, map[string]string{MetaFrom: now, MetaUntil: now})
}

// Push sends one gzipped pprof profile with the metadata Encode returned,
// as Pyroscope's Go client does: POST /ingest with name, from, until,
// sampleRate and spyName, the profile in a multipart field "profile". With
// Config.Raw the profile is the whole body and format=pprof says so (the
// handler parses a multipart form only when format is absent). Metadata
// without a name (items spooled by an older macprof) go under AppName, or
// UnknownService. Errors are *PushError, telling whether a retry may
// succeed.
func (c *Client) Push(ctx context.Context, profile []byte, meta map[string]string) error {
	q := url.Values{}
	name := meta[MetaName]
	if name == "" {
		service := c.cfg.AppName
		if service == "" {
			service = UnknownService
		}
		var err error
		if name, err = AppName(service, c.labels); err != nil {
			return &PushError{Err: err}
		}
	}
	q.Set("name", name)
	for _, k := range []string{MetaFrom, MetaUntil} {
		v := meta[k]
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			return &PushError{Err: fmt.Errorf("metadata %s=%q is not a Unix time", k, v)}
		}
		q.Set(k, v)
	}
	q.Set("spyName", c.cfg.SpyName)
	if v := meta[MetaSampleRate]; v != "" {
		q.Set("sampleRate", v)
	}
	var body io.Reader
	contentType := "application/octet-stream"
	if c.cfg.Raw {
		q.Set("format", "pprof")
		body = bytes.NewReader(profile)
	} else {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		fw, err := mw.CreateFormFile("profile", "profile.pprof")
		if err != nil {
			return &PushError{Err: err}
		}
		if _, err := fw.Write(profile); err != nil {
			return &PushError{Err: err}
		}
		if err := mw.Close(); err != nil {
			return &PushError{Err: err}
		}
		body = &buf
		contentType = mw.FormDataContentType()
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.ingest+"?"+q.Encode(), body)
	if err != nil {
		return &PushError{Err: err}
	}
	for k, v := range c.cfg.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", contentType)
	if c.cfg.UserAgent != "" {
		req.Header.Set("User-Agent", c.cfg.UserAgent)
	}
	switch {
	case c.cfg.BearerToken != "":
		req.Header.Set("Authorization", "Bearer "+c.cfg.BearerToken)
	case c.cfg.BasicAuthUser != "" || c.cfg.BasicAuthPassword != "":
		req.SetBasicAuth(c.cfg.BasicAuthUser, c.cfg.BasicAuthPassword)
	}
	if c.cfg.TenantID != "" {
		req.Header.Set("X-Scope-OrgID", c.cfg.TenantID)
	}
	res, err := c.client.Do(req)
	if err != nil {
		return &PushError{Err: err, Retryable: true}
	}
	defer res.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	if res.StatusCode/100 == 2 {
		return nil
	}
	pe := &PushError{Status: res.StatusCode, Err: fmt.Errorf("status %d %s: %s", res.StatusCode, http.StatusText(res.StatusCode), strings.TrimSpace(string(msg)))}
	if loc := res.Header.Get("Location"); res.StatusCode/100 == 3 && loc != "" {
		pe.Err = fmt.Errorf("status %d %s: redirected to %s: not followed, so that the credentials are not sent there; set the URL to where it should go", res.StatusCode, http.StatusText(res.StatusCode), loc)
	}
	if res.StatusCode == http.StatusTooManyRequests || res.StatusCode >= 500 || unavailable(msg) {
		pe.Retryable = true
		if s, err := strconv.Atoi(res.Header.Get("Retry-After")); err == nil && s > 0 && s <= 3600 {
			pe.After = time.Duration(s) * time.Second
		}
	}
	return pe
}

// unavailable reports whether a refusal's body is a gRPC Unavailable
// status, which passes: Grafana Pyroscope answers an ingest with 422 and
// "rpc error: code = Unavailable desc = service is unavailable" while it
// starts or stops (its segment writers not ready), so that a window sent
// across a restart would otherwise be dropped.
func unavailable(body []byte) bool {
	return bytes.Contains(body, []byte("code = Unavailable"))
}

// Target describes where the client pushes, for logs.
func (c *Client) Target() string {
	ingest := httpsafe.RedactURL(c.ingest)
	if c.cfg.AppName != "" {
		return ingest + " as " + c.cfg.AppName
	}
	return ingest + ", a service per executable"
}

// PushError is a failed push.
type PushError struct {
	// Status is the HTTP status, 0 when no response arrived.
	Status int
	Err    error
	// Retryable tells that the same push may succeed later.
	Retryable bool
	// After is the server's Retry-After, or 0.
	After time.Duration
}

// Error says what failed, with any credential in a URL (the transport's
// errors quote the request's) redacted.
func (e *PushError) Error() string { return httpsafe.Redact("pyroscope: push: " + e.Err.Error()) }

// Unwrap returns the underlying error.
func (e *PushError) Unwrap() error { return e.Err }

// Permanent reports that retrying cannot help.
func (e *PushError) Permanent() bool { return !e.Retryable }

// RetryAfter is the delay the server asked for, or 0.
func (e *PushError) RetryAfter() time.Duration { return e.After }
