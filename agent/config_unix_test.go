//go:build unix

package agent

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/safefile/safefiletest"
)

// TestConfigFileHostile: a FIFO, a device that reads for ever and a huge
// file given as --config fail at once with an error naming the file
// (issue 17, defect 8).
func TestConfigFileHostile(t *testing.T) {
	fifo := safefiletest.FIFO(t, "fifo.json")
	huge := filepath.Join(t.TempDir(), "huge.json")
	if err := os.WriteFile(huge, []byte(`{"name": "`+strings.Repeat("x", maxConfigBytes)+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{fifo, "FIFO"},
		{"/dev/zero", "device"},
		{huge, "over the size limit"},
	} {
		fs := flag.NewFlagSet("agent", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.String("config", "", "")
		fs.String("name", "", "")
		err := safefiletest.Returns(t, 10*time.Second, "--config "+tc.path, func() error {
			return ApplyConfigFile(fs, []string{"--config", tc.path})
		})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("--config %s: %v; want an error naming the file and saying %q", tc.path, err, tc.want)
		}
	}
}
