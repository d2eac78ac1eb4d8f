package symcache

import (
	"debug/elf"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/objfile"
)

// TestCodeInASectionOfItsOwnStartsThere: the PLT's stubs, which follow
// .init's sizeless _init, and a stripped file's .fini, which follows its
// last function's FDE, are named from a start in their own section (their
// section's start, as image+0xSTART), never after the symbol before them,
// by LoadELF's, LoadELFMapped's and loadELFAt's tables alike.
func TestCodeInASectionOfItsOwnStartsThere(t *testing.T) {
	bin := buildInlineC(t, "-fno-inline")
	stripped := filepath.Join(t.TempDir(), "inl-stripped")
	if out, err := exec.Command(tool(t, "strip", "llvm-strip"), "--strip-all", "-o", stripped, bin).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v\n%s", err, out)
	}
	checked := 0
	for _, path := range []string{bin, stripped} {
		f, err := elf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		img := &images.Image{Path: path, Format: images.FormatELF, Start: 0, Limit: 1 << 40}
		full, err := LoadELF(img)
		if err != nil {
			t.Fatal(err)
		}
		var mapped *Table
		func() {
			defer objfile.RecoverFault(&err, objfile.PanicOnFault())
			var unmap func() error
			if mapped, unmap, err = LoadELFMapped(img); err == nil {
				t.Cleanup(func() { unmap() })
			}
		}()
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{".plt", ".plt.sec", ".fini"} {
			s := f.Section(name)
			if s == nil || s.Size == 0 {
				continue
			}
			for a := s.Addr; a < s.Addr+s.Size; a += 4 {
				few, err := loadELFAt(img, []uint64{a - s.Addr + s.Offset})
				if err != nil {
					t.Fatal(err)
				}
				for k, tab := range []*Table{full, mapped, few} {
					if n, start, ok := tab.Lookup(a); ok && start < s.Addr {
						t.Errorf("%s, %s+%#x: %s's table names it %q at %#x, before the section at %#x", filepath.Base(path), name, a-s.Addr, [...]string{"LoadELF", "LoadELFMapped", "loadELFAt"}[k], n, start, s.Addr)
					}
				}
				checked++
			}
		}
	}
	if checked == 0 {
		t.Fatal("the test program has neither .plt nor .fini")
	}
}
