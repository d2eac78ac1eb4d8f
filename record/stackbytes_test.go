package record

import (
	"strings"
	"testing"

	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// TestValidateStackBytes: --stack-bytes takes 0 (the default) or 8 KiB up
// to the kernel's limit, and says so otherwise.
func TestValidateStackBytes(t *testing.T) {
	for n, ok := range map[int]bool{0: true, 8 << 10: true, target.MaxKernelStackBytes: true, 100: false, 65536: false, -1: false} {
		c := Config{PID: 1, Hz: 99, Mode: profile.ModeCPU, MaxFrames: unwind.DefaultMaxFrames, KernelStackBytes: n,
			Outputs: []Output{{Path: "p.pb.gz"}}}
		err := c.Validate()
		if ok != (err == nil) || err != nil && !strings.Contains(err.Error(), "--stack-bytes") {
			t.Errorf("--stack-bytes %d: %v", n, err)
		}
	}
}
