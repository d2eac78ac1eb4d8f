//go:build unix

package otlp_test

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/macprof/macprof/exporter/otlp"
)

// TestCertificateFIFORefused: a FIFO named as the CA certificate, client
// certificate or key is refused at once, saying what it is, rather than
// waited on for ever by New.
func TestCertificateFIFORefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "ca.pem")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []otlp.Config{
		{Endpoint: "https://c:4317", Certificate: fifo},
		{Endpoint: "https://c:4317", ClientCertificate: fifo, ClientKey: fifo},
	} {
		done := make(chan error, 1)
		go func() {
			e, err := otlp.New(cfg)
			if err == nil {
				e.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file (a FIFO)") {
				t.Errorf("%+v: err %v, want the FIFO refused", cfg, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%+v: New still waiting after 10 s", cfg)
		}
	}
}
