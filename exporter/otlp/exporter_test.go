package otlp_test

import (
	"compress/gzip"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	collpb "go.opentelemetry.io/proto/slim/otlp/collector/profiles/v1development"
	pb "go.opentelemetry.io/proto/slim/otlp/profiles/v1development"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/macprof/macprof/exporter/otlp"
	"github.com/macprof/macprof/internal/collectortest"
	"github.com/macprof/macprof/internal/fixture"
)

// fakeCollector is an in-process gRPC ProfilesService.
type fakeCollector struct {
	mu       sync.Mutex
	requests []*collpb.ExportProfilesServiceRequest
	md       []metadata.MD
	fail     error // returned while set
	partial  *collpb.ExportProfilesPartialSuccess
}

func (f *fakeCollector) export(ctx context.Context, req *collpb.ExportProfilesServiceRequest) (*collpb.ExportProfilesServiceResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return nil, f.fail
	}
	md, _ := metadata.FromIncomingContext(ctx)
	f.requests = append(f.requests, req)
	f.md = append(f.md, md)
	return &collpb.ExportProfilesServiceResponse{PartialSuccess: f.partial}, nil
}

// startGRPC serves the fake collector on a loopback port, with TLS when
// cert is not nil.
func startGRPC(t *testing.T, cert *tls.Certificate) (*fakeCollector, string) {
	t.Helper()
	f := &fakeCollector{}
	var opts []grpc.ServerOption
	if cert != nil {
		opts = append(opts, grpc.Creds(credentials.NewServerTLSFromCert(cert)))
	}
	srv := grpc.NewServer(opts...)
	srv.RegisterService(&grpc.ServiceDesc{
		ServiceName: "opentelemetry.proto.collector.profiles.v1development.ProfilesService",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{
			MethodName: "Export",
			Handler: func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
				req := &collpb.ExportProfilesServiceRequest{}
				if err := dec(req); err != nil {
					return nil, err
				}
				return f.export(ctx, req)
			},
		}},
	}, f)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(srv.Stop)
	return f, l.Addr().String()
}

// countingProxy forwards TCP connections to a server and counts the bytes
// the client sent.
type countingProxy struct {
	addr string
	n    atomic.Int64
}

func newCountingProxy(t *testing.T, target string) *countingProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	p := &countingProxy{addr: l.Addr().String()}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			go func() {
				io.Copy(countWriter{s, &p.n}, c)
				s.Close()
			}()
			go func() {
				io.Copy(c, s)
				c.Close()
			}()
		}
	}()
	return p
}

type countWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n.Add(int64(n))
	return n, err
}

// selfSigned returns a certificate for 127.0.0.1 and the path of its PEM.
func selfSigned(t *testing.T) (tls.Certificate, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "macprof test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, path
}

func fixtureBody(t *testing.T) ([]byte, *fixture.Fixture) {
	t.Helper()
	fx := fixture.NewFixture(t, 77)
	body, err := otlp.Marshal(fx.Window, fixture.NewCache(), otlp.BuildOptions{ServiceName: "svc"})
	if err != nil {
		t.Fatal(err)
	}
	return body, fx
}

// checkRequest decodes a received request and checks it is the fixture's.
func checkRequest(t *testing.T, req *collpb.ExportProfilesServiceRequest, fx *fixture.Fixture) {
	t.Helper()
	ss, err := collectortest.Flatten(&pb.ProfilesData{ResourceProfiles: req.ResourceProfiles, Dictionary: req.Dictionary})
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 3 {
		t.Fatalf("%d samples received, want 3", len(ss))
	}
	if ss[0].Resource[otlp.AttrServiceName] != "svc" || ss[0].Attrs[otlp.AttrThreadName] != "worker" || ss[0].Frames[0] != fx.Leaf {
		t.Errorf("received %+v", ss[0])
	}
}

