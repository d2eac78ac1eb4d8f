//go:build linux && (amd64 || arm64)

package ptrace

import (
	"debug/elf"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/symcache"
	"github.com/macprof/macprof/target"
)

// TestImagesReadWhatIsMapped profiles a program that, once running, puts
// at its executable's path a link to a mode-0600 file holding the same
// code under a distinctive name (TOP_SECRET_root_only_symbol): its frames
// are named from the file it maps (spin), through map_files while it
// lives; without map_files (as after it exits) the file at the path is
// refused for not being the mapped one, and its frames stay unnamed. The
// secret name must never appear.
func TestImagesReadWhatIsMapped(t *testing.T) {
	dir := t.TempDir()
	bin := copyFile(t, testprog.BuildC(t, "swapself.c"), filepath.Join(dir, "swapself"), 0o755)
	secret := copyFile(t, testprog.BuildC(t, "secret.c"), filepath.Join(dir, "secret"), 0o600)
	spin := testprog.ELFSymbol(t, bin, "spin")
	if a := testprog.ELFSymbol(t, secret, "TOP_SECRET_root_only_symbol"); a != spin {
		t.Fatalf("fixture: the secret's function is at %#x, spin at %#x; the test needs them at one address", a, spin)
	}
	p := testprog.Start(t, bin, secret)
	if dst, err := os.Readlink(bin); err != nil || dst != secret {
		t.Fatalf("%s is not yet a link to the secret: %q, %v", bin, dst, err)
	}
	tg, err := Attach(p.PID, target.Options{Continuous: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	var exe *images.Image
	if !testprog.PollEvery(10*time.Second, 20*time.Millisecond, func() bool {
		set, err := tg.Images()
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range set.Images() {
			if im.Path == bin {
				exe = im
			}
		}
		return exe != nil && exe.BuildID != ""
	}) {
		t.Fatalf("no build ID for %s in 10 s: %v", bin, exe)
	}
	if want, _ := images.ELFBuildID(secret); exe.BuildID == want {
		t.Fatalf("build ID %s is the secret's: read at the path", exe.BuildID)
	}
	pc := runtimeAddr(t, bin, exe, spin) + 1
	fr := symcache.New(symcache.Options{}).Symbolize(exe, pc, false)
	if got := fr[len(fr)-1]; got.Function != "spin" {
		t.Errorf("while it runs: %+v, want spin (from the mapped file)", got)
	}

	// The path alone (the target has exited, or map_files is not ours to
	// follow): the file there is not the mapped one.
	byPath := *exe
	byPath.MapFile = ""
	if f, err := byPath.Open(); !errors.Is(err, images.ErrNotMapped) {
		if f != nil {
			f.Close()
		}
		t.Errorf("Open at the path: %v, want ErrNotMapped", err)
	}
	fr = symcache.New(symcache.Options{}).Symbolize(&byPath, pc, false)
	got := fr[len(fr)-1]
	if got.Function != "" || got.Anonymous || strings.Contains(got.Name(), "TOP_SECRET") {
		t.Errorf("by path: %+v named %q, want an unnamed frame", got, got.Name())
	}
}

// copyFile copies src to dst with mode perm and returns dst.
func copyFile(t *testing.T, src, dst string, perm os.FileMode) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, perm); err != nil {
		t.Fatal(err)
	}
	return dst
}

// runtimeAddr returns where link-time address addr of bin is in im, its
// executable mapping.
func runtimeAddr(t *testing.T, bin string, im *images.Image, addr uint64) uint64 {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Off&^0xfff == im.Offset {
			return im.Start + addr - p.Vaddr&^0xfff
		}
	}
	t.Fatalf("%s: no segment at offset %#x", bin, im.Offset)
	return 0
}
