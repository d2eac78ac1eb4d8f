// Package pyroscope pushes profile windows as pprof profiles to Grafana
// Pyroscope's HTTP ingest API.
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
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/macprof/macprof/exporter"
	"github.com/macprof/macprof/exporter/upload"
	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/symcache"
)

// IngestPath is the ingest endpoint under the server's URL.
const IngestPath = "/ingest"

// DefaultSpyName is sent as spyName unless Config.SpyName is set.
const DefaultSpyName = "macprof"

// Metadata keys of an encoded window (upload.Item.Meta).
const (
	MetaFrom       = "from"
	MetaUntil      = "until"
	MetaSampleRate = "sampleRate"
)

// Config configures a Client.
type Config struct {
	// URL is the Pyroscope server (http://host:4040, or a path prefix
	// behind a proxy); IngestPath is appended.
	URL string
	// AppName is the application name (required), e.g. "checkout.cpu".
	AppName string
	// Labels are added to the name: app{k=v,...}. Keys must match
	// [A-Za-z_][A-Za-z0-9_.]*; values may not contain {},= or newlines.
	Labels map[string]string
	// SpyName is sent as spyName (default DefaultSpyName).
	SpyName string
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
	// Raw sends the profile as the request body (Content-Type
	// application/octet-stream) instead of a multipart form.
	Raw bool
	// HTTPClient overrides the HTTP client (TLS settings, proxies).
	HTTPClient *http.Client
}

// Client pushes profiles to one Pyroscope server. It is safe for
// concurrent use, and implements upload.Sink.
type Client struct {
	cfg    Config
	ingest string
	name   string
	client *http.Client
}

var labelKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`)

// New checks cfg and returns a Client.
func New(cfg Config) (*Client, error) {
	if cfg.URL == "" {
		return nil, errors.New("pyroscope: no server URL")
	}
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("pyroscope: server URL %q: %w", cfg.URL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("pyroscope: server URL %q: want http(s)://host[:port][/prefix]", cfg.URL)
	}
	if u.RawQuery != "" {
		return nil, fmt.Errorf("pyroscope: server URL %q: no query allowed", cfg.URL)
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + IngestPath
	name, err := AppName(cfg.AppName, cfg.Labels)
	if err != nil {
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
	c := &Client{cfg: cfg, ingest: u.String(), name: name, client: cfg.HTTPClient}
	if c.client == nil {
		c.client = &http.Client{}
	}
	return c, nil
}

// AppName returns the name parameter for an application and its labels,
// "app{k1=v1,k2=v2}" with keys sorted, checking both.
func AppName(app string, labels map[string]string) (string, error) {
	if app == "" {
		return "", errors.New("pyroscope: no application name")
	}
	if strings.ContainsAny(app, "{},= \n\r\t") {
		return "", fmt.Errorf("pyroscope: application name %q: it may not contain braces, commas, '=' or spaces", app)
	}
	if len(labels) == 0 {
		return app, nil
	}
	keys := make([]string, 0, len(labels))
	for k, v := range labels {
		if !labelKey.MatchString(k) {
			return "", fmt.Errorf("pyroscope: label key %q: want [A-Za-z_][A-Za-z0-9_.]*", k)
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

// Encode builds the gzipped pprof profile of a window (exporter.Profile)
// and the metadata a push needs: from and until (Unix seconds; until at
// least from+1) and sampleRate (Hz).
func Encode(w *profile.Window, c *symcache.Cache) (data []byte, meta map[string]string, err error) {
	return EncodeOptions(w, c, exporter.Options{})
}

// EncodeOptions is Encode with exporter options (AppOnly, say).
func EncodeOptions(w *profile.Window, c *symcache.Cache, opts exporter.Options) (data []byte, meta map[string]string, err error) {
	p, err := exporter.Profile(w, c, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("pyroscope: %w", err)
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		return nil, nil, fmt.Errorf("pyroscope: encoding pprof: %w", err)
	}
	from := w.Start.Unix()
	until := w.End.Unix()
	if w.End.After(w.End.Truncate(time.Second)) {
		until++ // round up: the window ends within that second
	}
	if until <= from {
		until = from + 1
	}
	rate := int64(time.Second / w.Period)
	if rate < 1 {
		rate = 1
	}
	return buf.Bytes(), map[string]string{
		MetaFrom:       strconv.FormatInt(from, 10),
		MetaUntil:      strconv.FormatInt(until, 10),
		MetaSampleRate: strconv.FormatInt(rate, 10),
	}, nil
}

// PushWindow encodes a window and pushes it.
func (c *Client) PushWindow(ctx context.Context, w *profile.Window, cache *symcache.Cache) error {
	data, meta, err := Encode(w, cache)
	if err != nil {
		return err
	}
	return c.Push(ctx, data, meta)
}

// Send pushes an uploader item made by Encode (upload.Sink).
func (c *Client) Send(ctx context.Context, it *upload.Item) error {
	return c.Push(ctx, it.Data, it.Meta)
}

// Push sends one gzipped pprof profile with the metadata Encode returned:
// POST /ingest with name ("app{k=v,...}"), from, until, format=pprof,
// sampleRate and spyName, the profile in a multipart field "profile" (the
// whole body with Config.Raw). Errors are *PushError, telling whether a
// retry may succeed.
func (c *Client) Push(ctx context.Context, profile []byte, meta map[string]string) error {
	q := url.Values{}
	q.Set("name", c.name)
	for _, k := range []string{MetaFrom, MetaUntil} {
		v := meta[k]
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			return &PushError{Err: fmt.Errorf("metadata %s=%q is not a Unix time", k, v)}
		}
		q.Set(k, v)
	}
	q.Set("format", "pprof")
	q.Set("spyName", c.cfg.SpyName)
	if v := meta[MetaSampleRate]; v != "" {
		q.Set("sampleRate", v)
	}
	var body io.Reader
	contentType := "application/octet-stream"
	if c.cfg.Raw {
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
	if res.StatusCode == http.StatusTooManyRequests || res.StatusCode >= 500 {
		pe.Retryable = true
		if s, err := strconv.Atoi(res.Header.Get("Retry-After")); err == nil && s > 0 && s <= 3600 {
			pe.After = time.Duration(s) * time.Second
		}
	}
	return pe
}

// Target describes where the client pushes, for logs.
func (c *Client) Target() string { return c.ingest + " as " + c.name }

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

func (e *PushError) Error() string { return "pyroscope: push: " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *PushError) Unwrap() error { return e.Err }

// Permanent reports that retrying cannot help.
func (e *PushError) Permanent() bool { return !e.Retryable }

// RetryAfter is the delay the server asked for, or 0.
func (e *PushError) RetryAfter() time.Duration { return e.After }
