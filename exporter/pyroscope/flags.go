package pyroscope

import (
	"errors"
	"flag"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Environment variables read by Flags.Config for flags the user did not set
// (the names the Pyroscope agents use).
const (
	EnvServerAddress     = "PYROSCOPE_SERVER_ADDRESS"
	EnvApplicationName   = "PYROSCOPE_APPLICATION_NAME"
	EnvAuthToken         = "PYROSCOPE_AUTH_TOKEN"
	EnvBasicAuthUser     = "PYROSCOPE_BASIC_AUTH_USER"
	EnvBasicAuthPassword = "PYROSCOPE_BASIC_AUTH_PASSWORD"
	EnvTenantID          = "PYROSCOPE_TENANT_ID"
)

// Flags holds the command-line settings of a Pyroscope client.
type Flags struct {
	fs                    *flag.FlagSet
	prefix                string
	url, app, token, user string
	tenant, spy           string
	raw                   bool
	timeout               time.Duration
	labels                labels
}

// BindFlags registers the Pyroscope flags on fs, each name starting with
// prefix (for example "pyroscope-": --pyroscope-url, --pyroscope-app, ...).
func BindFlags(fs *flag.FlagSet, prefix string) *Flags {
	f := &Flags{fs: fs, prefix: prefix, labels: labels{}}
	fs.StringVar(&f.url, prefix+"url", "", "Pyroscope server `URL` to push pprof to (/ingest is appended; default $"+EnvServerAddress+"; empty: no Pyroscope push)")
	fs.StringVar(&f.app, prefix+"app", "", "service `name` of every push (default $"+EnvApplicationName+"; unset: a service per process, named after its executable, as OpenTelemetry's service.name)")
	fs.Var(f.labels, prefix+"label", "`key=value` label of every push (dots in the key become underscores); repeatable")
	fs.StringVar(&f.token, prefix+"token", "", "bearer token (default $"+EnvAuthToken+")")
	fs.StringVar(&f.user, prefix+"user", "", "basic auth user (default $"+EnvBasicAuthUser+"; the password comes from $"+EnvBasicAuthPassword+")")
	fs.StringVar(&f.tenant, prefix+"tenant", "", "X-Scope-OrgID tenant (default $"+EnvTenantID+")")
	fs.StringVar(&f.spy, prefix+"spy-name", DefaultSpyName, "spyName sent with each push")
	fs.BoolVar(&f.raw, prefix+"raw", false, "send the pprof as the request body instead of a multipart form")
	fs.DurationVar(&f.timeout, prefix+"timeout", 30*time.Second, "timeout of one push")
	return f
}

// Config returns the client settings: flags the user set, else the
// environment through getenv. Enabled is false when no server URL is given
// either way.
func (f *Flags) Config(getenv func(string) string) (cfg Config, enabled bool) {
	pick := func(flagValue, env string) string {
		if flagValue != "" {
			return flagValue
		}
		return strings.TrimSpace(getenv(env))
	}
	cfg = Config{
		URL:               pick(f.url, EnvServerAddress),
		AppName:           pick(f.app, EnvApplicationName),
		BearerToken:       pick(f.token, EnvAuthToken),
		BasicAuthUser:     pick(f.user, EnvBasicAuthUser),
		BasicAuthPassword: strings.TrimSpace(getenv(EnvBasicAuthPassword)),
		TenantID:          pick(f.tenant, EnvTenantID),
		SpyName:           f.spy,
		Raw:               f.raw,
		Timeout:           f.timeout,
	}
	if len(f.labels) > 0 {
		cfg.Labels = map[string]string(f.labels)
	}
	return cfg, cfg.URL != ""
}

type labels map[string]string

func (l labels) String() string {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k+"="+l[k])
	}
	sort.Strings(keys)
	return strings.Join(keys, ",")
}

func (l labels) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return errors.New("want key=value")
	}
	if len(l) >= 64 {
		return fmt.Errorf("more than %d labels", 64)
	}
	l[k] = v
	return nil
}
