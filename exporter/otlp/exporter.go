package otlp

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	collpb "go.opentelemetry.io/proto/slim/otlp/collector/profiles/v1development"
	pb "go.opentelemetry.io/proto/slim/otlp/profiles/v1development"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	grpcgzip "google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/macprof/macprof/exporter"
	"github.com/macprof/macprof/exporter/upload"
	"github.com/macprof/macprof/internal/httpsafe"
	"github.com/macprof/macprof/internal/safefile"
)

// GRPCMethod is the full gRPC method profiles are exported with. It names
// the service as the OTLP protos define it (the slim Go modules rename their
// proto packages, not the wire protocol).
const GRPCMethod = "/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export"

// maxResponseBytes bounds how much of an HTTP response is read.
const maxResponseBytes = 1 << 20

// Exporter sends encoded export requests to an OTLP endpoint. It is safe
// for concurrent use.
type Exporter struct {
	cfg     Config
	target  target
	timeout time.Duration
	conn    *grpc.ClientConn
	client  *http.Client
}

// New returns an Exporter for cfg. For gRPC the connection is made lazily:
// New does not fail when the collector is down.
func New(cfg Config) (*Exporter, error) {
	t, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	e := &Exporter{cfg: cfg, target: t, timeout: cfg.Timeout}
	if e.timeout <= 0 {
		e.timeout = DefaultTimeout
	}
	var tlsConf *tls.Config
	if t.tls {
		if tlsConf, err = cfg.tlsConfig(); err != nil {
			return nil, err
		}
	}
	switch t.protocol {
	case ProtocolGRPC:
		creds := insecure.NewCredentials()
		if t.tls {
			creds = credentials.NewTLS(tlsConf)
		}
		opts := []grpc.DialOption{grpc.WithTransportCredentials(creds)}
		if cfg.UserAgent != "" {
			// grpc-go appends its own product token after it.
			opts = append(opts, grpc.WithUserAgent(cfg.UserAgent))
		}
		e.conn, err = grpc.NewClient(t.grpcAddr, opts...)
		if err != nil {
			return nil, fmt.Errorf("otlp: gRPC client for %s: %w", t.grpcAddr, err)
		}
	case ProtocolHTTPProtobuf:
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = tlsConf
		e.client = httpsafe.SameOrigin(&http.Client{Transport: tr})
	}
	return e, nil
}

func (c Config) tlsConfig() (*tls.Config, error) {
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.Certificate != "" {
		pem, err := readPEM(c.Certificate)
		if err != nil {
			return nil, fmt.Errorf("otlp: CA certificate: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("otlp: CA certificate %s: no PEM certificate in it", c.Certificate)
		}
		conf.RootCAs = pool
	}
	if c.ClientCertificate != "" || c.ClientKey != "" {
		if c.ClientCertificate == "" || c.ClientKey == "" {
			return nil, errors.New("otlp: mutual TLS needs both a client certificate and a client key")
		}
		certPEM, err := readPEM(c.ClientCertificate)
		if err != nil {
			return nil, fmt.Errorf("otlp: client certificate: %w", err)
		}
		keyPEM, err := readPEM(c.ClientKey)
		if err != nil {
			return nil, fmt.Errorf("otlp: client key: %w", err)
		}
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("otlp: client certificate: %w", err)
		}
		conf.Certificates = []tls.Certificate{pair}
	}
	return conf, nil
}

// maxPEMBytes bounds a certificate or key file, far above any real one.
const maxPEMBytes = 1 << 20

// readPEM reads a certificate or key file the configuration names; a FIFO
// or device there is refused rather than waited on.
func readPEM(path string) ([]byte, error) { return safefile.ReadFile(path, maxPEMBytes, false) }

// Target describes where the exporter sends, for logs: "grpc localhost:4317".
func (e *Exporter) Target() string {
	if e.target.protocol == ProtocolGRPC {
		return "grpc " + e.target.grpcAddr
	}
	return "http " + httpsafe.RedactURL(e.target.url)
}

