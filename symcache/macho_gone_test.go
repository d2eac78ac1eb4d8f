package symcache_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/fixture"
	"github.com/macprof/macprof/symcache"
)

// deadTask is the memory of a task that exited: xnu unmaps it
// (task_terminate_internal → vm_map_terminate), so every read fails.
type deadTask struct{}

func (deadTask) ReadMemory(uint64, []byte) error { return errors.New("(model) MACH_SEND_INVALID_DEST") }

// TestMemoryGoneUsesFile: an image read from a task whose memory is gone
// is named from the file dyld's list gives when that file's LC_UUID is the
// image's, and stays unnamed when the file there is another build.
func TestMemoryGoneUsesFile(t *testing.T) {
	const slide = 0x4000
	file, err := filepath.Abs(symcache.Fixture("prog_arm64"))
	if err != nil {
		t.Fatal(err)
	}
	task := fixture.NewTask(t, []fixture.TaskImage{{File: file, Path: file, Slide: slide}}, nil)
	found, _, err := images.DyldImages(task.Mem, task.InfosAddr, 0)
	if err != nil || len(found) != 1 {
		t.Fatalf("DyldImages: %d images, %v", len(found), err)
	}
	main := fixture.MachOFunctions(t, file)["main"]
	for _, tc := range []struct {
		name, path, want string
	}{
		{"same build", file, "main"},
		{"another build", anotherBuild(t), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := *found[0]
			img.Path, img.Memory = tc.path, deadTask{}
			fr := symcache.New(symcache.Options{}).Symbolize(&img, main+slide+4, false)
			if got := fr[len(fr)-1].Function; got != tc.want {
				t.Errorf("function %q, want %q", got, tc.want)
			}
		})
	}
}

// anotherBuild is a Mach-O file at a path of its own with another UUID.
func anotherBuild(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(symcache.Fixture("prog_x86_64"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "prog")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
