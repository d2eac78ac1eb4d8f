package otlp

import (
	"errors"
	"flag"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Flags holds the command-line settings of an OTLP exporter. Only flags the
// user set count: Config returns them for Config.Override, so that flags
// override the environment and unset flags leave it alone.
type Flags struct {
	fs     *flag.FlagSet
	prefix string

	endpoint, protocol, compression string
	insecure                        bool
	timeout                         time.Duration
	ca, cert, key                   string
	headers, attrs                  keyValues
	service                         string
	noAliases                       bool
}

// BindFlags registers the OTLP flags on fs, each name starting with prefix
// (for example "otlp-": --otlp-endpoint, --otlp-header, ...; the resource
// flags --service-name and --resource-attr take no prefix).
func BindFlags(fs *flag.FlagSet, prefix string) *Flags {
	f := &Flags{fs: fs, prefix: prefix, headers: keyValues{}, attrs: keyValues{}}
	fs.StringVar(&f.endpoint, prefix+"endpoint", "", "OTLP endpoint: a URL (http/protobuf) or host:port (gRPC); default $OTEL_EXPORTER_OTLP_[PROFILES_]ENDPOINT, else "+DefaultHTTPEndpoint)
	fs.StringVar(&f.protocol, prefix+"protocol", "", "OTLP protocol: http/protobuf or grpc (overrides OTEL_EXPORTER_OTLP_[PROFILES_]PROTOCOL; default http/protobuf)")
	fs.BoolVar(&f.insecure, prefix+"insecure", false, "plaintext (http://, plaintext gRPC) to an endpoint given without a scheme (overrides OTEL_EXPORTER_OTLP_[PROFILES_]INSECURE)")
	fs.Var(f.headers, prefix+"header", "`key=value` header sent with every export; repeatable (merged over OTEL_EXPORTER_OTLP_[PROFILES_]HEADERS)")
	fs.DurationVar(&f.timeout, prefix+"timeout", 0, "timeout of one export (overrides OTEL_EXPORTER_OTLP_[PROFILES_]TIMEOUT; default 10s)")
	fs.StringVar(&f.compression, prefix+"compression", "", "gzip or none (overrides OTEL_EXPORTER_OTLP_[PROFILES_]COMPRESSION; default none)")
	fs.StringVar(&f.ca, prefix+"ca-cert", "", "PEM `file` of CA certificates for the endpoint (overrides OTEL_EXPORTER_OTLP_[PROFILES_]CERTIFICATE)")
	fs.StringVar(&f.cert, prefix+"client-cert", "", "PEM `file` of a client certificate for mutual TLS")
	fs.StringVar(&f.key, prefix+"client-key", "", "PEM `file` of the client certificate's key")
	fs.StringVar(&f.service, "service-name", "", "service.name of the profiles (overrides OTEL_SERVICE_NAME; default: each target's executable name)")
	fs.Var(f.attrs, "resource-attr", "`key=value` resource attribute; repeatable (merged over OTEL_RESOURCE_ATTRIBUTES)")
	fs.BoolVar(&f.noAliases, prefix+"no-label-aliases", false, "send semantic-convention keys only, without the undotted copies (host_name, process_pid, thread) Grafana Pyroscope filters on")
	return f
}

// Config returns the settings of the flags the user set (after fs.Parse).
func (f *Flags) Config() Config {
	var c Config
	f.fs.Visit(func(fl *flag.Flag) {
		switch strings.TrimPrefix(fl.Name, f.prefix) {
		case "endpoint":
			c.Endpoint = f.endpoint
		case "protocol":
			c.Protocol = f.protocol
		case "insecure":
			v := f.insecure
			c.Insecure = &v
		case "header":
			c.Headers = f.headers
		case "timeout":
			c.Timeout = f.timeout
		case "compression":
			c.Compression = f.compression
		case "ca-cert":
			c.Certificate = f.ca
		case "client-cert":
			c.ClientCertificate = f.cert
		case "client-key":
			c.ClientKey = f.key
		case "no-label-aliases":
			c.NoLabelAliases = f.noAliases
		}
		switch fl.Name {
		case "service-name":
			c.ServiceName = f.service
		case "resource-attr":
			c.ResourceAttributes = f.attrs
		}
	})
	return c
}

// Resolve returns the environment's settings (FromEnvFunc through getenv)
// overridden by the flags the user set.
func (f *Flags) Resolve(getenv func(string) string) (Config, error) {
	env, err := FromEnvFunc(getenv)
	if err != nil {
		return Config{}, err
	}
	return env.Override(f.Config()), nil
}

// keyValues is a repeatable key=value flag.
type keyValues map[string]string

func (kv keyValues) String() string {
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		keys[i] = k + "=" + kv[k]
	}
	return strings.Join(keys, ",")
}

func (kv keyValues) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return errors.New("want key=value")
	}
	if len(kv) >= 256 {
		return fmt.Errorf("more than %d values", 256)
	}
	kv[strings.TrimSpace(k)] = v
	return nil
}
