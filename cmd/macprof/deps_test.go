package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestLinksNoExporters keeps the agent's exporters (gRPC, OTLP, otel,
// net/http) and cgo out of the macprof binary, on Linux and darwin: their
// package inits and libc's loading more than doubled the start-up of
// every command (snapshot included), and only macprof-agent needs them.
func TestLinksNoExporters(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed on PATH: %v", err)
	}
	for _, goos := range []string{"linux", "darwin"} {
		cmd := exec.Command(gobin, "list", "-deps", ".")
		cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH=arm64", "CGO_ENABLED=1")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps (%s): %v", goos, err)
		}
		for _, pkg := range strings.Fields(string(out)) {
			bad := pkg == "net/http" || strings.HasPrefix(pkg, "google.golang.org/grpc") || strings.HasPrefix(pkg, "go.opentelemetry.io/")
			if goos == "linux" {
				bad = bad || pkg == "runtime/cgo" || pkg == "os/user" || pkg == "net"
			}
			if bad {
				t.Errorf("macprof for %s links %s: the agent's exporters and cgo belong in cmd/macprof-agent", goos, pkg)
			}
			if pkg == "encoding/xml" {
				t.Errorf("macprof for %s links encoding/xml, whose init builds a 250-entry map at every command's start: escape XML without it (flamegraph's escape)", goos)
			}
		}
	}
}