// Close releases the exporter's connections.
func (e *Exporter) Close() error {
	if e.conn != nil {
		return e.conn.Close()
	}
	if e.client != nil {
		e.client.CloseIdleConnections()
	}
	return nil
}

// Export encodes and sends a request.
func (e *Exporter) Export(ctx context.Context, req *collpb.ExportProfilesServiceRequest) error {
	body, err := proto.Marshal(req)
	if err != nil {
		return fmt.Errorf("otlp: encoding profiles: %w", err)
	}
	return e.Send(ctx, body)
}

// Probe sends an export request that holds no profile (one empty resource
// and an empty dictionary, which Grafana Pyroscope's receiver, unlike an
// empty request, accepts): nil means the endpoint answers and takes
// exports, an error why not, without sending any data.
func (e *Exporter) Probe(ctx context.Context) error {
	return e.Export(ctx, &collpb.ExportProfilesServiceRequest{
		ResourceProfiles: []*pb.ResourceProfiles{{}},
		Dictionary:       &pb.ProfilesDictionary{},
	})
}

// Send sends one encoded ExportProfilesServiceRequest (from Marshal). The
// error is an *ExportError telling whether a retry may succeed. A partial
// success (the receiver rejected some profiles) is not an error: it is
// returned as *PartialSuccessError, which is Permanent.
func (e *Exporter) Send(ctx context.Context, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	var resp collpb.ExportProfilesServiceResponse
	var err error
	if e.conn != nil {
		err = e.sendGRPC(ctx, body, &resp)
	} else {
		err = e.sendHTTP(ctx, body, &resp)
	}
	if err != nil {
		return err
	}
	if ps := resp.GetPartialSuccess(); ps != nil && (ps.GetRejectedProfiles() > 0 || ps.GetErrorMessage() != "") {
		return &PartialSuccessError{Rejected: ps.GetRejectedProfiles(), Message: ps.GetErrorMessage()}
	}
	return nil
}

func (e *Exporter) sendGRPC(ctx context.Context, body []byte, resp *collpb.ExportProfilesServiceResponse) error {
	if len(e.cfg.Headers) > 0 {
		md := metadata.MD{}
		for k, v := range e.cfg.Headers {
			md.Append(strings.ToLower(k), v)
		}
		ctx = metadata.NewOutgoingContext(ctx, md)
	}
	opts := []grpc.CallOption{grpc.ForceCodec(rawCodec{})}
	if e.cfg.Compression == CompressionGzip {
		opts = append(opts, grpc.UseCompressor(grpcgzip.Name))
	}
	err := e.conn.Invoke(ctx, GRPCMethod, rawMessage(body), resp, opts...)
	if err == nil {
		return nil
	}
	st, _ := status.FromError(err)
	xe := &ExportError{Op: "gRPC " + e.target.grpcAddr, Err: err}
	switch st.Code() {
	case codes.Canceled, codes.DeadlineExceeded, codes.Aborted, codes.OutOfRange,
		codes.Unavailable, codes.DataLoss, codes.ResourceExhausted, codes.Unknown, codes.Internal:
		xe.Retryable = true
	}
	return xe
}

