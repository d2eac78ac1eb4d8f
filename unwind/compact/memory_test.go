package compact

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/macprof/macprof/internal/fixture"
)

// TestFromMemory reads each fixture's table from a fake task memory where
// the image is loaded with a slide, as dyld loads it, and checks it equals
// the table read from the file.
func TestFromMemory(t *testing.T) {
	const slide = 0x3_4560_0000
	images := filepath.Join("..", "..", "images", "testdata", "macho")
	for _, path := range []string{fixturePath("arm64"), fixturePath("x86_64"), filepath.Join("testdata", "big_arm64"),
		filepath.Join(images, "libdemo_arm64.dylib"), filepath.Join(images, "objc_x86_64")} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			var mem fixture.Memory
			m := mem.MapMachO(t, path, slide)
			load := m.Text().Addr + slide
			got, _, err := FromMemory(&mem, load)
			if err != nil {
				t.Fatal(err)
			}
			f := openMachO(t, path)
			want, _, err := FromMachO(f)
			if err != nil {
				t.Fatal(err)
			}
			if got.Len() != want.Len() || got.Arch() != want.Arch() || got.end != want.end {
				t.Fatalf("from memory: %d ranges to %#x (%v), from the file: %d to %#x (%v)", got.Len(), got.end, got.Arch(), want.Len(), want.end, want.Arch())
			}
			for i, start := range want.starts {
				g, ok1 := got.Lookup(start)
				w, ok2 := want.Lookup(start)
				if g != w || ok1 != ok2 {
					t.Errorf("range %d at %#x: from memory %+v, from the file %+v", i, start, g, w)
				}
			}
			// Unmapped or without the section.
			if _, _, err := FromMemory(&mem, load+0x1000); err == nil {
				t.Error("no Mach-O header at load+0x1000, but a table was read")
			}
		})
	}
	// An image without the section.
	b, err := os.ReadFile(fixturePath("arm64"))
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.ReplaceAll(b, []byte("__unwind_info\x00"), []byte("__unwind_infx\x00"))
	path := filepath.Join(t.TempDir(), "prog")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var mem fixture.Memory
	m := mem.MapMachO(t, path, slide)
	if _, _, err := FromMemory(&mem, m.Text().Addr+slide); !errors.Is(err, ErrNoUnwindInfo) {
		t.Errorf("image without __unwind_info: %v, want ErrNoUnwindInfo", err)
	}
}
