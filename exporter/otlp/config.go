package otlp

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/macprof/macprof/internal/httpsafe"
)

// Protocols an Exporter speaks (the values of OTEL_EXPORTER_OTLP_PROTOCOL).
const (
	ProtocolGRPC         = "grpc"
	ProtocolHTTPProtobuf = "http/protobuf"
)

// Compression values (OTEL_EXPORTER_OTLP_COMPRESSION).
const (
	CompressionGzip = "gzip"
	CompressionNone = "none"
)

// HTTPPath is the path profiles are POSTed to under an OTLP/HTTP base URL.
const HTTPPath = "/v1development/profiles"

// Defaults, as the OTLP exporter specification gives them.
const (
	DefaultProtocol     = ProtocolHTTPProtobuf
	DefaultGRPCEndpoint = "localhost:4317"
	DefaultHTTPEndpoint = "http://localhost:4318" + HTTPPath
	DefaultTimeout      = 10 * time.Second
)

// Config configures an Exporter and the resource Build writes. The zero
// value of a field means "not set": FromEnv fills what the environment
// sets, Override lays explicit settings (flags) over it, and New applies the
// defaults to what is still unset.
type Config struct {
	// Protocol is ProtocolHTTPProtobuf (the default, as the OTLP exporter
	// specification says) or ProtocolGRPC.
	Protocol string
	// Endpoint is where profiles go. For gRPC: host:port, or a URL whose
	// scheme picks TLS (https) or plaintext (http). For HTTP: the full URL
	// profiles are POSTed to (a signal-specific endpoint), unless
	// EndpointIsBase is set.
	Endpoint string
	// EndpointIsBase marks Endpoint as a base URL (OTEL_EXPORTER_OTLP_ENDPOINT):
	// over HTTP, HTTPPath is appended to it.
	EndpointIsBase bool
	// Insecure selects plaintext gRPC for an endpoint without a scheme.
	// Nil means unset (TLS by default, as the specification says).
	Insecure *bool
	// Headers are sent with every request (gRPC metadata or HTTP headers).
	Headers map[string]string
	// Timeout bounds each export (default DefaultTimeout).
	Timeout time.Duration
	// Compression is CompressionGzip or CompressionNone (the default).
	Compression string
	// Certificate is a PEM file of CA certificates to verify the server
	// with, instead of the system's.
	Certificate string
	// ClientCertificate and ClientKey are PEM files for mutual TLS.
	ClientCertificate, ClientKey string

	// UserAgent is the User-Agent of every export (macprof/VERSION), when
	// set.
	UserAgent string

	// ServiceName is written as service.name (OTEL_SERVICE_NAME).
	ServiceName string
	// ResourceAttributes are written on every resource
	// (OTEL_RESOURCE_ATTRIBUTES).
	ResourceAttributes map[string]string
	// NoLabelAliases leaves out the undotted copies of attributes
	// (BuildOptions.NoLabelAliases).
	NoLabelAliases bool
}

// FromEnv reads the configuration from the process environment. See
// FromEnvFunc.
func FromEnv() (Config, error) { return FromEnvFunc(os.Getenv) }