func (e *Exporter) sendHTTP(ctx context.Context, body []byte, resp *collpb.ExportProfilesServiceResponse) error {
	var rd io.Reader = bytes.NewReader(body)
	if e.cfg.Compression == CompressionGzip {
		var buf bytes.Buffer
		if err := exporter.Gzip(&buf, func(w io.Writer) error { _, err := w.Write(body); return err }); err != nil {
			return &ExportError{Op: "gzip", Err: err}
		}
		rd = &buf
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.target.url, rd)
	if err != nil {
		return &ExportError{Op: "HTTP " + httpsafe.RedactURL(e.target.url), Err: err}
	}
	for k, v := range e.cfg.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	if e.cfg.UserAgent != "" {
		req.Header.Set("User-Agent", e.cfg.UserAgent)
	}
	if e.cfg.Compression == CompressionGzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	res, err := e.client.Do(req)
	if err != nil {
		// Connection refused, reset, timeout: all worth a retry.
		return &ExportError{Op: "HTTP POST " + e.target.url, Err: err, Retryable: true}
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxResponseBytes))
	if err != nil {
		return &ExportError{Op: "HTTP POST " + e.target.url, Err: fmt.Errorf("reading response: %w", err), Retryable: true}
	}
	if res.StatusCode/100 == 2 {
		if len(data) > 0 && strings.HasPrefix(res.Header.Get("Content-Type"), "application/x-protobuf") {
			if err := proto.Unmarshal(data, resp); err != nil {
				return &ExportError{Op: "HTTP POST " + e.target.url, Err: fmt.Errorf("decoding response: %w", err)}
			}
		}
		return nil
	}
	xe := &ExportError{Op: "HTTP POST " + e.target.url, Status: res.StatusCode}
	msg := strings.TrimSpace(string(data))
	if loc := res.Header.Get("Location"); res.StatusCode/100 == 3 && loc != "" {
		// A redirect within the endpoint's origin was followed; this one
		// leads elsewhere (httpsafe.SameOrigin).
		msg = "redirected to " + loc + ", another origin: not followed, so that the endpoint's headers are not sent there"
	}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/x-protobuf") {
		// The body is a google.rpc.Status; its message is field 2. Show
		// the printable part rather than decode the whole type.
		msg = printable(data)
	}
	if len(msg) > 512 {
		msg = msg[:512] + "..."
	}
	xe.Err = fmt.Errorf("status %d %s: %s", res.StatusCode, http.StatusText(res.StatusCode), msg)
	switch res.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		xe.Retryable = true
		if s := res.Header.Get("Retry-After"); s != "" {
			if secs, err := strconv.Atoi(s); err == nil && secs > 0 && secs <= 3600 {
				xe.After = time.Duration(secs) * time.Second
			}
		}
	}
	return xe
}

func printable(b []byte) string {
	var sb strings.Builder
	for _, c := range b {
		if c >= 0x20 && c < 0x7f {
			sb.WriteByte(c)
		}
	}
	return strings.TrimSpace(sb.String())
}

// ExportError is a failed export.
type ExportError struct {
	Op string
	// Status is the HTTP status, 0 for gRPC and transport errors.
	Status int
	Err    error
	// Retryable tells that the same request may succeed later.
	Retryable bool
	// After is how long the server asked to wait (Retry-After), or 0.
	After time.Duration
}

// Error says what failed, with any credential in a URL (the transport's
// errors quote the request's) redacted.
func (e *ExportError) Error() string { return httpsafe.Redact("otlp: " + e.Op + ": " + e.Err.Error()) }

// Unwrap returns the underlying error.
func (e *ExportError) Unwrap() error { return e.Err }

// Permanent reports that retrying the same request cannot help (the
// uploader drops it).
func (e *ExportError) Permanent() bool { return !e.Retryable }

// RetryAfter is the delay the server asked for, or 0.
func (e *ExportError) RetryAfter() time.Duration { return e.After }

// PartialSuccessError reports profiles the receiver rejected from an
// otherwise accepted request.
type PartialSuccessError struct {
	Rejected int64
	Message  string
}

func (e *PartialSuccessError) Error() string {
	return fmt.Sprintf("otlp: receiver rejected %d profiles: %s", e.Rejected, e.Message)
}

// Permanent reports that resending cannot help.
func (e *PartialSuccessError) Permanent() bool { return true }

// rawMessage is an already encoded request.
type rawMessage []byte

// rawCodec sends rawMessage bodies as they are and decodes responses as
// protobuf messages.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) {
	if m, ok := v.(rawMessage); ok {
		return m, nil
	}
	if m, ok := v.(proto.Message); ok {
		return proto.Marshal(m)
	}
	return nil, fmt.Errorf("otlp: cannot encode %T", v)
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("otlp: cannot decode into %T", v)
	}
	return proto.Unmarshal(data, m)
}

func (rawCodec) Name() string { return "proto" }

// Sink returns e as an upload.Sink: each item's Data is an encoded request
// (from Marshal).
func (e *Exporter) Sink() upload.Sink {
	return upload.SinkFunc(func(ctx context.Context, it *upload.Item) error { return e.Send(ctx, it.Data) })
}
