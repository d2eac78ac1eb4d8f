//go:build unix

package symcache

import (
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/safefile/safefiletest"
)

// TestLoadHostileFiles: a FIFO at an image's path fails at once, and a
// load that never ends is given up after the load timeout, so that
// symbolizing goes on (issue 17, defect 2).
func TestLoadHostileFiles(t *testing.T) {
	fifo := safefiletest.FIFO(t, "lib.so")
	err := safefiletest.Returns(t, 10*time.Second, "LoadELF of a FIFO", func() error {
		_, err := LoadELF(&images.Image{Path: fifo, Format: images.FormatELF, Start: 0x1000, Limit: 0x2000})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "FIFO") {
		t.Errorf("LoadELF of a FIFO: %v", err)
	}

	block := make(chan struct{})
	defer close(block)
	c := New(Options{LoadTimeout: 50 * time.Millisecond, Loaders: map[images.Format]Loader{
		images.FormatELF: func(*images.Image) (*Table, error) { <-block; return nil, nil },
	}})
	img := &images.Image{Path: "/stuck", Format: images.FormatELF, Start: 0x1000, Limit: 0x2000}
	start := time.Now()
	if _, err := c.Table(img); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("a load that never ends: %v", err)
	}
	if frames := c.Symbolize(img, 0x1100, false); len(frames) != 1 || frames[0].Function != "" {
		t.Errorf("frames of a stuck image: %+v", frames)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("gave up after %v", took)
	}
}
