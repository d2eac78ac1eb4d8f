package pyroscope_test

import (
	"flag"
	"io"
	"testing"

	"github.com/macprof/macprof/exporter/pyroscope"
)

func TestFlags(t *testing.T) {
	env := map[string]string{
		pyroscope.EnvServerAddress:     "http://env:4040",
		pyroscope.EnvApplicationName:   "envapp",
		pyroscope.EnvBasicAuthUser:     "envuser",
		pyroscope.EnvBasicAuthPassword: "pw",
		pyroscope.EnvTenantID:          "t",
	}
	getenv := func(k string) string { return env[k] }
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := pyroscope.BindFlags(fs, "pyroscope-")
	if err := fs.Parse([]string{"--pyroscope-app", "flagapp", "--pyroscope-label", "env=prod", "--pyroscope-raw"}); err != nil {
		t.Fatal(err)
	}
	cfg, on := f.Config(getenv)
	if !on || cfg.URL != "http://env:4040" || cfg.AppName != "flagapp" || cfg.BasicAuthUser != "envuser" || cfg.BasicAuthPassword != "pw" ||
		cfg.TenantID != "t" || !cfg.Raw || cfg.Labels["env"] != "prod" || cfg.SpyName != "macprof" {
		t.Errorf("config %+v enabled %v", cfg, on)
	}
	if _, err := pyroscope.New(cfg); err != nil {
		t.Errorf("resolved config rejected: %v", err)
	}
	fs2 := flag.NewFlagSet("agent", flag.ContinueOnError)
	f2 := pyroscope.BindFlags(fs2, "pyroscope-")
	fs2.Parse(nil)
	if _, on := f2.Config(func(string) string { return "" }); on {
		t.Error("enabled without a URL")
	}
}
