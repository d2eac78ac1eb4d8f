package otlp_test

import (
	"flag"
	"io"
	"testing"
	"time"

	"github.com/macprof/macprof/exporter/otlp"
)

func TestFlagsOverrideEnv(t *testing.T) {
	env := map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": "http://env:4317",
		"OTEL_EXPORTER_OTLP_HEADERS":  "a=env,b=env",
		"OTEL_EXPORTER_OTLP_TIMEOUT":  "5000",
		"OTEL_SERVICE_NAME":           "envsvc",
		"OTEL_RESOURCE_ATTRIBUTES":    "team=env",
	}
	getenv := func(k string) string { return env[k] }

	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := otlp.BindFlags(fs, "otlp-")
	if err := fs.Parse([]string{"--otlp-endpoint", "flag:4317", "--otlp-insecure", "--otlp-header", "a=flag", "--resource-attr", "region=eu", "--otlp-compression", "gzip", "--otlp-no-label-aliases"}); err != nil {
		t.Fatal(err)
	}
	c, err := f.Resolve(getenv)
	if err != nil {
		t.Fatal(err)
	}
	if c.Endpoint != "flag:4317" || c.EndpointIsBase || c.Insecure == nil || !*c.Insecure || c.Compression != "gzip" {
		t.Errorf("flags not applied: %+v", c)
	}
	if c.Headers["a"] != "flag" || c.Headers["b"] != "env" {
		t.Errorf("headers %v", c.Headers)
	}
	if c.Timeout != 5*time.Second || c.ServiceName != "envsvc" {
		t.Errorf("unset flags overrode the environment: %+v", c)
	}
	if c.ResourceAttributes["team"] != "env" || c.ResourceAttributes["region"] != "eu" {
		t.Errorf("resource attributes %v", c.ResourceAttributes)
	}
	if !c.BuildOptions("h", "v").NoLabelAliases {
		t.Error("--otlp-no-label-aliases does not reach the build options")
	}
	// No flags: the environment as is.
	fs2 := flag.NewFlagSet("agent", flag.ContinueOnError)
	f2 := otlp.BindFlags(fs2, "otlp-")
	fs2.Parse(nil)
	c2, _ := f2.Resolve(getenv)
	if c2.Endpoint != "http://env:4317" || !c2.EndpointIsBase || c2.Insecure != nil || c2.BuildOptions("h", "v").NoLabelAliases {
		t.Errorf("without flags: %+v", c2)
	}
	// A malformed repeatable flag is a parse error.
	fs3 := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs3.SetOutput(io.Discard)
	otlp.BindFlags(fs3, "otlp-")
	if err := fs3.Parse([]string{"--otlp-header", "novalue"}); err == nil {
		t.Error("--otlp-header novalue accepted")
	}
}
