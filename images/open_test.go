//go:build unix

package images

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/macprof/macprof/internal/testprog"
)

// TestOpenChecksTheMappedFile opens an image whose identity is one
// program's: through a MapFile that leads to another file (a range mapped
// again since) it falls back to the path; a path that now names another
// file, or the right inode with another build ID, is refused.
func TestOpenChecksTheMappedFile(t *testing.T) {
	dir := t.TempDir()
	mapped := filepath.Join(dir, "mapped")
	other := filepath.Join(dir, "other")
	for p, src := range map[string]string{mapped: "swapself.c", other: "secret.c"} {
		b, err := os.ReadFile(testprog.BuildC(t, src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var st syscall.Stat_t
	if err := syscall.Stat(mapped, &st); err != nil {
		t.Fatal(err)
	}
	id, err := ELFBuildID(mapped)
	if err != nil || id == "" {
		t.Fatalf("build ID: %q, %v", id, err)
	}
	im := &Image{Path: mapped, MapFile: other, Format: FormatELF, Dev: uint64(st.Dev), Inode: uint64(st.Ino), BuildID: id}
	f, err := im.Open()
	if err != nil {
		t.Fatal(err)
	}
	var got syscall.Stat_t
	syscall.Fstat(int(f.Fd()), &got)
	f.Close()
	if got.Ino != st.Ino {
		t.Errorf("opened inode %d through a MapFile of another file, want the mapped %d", got.Ino, st.Ino)
	}

	// The path swapped for a link to the other file.
	link := filepath.Join(dir, "link")
	if err := os.Symlink(other, link); err != nil {
		t.Fatal(err)
	}
	swapped := *im
	swapped.Path, swapped.MapFile = link, ""
	if f, err := swapped.Open(); !errors.Is(err, ErrNotMapped) {
		if f != nil {
			f.Close()
		}
		t.Errorf("Open of a swapped path: %v, want ErrNotMapped", err)
	}
	// The mapped inode, but not the build ID the kernel gave.
	wrongID := *im
	wrongID.MapFile, wrongID.BuildID = "", "00"+id[2:]
	if wrongID.BuildID == id {
		wrongID.BuildID = "11" + id[2:]
	}
	if f, err := wrongID.Open(); !errors.Is(err, ErrNotMapped) {
		if f != nil {
			f.Close()
		}
		t.Errorf("Open with another build ID: %v, want ErrNotMapped", err)
	}
}
