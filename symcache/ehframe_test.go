package symcache

import (
	"debug/elf"
	"encoding/binary"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestELFStrippedStarts strips a C program (gcc -O2, static functions
// included) of .symtab and checks that every address of every function of
// the unstripped file resolves, in the stripped one, to a frame named by
// that function's start: its .dynsym name when it has one, else
// image+0xSTART from .eh_frame.
func TestELFStrippedStarts(t *testing.T) {
	bin := buildInlineC(t, "-fno-inline")
	stripped := filepath.Join(t.TempDir(), "inl-stripped")
	if out, err := exec.Command(tool(t, "strip", "llvm-strip"), "--strip-all", "-o", stripped, bin).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.Symbols()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	img := execImage(t, stripped, 0)
	c := New(Options{})
	anon := 0
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Size == 0 || s.Section == elf.SHN_UNDEF {
			continue
		}
		for a := s.Value; a < s.Value+s.Size; a++ {
			fr := c.Symbolize(img, a, false)
			g := fr[len(fr)-1]
			switch {
			case g.Anonymous:
				if g.Start != s.Value || g.Offset != a-s.Value {
					t.Fatalf("%s+%d: frame %+v named %s, want start %#x", s.Name, a-s.Value, g, g.Name(), s.Value)
				}
				if a == s.Value {
					anon++
				}
			case g.Function != s.Name || g.Offset != a-s.Value:
				t.Fatalf("%s+%d: frame %+v", s.Name, a-s.Value, g)
			}
		}
	}
	if anon < 3 {
		t.Errorf("only %d functions named by their .eh_frame start", anon)
	}
}

// FuzzEHFrame walks hostile .eh_frame sections: it must not panic and
// must return at most one start per 8 bytes.
func FuzzEHFrame(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, addr uint64) {
		starts := parseEHFrame(data, addr, binary.LittleEndian, 8, nil)
		if len(starts) > len(data)/8 {
			t.Fatalf("%d starts from %d bytes", len(starts), len(data))
		}
	})
}