// FromEnvFunc reads the standard OpenTelemetry variables through getenv:
// OTEL_EXPORTER_OTLP_{ENDPOINT,HEADERS,PROTOCOL,INSECURE,TIMEOUT,
// COMPRESSION,CERTIFICATE,CLIENT_CERTIFICATE,CLIENT_KEY}, each overridden by
// its OTEL_EXPORTER_OTLP_PROFILES_* form, plus OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES. Unset variables leave fields unset. A malformed
// value is an error naming the variable.
func FromEnvFunc(getenv func(string) string) (Config, error) {
	var c Config
	var errs []error
	get := func(name string) (value, variable string) {
		specific := "OTEL_EXPORTER_OTLP_PROFILES_" + name
		if v := strings.TrimSpace(getenv(specific)); v != "" {
			return v, specific
		}
		generic := "OTEL_EXPORTER_OTLP_" + name
		return strings.TrimSpace(getenv(generic)), generic
	}
	if v, name := get("PROTOCOL"); v != "" {
		switch v {
		case ProtocolGRPC, ProtocolHTTPProtobuf:
			c.Protocol = v
		default:
			errs = append(errs, fmt.Errorf("%s=%q: want %q or %q (http/json is not supported)", name, v, ProtocolGRPC, ProtocolHTTPProtobuf))
		}
	}
	if v, name := get("ENDPOINT"); v != "" {
		c.Endpoint = v
		c.EndpointIsBase = name == "OTEL_EXPORTER_OTLP_ENDPOINT"
	}
	if v, name := get("INSECURE"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: want true or false", name, v))
		} else {
			c.Insecure = &b
		}
	}
	if v, name := get("HEADERS"); v != "" {
		h, err := ParseKeyValues(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
		c.Headers = h
	}
	if v, name := get("TIMEOUT"); v != "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms < 0 {
			errs = append(errs, fmt.Errorf("%s=%q: want a number of milliseconds", name, v))
		} else {
			c.Timeout = time.Duration(ms) * time.Millisecond
		}
	}
	if v, name := get("COMPRESSION"); v != "" {
		switch v {
		case CompressionGzip, CompressionNone:
			c.Compression = v
		default:
			errs = append(errs, fmt.Errorf("%s=%q: want %q or %q", name, v, CompressionGzip, CompressionNone))
		}
	}
	c.Certificate, _ = get("CERTIFICATE")
	c.ClientCertificate, _ = get("CLIENT_CERTIFICATE")
	c.ClientKey, _ = get("CLIENT_KEY")
	c.ServiceName = strings.TrimSpace(getenv("OTEL_SERVICE_NAME"))
	if v := strings.TrimSpace(getenv("OTEL_RESOURCE_ATTRIBUTES")); v != "" {
		a, err := ParseKeyValues(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err))
		}
		c.ResourceAttributes = a
	}
	return c, errors.Join(errs...)
}

// Override returns c with every field that o sets replacing c's: explicit
// settings (flags, a config file) over the environment. Headers and
// resource attributes are merged key by key, o winning.
func (c Config) Override(o Config) Config {
	if o.Protocol != "" {
		c.Protocol = o.Protocol
	}
	if o.Endpoint != "" {
		c.Endpoint, c.EndpointIsBase = o.Endpoint, o.EndpointIsBase
	}
	if o.Insecure != nil {
		c.Insecure = o.Insecure
	}
	c.Headers = mergeMaps(c.Headers, o.Headers)
	if o.Timeout != 0 {
		c.Timeout = o.Timeout
	}
	if o.Compression != "" {
		c.Compression = o.Compression
	}
	if o.Certificate != "" {
		c.Certificate = o.Certificate
	}
	if o.ClientCertificate != "" {
		c.ClientCertificate = o.ClientCertificate
	}
	if o.ClientKey != "" {
		c.ClientKey = o.ClientKey
	}
	if o.ServiceName != "" {
		c.ServiceName = o.ServiceName
	}
	c.ResourceAttributes = mergeMaps(c.ResourceAttributes, o.ResourceAttributes)
	c.NoLabelAliases = c.NoLabelAliases || o.NoLabelAliases
	return c
}

// BuildOptions returns the resource settings of c for Build.
func (c Config) BuildOptions(hostName, version string) BuildOptions {
	return BuildOptions{ServiceName: c.ServiceName, HostName: hostName, Attributes: c.ResourceAttributes, ScopeVersion: version,
		NoLabelAliases: c.NoLabelAliases}
}

func mergeMaps(a, b map[string]string) map[string]string {
	if len(b) == 0 {
		return a
	}
	out := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// ParseKeyValues parses the W3C-baggage-like lists of OTEL_EXPORTER_OTLP_HEADERS
// and OTEL_RESOURCE_ATTRIBUTES: "k1=v1,k2=v2", values percent-decoded,
// surrounding spaces trimmed. Empty items are ignored.
func ParseKeyValues(s string) (map[string]string, error) {
	const maxItems = 1024
	out := map[string]string{}
	items := strings.Split(s, ",")
	if len(items) > maxItems {
		return nil, fmt.Errorf("%d items: at most %d are accepted", len(items), maxItems)
	}
	for _, item := range items {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("item %q: want key=value", item)
		}
		dk, err := url.PathUnescape(k)
		if err != nil {
			return nil, fmt.Errorf("item %q: bad key: %w", item, err)
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("item %q: bad value: %w", item, err)
		}
		out[dk] = dv
	}
	return out, nil
}

// target is a Config resolved for sending.
type target struct {
	protocol string
	// grpcAddr is host:port for gRPC; url is the full URL for HTTP.
	grpcAddr string
	url      string
	tls      bool
}

