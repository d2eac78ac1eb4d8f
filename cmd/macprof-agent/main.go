// Command macprof-agent is macprof's always-on agent, what `macprof agent`
// runs: it samples processes in windows and exports them as OpenTelemetry
// profiles and/or to Grafana Pyroscope. It is a binary of its own so that
// the exporters it links (gRPC, OTLP, otel, net/http) do not slow the
// start of every other macprof command; install it beside macprof.
//
//	macprof-agent --name '^myapp$' --otlp-endpoint http://localhost:4318
//
// takes the flags of `macprof agent` (see `macprof-agent --help`).
package main

import (
	"os"

	"github.com/macprof/macprof/internal/agentcmd"
	"github.com/macprof/macprof/internal/osbackend"
)

func main() {
	os.Exit(agentcmd.Run(os.Args[1:], os.Stdout, os.Stderr, osbackend.OS().Attach))
}