func TestGRPCExport(t *testing.T) {
	body, fx := fixtureBody(t)
	t.Run("plaintext+gzip+headers", func(t *testing.T) {
		f, addr := startGRPC(t, nil)
		exp, err := otlp.New(otlp.Config{Protocol: otlp.ProtocolGRPC, Endpoint: addr, Insecure: ptr(true), Compression: otlp.CompressionGzip, Headers: map[string]string{"Authorization": "Bearer s3cret", "x-tenant": "t1"}, UserAgent: "macprof/v9.8.7"})
		if err != nil {
			t.Fatal(err)
		}
		defer exp.Close()
		if err := exp.Send(context.Background(), body); err != nil {
			t.Fatal(err)
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if len(f.requests) != 1 {
			t.Fatalf("%d requests", len(f.requests))
		}
		checkRequest(t, f.requests[0], fx)
		md := f.md[0]
		if got := md.Get("authorization"); len(got) != 1 || got[0] != "Bearer s3cret" {
			t.Errorf("authorization metadata %q", got)
		}
		if got := md.Get("x-tenant"); len(got) != 1 || got[0] != "t1" {
			t.Errorf("x-tenant metadata %q", got)
		}
		if got := md.Get("user-agent"); len(got) != 1 || !strings.HasPrefix(got[0], "macprof/v9.8.7 ") {
			t.Errorf("user-agent %q, want macprof/v9.8.7 first", got)
		}
	})
	t.Run("gzip-on-the-wire", func(t *testing.T) {
		// gRPC hides grpc-encoding from handlers: compare the bytes that
		// reach the server for a large body sent plain and gzipped.
		_, addr := startGRPC(t, nil)
		big, err := otlp.Marshal(fixture.BenchWindow(2000), fixture.BenchCache(), otlp.BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sent := func(compression string) int64 {
			p := newCountingProxy(t, addr)
			// Sizes, not times, are checked: a large body under -race
			// on a loaded machine took over 20 s.
			exp, err := otlp.New(otlp.Config{Protocol: otlp.ProtocolGRPC, Endpoint: p.addr, Insecure: ptr(true), Compression: compression, Timeout: 2 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			defer exp.Close()
			if err := exp.Send(context.Background(), big); err != nil {
				t.Fatal(err)
			}
			return p.n.Load()
		}
		plain, zipped := sent(otlp.CompressionNone), sent(otlp.CompressionGzip)
		if plain < int64(len(big)) || zipped*2 > plain {
			t.Errorf("body %d bytes: %d bytes sent plain, %d gzipped", len(big), plain, zipped)
		}
	})
	t.Run("tls", func(t *testing.T) {
		cert, caFile := selfSigned(t)
		f, addr := startGRPC(t, &cert)
		exp, err := otlp.New(otlp.Config{Protocol: otlp.ProtocolGRPC, Endpoint: "https://" + addr, Certificate: caFile})
		if err != nil {
			t.Fatal(err)
		}
		defer exp.Close()
		if err := exp.Send(context.Background(), body); err != nil {
			t.Fatal(err)
		}
		f.mu.Lock()
		checkRequest(t, f.requests[0], fx)
		f.mu.Unlock()
		// Without the CA the server is not trusted: a permanent failure is
		// not claimed, but the send fails.
		bad, err := otlp.New(otlp.Config{Protocol: otlp.ProtocolGRPC, Endpoint: addr, Timeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer bad.Close()
		if err := bad.Send(context.Background(), body); err == nil {
			t.Error("untrusted server accepted")
		}
	})
	t.Run("errors", func(t *testing.T) {
		f, addr := startGRPC(t, nil)
		exp, err := otlp.New(otlp.Config{Protocol: otlp.ProtocolGRPC, Endpoint: "http://" + addr, Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer exp.Close()
		for _, tc := range []struct {
			err       error
			retryable bool
		}{
			{status.Error(codes.Unavailable, "down"), true},
			{status.Error(codes.ResourceExhausted, "slow down"), true},
			{status.Error(codes.InvalidArgument, "bad"), false},
			{status.Error(codes.Unauthenticated, "who"), false},
		} {
			f.mu.Lock()
			f.fail = tc.err
			f.mu.Unlock()
			err := exp.Send(context.Background(), body)
			var xe *otlp.ExportError
			if !errors.As(err, &xe) || xe.Retryable != tc.retryable || xe.Permanent() == tc.retryable {
				t.Errorf("server error %v: got %v (retryable %v)", tc.err, err, xe != nil && xe.Retryable)
			}
		}
		f.mu.Lock()
		f.fail = nil
		f.partial = &collpb.ExportProfilesPartialSuccess{RejectedProfiles: 2, ErrorMessage: "too old"}
		f.mu.Unlock()
		err = exp.Send(context.Background(), body)
		var ps *otlp.PartialSuccessError
		if !errors.As(err, &ps) || ps.Rejected != 2 || !ps.Permanent() {
			t.Errorf("partial success: %v", err)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		// A listener that accepts and never answers.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				defer c.Close()
			}
		}()
		exp, err := otlp.New(otlp.Config{Protocol: otlp.ProtocolGRPC, Endpoint: l.Addr().String(), Insecure: ptr(true), Timeout: 300 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer exp.Close()
		start := time.Now()
		err = exp.Send(context.Background(), body)
		var xe *otlp.ExportError
		if !errors.As(err, &xe) || !xe.Retryable {
			t.Errorf("hung server: %v, want a retryable error", err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("timeout of 300ms took %v", d)
		}
	})
}

func TestHTTPExport(t *testing.T) {
	body, fx := fixtureBody(t)
	var mu sync.Mutex
	var got []*collpb.ExportProfilesServiceRequest
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1development/profiles" {
			http.Error(w, "wrong method or path "+r.Method+" "+r.URL.Path, http.StatusNotFound)
			return
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/x-protobuf" {
			http.Error(w, "content type "+ct, http.StatusUnsupportedMediaType)
			return
		}
		if r.Header.Get("X-Api-Key") != "k" {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		if ua := r.Header.Get("User-Agent"); ua != "macprof/v9.8.7" {
			http.Error(w, "User-Agent "+ua, http.StatusBadRequest)
			return
		}
		var rd io.Reader = r.Body
		if r.Header.Get("Content-Encoding") != "gzip" {
			http.Error(w, "not gzip", http.StatusBadRequest)
			return
		}
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rd = zr
		data, err := io.ReadAll(rd)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		req := &collpb.ExportProfilesServiceRequest{}
		if err := proto.Unmarshal(data, req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		switch status {
		case http.StatusServiceUnavailable:
			w.Header().Set("Retry-After", "7")
			http.Error(w, "busy", status)
			return
		case http.StatusBadRequest:
			http.Error(w, "bad profiles", status)
			return
		}
		got = append(got, req)
		resp, _ := proto.Marshal(&collpb.ExportProfilesServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(resp)
	}))
	defer srv.Close()

	// The base URL from OTEL_EXPORTER_OTLP_ENDPOINT gets the signal path.
	env := map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT":    srv.URL,
		"OTEL_EXPORTER_OTLP_PROTOCOL":    "http/protobuf",
		"OTEL_EXPORTER_OTLP_HEADERS":     "X-Api-Key=k",
		"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip",
	}
	cfg, err := otlp.FromEnvFunc(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	cfg.UserAgent = "macprof/v9.8.7"
	exp, err := otlp.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer exp.Close()
	if err := exp.Send(context.Background(), body); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(got) != 1 {
		t.Fatalf("%d requests", len(got))
	}
	checkRequest(t, got[0], fx)
	status = http.StatusServiceUnavailable
	mu.Unlock()

	err = exp.Send(context.Background(), body)
	var xe *otlp.ExportError
	if !errors.As(err, &xe) || !xe.Retryable || xe.RetryAfter() != 7*time.Second || xe.Status != 503 {
		t.Errorf("503: %v", err)
	}
	mu.Lock()
	status = http.StatusBadRequest
	mu.Unlock()
	err = exp.Send(context.Background(), body)
	if !errors.As(err, &xe) || xe.Retryable || !strings.Contains(err.Error(), "bad profiles") {
		t.Errorf("400: %v", err)
	}

	// A server that is gone: retryable.
	srv.Close()
	if err := exp.Send(context.Background(), body); !errors.As(err, &xe) || !xe.Retryable {
		t.Errorf("closed server: %v", err)
	}
}

func TestFromEnv(t *testing.T) {
	env := map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT":             "http://collector:4317",
		"OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT":    "http://profiles:4318/custom/path",
		"OTEL_EXPORTER_OTLP_PROTOCOL":             "grpc",
		"OTEL_EXPORTER_OTLP_PROFILES_PROTOCOL":    "http/protobuf",
		"OTEL_EXPORTER_OTLP_HEADERS":              "a=1, b = two%20words ,",
		"OTEL_EXPORTER_OTLP_PROFILES_HEADERS":     "c=3",
		"OTEL_EXPORTER_OTLP_INSECURE":             "true",
		"OTEL_EXPORTER_OTLP_TIMEOUT":              "2500",
		"OTEL_EXPORTER_OTLP_COMPRESSION":          "gzip",
		"OTEL_EXPORTER_OTLP_CERTIFICATE":          "/etc/ca.pem",
		"OTEL_EXPORTER_OTLP_PROFILES_CERTIFICATE": "/etc/profiles-ca.pem",
		"OTEL_SERVICE_NAME":                       "checkout",
		"OTEL_RESOURCE_ATTRIBUTES":                "deployment.environment.name=prod,team=perf%2Cinfra",
	}
	cfg, err := otlp.FromEnvFunc(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	want := otlp.Config{
		Protocol:           "http/protobuf",
		Endpoint:           "http://profiles:4318/custom/path",
		Insecure:           ptr(true),
		Headers:            map[string]string{"c": "3"},
		Timeout:            2500 * time.Millisecond,
		Compression:        "gzip",
		Certificate:        "/etc/profiles-ca.pem",
		ServiceName:        "checkout",
		ResourceAttributes: map[string]string{"deployment.environment.name": "prod", "team": "perf,infra"},
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("FromEnv:\n got %+v\nwant %+v", cfg, want)
	}
	// The generic headers when no specific ones are set.
	delete(env, "OTEL_EXPORTER_OTLP_PROFILES_HEADERS")
	delete(env, "OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT")
	cfg, err = otlp.FromEnvFunc(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg.Headers, map[string]string{"a": "1", "b": "two words"}) || !cfg.EndpointIsBase {
		t.Errorf("generic: headers %v base %v", cfg.Headers, cfg.EndpointIsBase)
	}
	// Explicit settings override the environment, maps merge.
	o := cfg.Override(otlp.Config{Endpoint: "flag:4317", Protocol: "grpc", Insecure: ptr(false), Headers: map[string]string{"a": "flag"}, Timeout: time.Second, ServiceName: "flagsvc", ResourceAttributes: map[string]string{"team": "x"}})
	if o.Endpoint != "flag:4317" || o.EndpointIsBase || o.Protocol != "grpc" || *o.Insecure || o.Headers["a"] != "flag" || o.Headers["b"] != "two words" ||
		o.Timeout != time.Second || o.ServiceName != "flagsvc" || o.ResourceAttributes["team"] != "x" || o.ResourceAttributes["deployment.environment.name"] != "prod" || o.Compression != "gzip" {
		t.Errorf("Override: %+v", o)
	}
	// Bad values are errors naming the variable.
	for k, v := range map[string]string{
		"OTEL_EXPORTER_OTLP_PROTOCOL":          "http/json",
		"OTEL_EXPORTER_OTLP_TIMEOUT":           "soon",
		"OTEL_EXPORTER_OTLP_INSECURE":          "maybe",
		"OTEL_EXPORTER_OTLP_COMPRESSION":       "zstd",
		"OTEL_EXPORTER_OTLP_PROFILES_HEADERS":  "novalue",
		"OTEL_RESOURCE_ATTRIBUTES":             "a=%zz",
		"OTEL_EXPORTER_OTLP_PROFILES_PROTOCOL": "udp",
	} {
		_, err := otlp.FromEnvFunc(func(name string) string {
			if name == k {
				return v
			}
			return ""
		})
		if err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%s: error %v, want one naming the variable", k, v, err)
		}
	}
}

func TestNewEndpoints(t *testing.T) {
	for _, tc := range []struct {
		cfg     otlp.Config
		target  string
		wantErr bool
	}{
		{otlp.Config{}, "http http://localhost:4318/v1development/profiles", false},
		{otlp.Config{Endpoint: "http://c:4318"}, "http http://c:4318/v1development/profiles", false},
		{otlp.Config{Protocol: otlp.ProtocolGRPC}, "grpc localhost:4317", false},
		{otlp.Config{Protocol: otlp.ProtocolGRPC, Endpoint: "http://c:4317"}, "grpc c:4317", false},
		{otlp.Config{Protocol: otlp.ProtocolGRPC, Endpoint: "https://c"}, "grpc c:4317", false},
		{otlp.Config{Protocol: otlp.ProtocolHTTPProtobuf}, "http http://localhost:4318/v1development/profiles", false},
		{otlp.Config{Protocol: otlp.ProtocolHTTPProtobuf, Endpoint: "https://c:4318", EndpointIsBase: true}, "http https://c:4318/v1development/profiles", false},
		{otlp.Config{Protocol: otlp.ProtocolHTTPProtobuf, Endpoint: "https://c:4318/otlp/", EndpointIsBase: true}, "http https://c:4318/otlp/v1development/profiles", false},
		{otlp.Config{Protocol: otlp.ProtocolHTTPProtobuf, Endpoint: "https://c/custom"}, "http https://c/custom", false},
		{otlp.Config{Protocol: otlp.ProtocolHTTPProtobuf, Endpoint: "c:4318", Insecure: ptr(true)}, "http http://c:4318/v1development/profiles", false},
		{otlp.Config{Endpoint: "ftp://c"}, "", true},
		{otlp.Config{Protocol: otlp.ProtocolGRPC, Endpoint: "https://c", Insecure: ptr(true)}, "", true},
		{otlp.Config{Protocol: "carrier-pigeon"}, "", true},
		{otlp.Config{Compression: "lz4"}, "", true},
		{otlp.Config{Endpoint: "c:4317", Certificate: "/nonexistent/ca.pem"}, "", true},
	} {
		e, err := otlp.New(tc.cfg)
		if (err != nil) != tc.wantErr {
			t.Errorf("%+v: error %v", tc.cfg, err)
			continue
		}
		if err == nil {
			if e.Target() != tc.target {
				t.Errorf("%+v: target %q, want %q", tc.cfg, e.Target(), tc.target)
			}
			e.Close()
		}
	}
}

func TestMetricsTarget(t *testing.T) {
	for _, tc := range []struct {
		cfg                otlp.Config
		protocol, endpoint string
		plaintext          bool
	}{
		{otlp.Config{}, "http/protobuf", "http://localhost:4318/v1/metrics", true},
		{otlp.Config{Endpoint: "https://c:4318/x", EndpointIsBase: true}, "http/protobuf", "https://c:4318/x/v1/metrics", false},
		{otlp.Config{Endpoint: "https://c/custom/profiles"}, "http/protobuf", "https://c/v1/metrics", false},
		{otlp.Config{Protocol: otlp.ProtocolGRPC, Endpoint: "c:4317", Insecure: ptr(true)}, "grpc", "c:4317", true},
		{otlp.Config{Protocol: otlp.ProtocolGRPC, Endpoint: "https://c"}, "grpc", "c:4317", false},
	} {
		p, e, plain, err := tc.cfg.MetricsTarget()
		if err != nil || p != tc.protocol || e != tc.endpoint || plain != tc.plaintext {
			t.Errorf("%+v: %s %s plaintext %v, err %v; want %s %s %v", tc.cfg, p, e, plain, err, tc.protocol, tc.endpoint, tc.plaintext)
		}
	}
}