// resolve applies the defaults and works out where and how to connect,
// refusing a header that is not valid HTTP. Its errors have the
// credentials in the endpoint they quote redacted.
func (c Config) resolve() (t target, err error) {
	defer func() {
		if err != nil {
			err = errors.New(httpsafe.Redact(err.Error()))
		}
	}()
	for k, v := range c.Headers {
		if err := httpsafe.CheckHeader(k, v); err != nil {
			return t, fmt.Errorf("otlp: %w", err)
		}
	}
	t.protocol = c.Protocol
	if t.protocol == "" {
		t.protocol = DefaultProtocol
	}
	switch t.protocol {
	case ProtocolGRPC:
		ep := c.Endpoint
		if ep == "" {
			ep = DefaultGRPCEndpoint
		}
		if strings.Contains(ep, "://") {
			u, err := url.Parse(ep)
			if err != nil {
				return t, fmt.Errorf("otlp: endpoint %q: %w", ep, err)
			}
			switch u.Scheme {
			case "http":
				t.tls = false
			case "https":
				t.tls = true
			default:
				return t, fmt.Errorf("otlp: endpoint %q: scheme must be http or https", ep)
			}
			if u.Host == "" {
				return t, fmt.Errorf("otlp: endpoint %q has no host", ep)
			}
			t.grpcAddr = u.Host
			if u.Port() == "" {
				t.grpcAddr += ":4317"
			}
			if c.Insecure != nil && *c.Insecure && t.tls {
				return t, fmt.Errorf("otlp: endpoint %q is https but insecure was asked for", ep)
			}
		} else {
			t.grpcAddr = ep
			t.tls = c.Insecure == nil || !*c.Insecure
			if c.Endpoint == "" && c.Insecure == nil {
				// The default endpoint is a local collector.
				t.tls = false
			}
		}
	case ProtocolHTTPProtobuf:
		ep := c.Endpoint
		if ep == "" {
			ep = DefaultHTTPEndpoint
		} else if !strings.Contains(ep, "://") {
			scheme := "https://"
			if c.Insecure != nil && *c.Insecure {
				scheme = "http://"
			}
			ep = scheme + ep
		}
		u, err := url.Parse(ep)
		if err != nil {
			return t, fmt.Errorf("otlp: endpoint %q: %w", ep, err)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return t, fmt.Errorf("otlp: endpoint %q: scheme must be http or https", ep)
		}
		if u.Host == "" {
			return t, fmt.Errorf("otlp: endpoint %q has no host", ep)
		}
		if c.EndpointIsBase {
			u.Path = strings.TrimSuffix(u.Path, "/") + HTTPPath
		} else if u.Path == "" || u.Path == "/" {
			// A bare host: profiles still go to their path.
			u.Path = HTTPPath
		}
		t.url = u.String()
		t.tls = u.Scheme == "https"
	default:
		return t, fmt.Errorf("otlp: protocol %q: want %q or %q", t.protocol, ProtocolGRPC, ProtocolHTTPProtobuf)
	}
	switch c.Compression {
	case "", CompressionNone, CompressionGzip:
	default:
		return t, fmt.Errorf("otlp: compression %q: want %q or %q", c.Compression, CompressionGzip, CompressionNone)
	}
	return t, nil
}

// MetricsPath is where OTLP/HTTP metrics go under a base URL.
const MetricsPath = "/v1/metrics"

// MetricsTarget says where metrics sent beside the profiles go: the same
// collector over the same protocol. Over HTTP, endpoint is the URL of
// MetricsPath beside the profiles' path (a profiles URL ending in HTTPPath
// has it replaced; another path is dropped); over gRPC it is host:port, and
// plaintext tells whether to use TLS.
func (c Config) MetricsTarget() (protocol, endpoint string, plaintext bool, err error) {
	t, err := c.resolve()
	if err != nil {
		return "", "", false, err
	}
	if t.protocol == ProtocolGRPC {
		return t.protocol, t.grpcAddr, !t.tls, nil
	}
	u, err := url.Parse(t.url)
	if err != nil {
		return "", "", false, err
	}
	if strings.HasSuffix(u.Path, HTTPPath) {
		u.Path = strings.TrimSuffix(u.Path, HTTPPath) + MetricsPath
	} else {
		u.Path = MetricsPath
	}
	return t.protocol, u.String(), !t.tls, nil
}
