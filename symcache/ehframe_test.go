package symcache

import (
	"debug/elf"
	"encoding/binary"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/macprof/macprof/internal/testprog"
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
	syms := testprog.ELFSymbols(t, bin)
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

// TestEHFrameHdrStarts checks that the search table of .eh_frame_hdr
// gives the same function starts as a walk of .eh_frame, in a C program
// and in its stripped copy (where the loader uses it), and that a header
// whose table is out of order, or that points at another .eh_frame, is
// refused so that the loader walks .eh_frame instead.
func TestEHFrameHdrStarts(t *testing.T) {
	bin := buildInlineC(t, "-fno-inline")
	stripped := filepath.Join(t.TempDir(), "inl-stripped")
	if out, err := exec.Command(tool(t, "strip", "llvm-strip"), "--strip-all", "-o", stripped, bin).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v\n%s", err, out)
	}
	for _, p := range []string{bin, stripped} {
		f, err := elf.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		walked, err := ehFrameStarts(f, nil)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(walked)
		got, ok := ehFrameHdrStarts(f)
		if !ok || !slices.Equal(got, walked) || len(got) < 5 {
			t.Errorf("%s: .eh_frame_hdr gives %#x (%v), .eh_frame %#x", p, got, ok, walked)
		}
		hs, es := f.Section(".eh_frame_hdr"), f.Section(".eh_frame")
		hdr, err := hs.Data()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := parseEHFrameHdr(hdr, hs.Addr, es.Addr+16, es.Size); ok {
			t.Errorf("%s: a header for another .eh_frame accepted", p)
		}
		swapped := slices.Clone(hdr)
		copy(swapped[12:16], hdr[20:24]) // the first two starts' places exchanged
		copy(swapped[20:24], hdr[12:16])
		if _, ok := parseEHFrameHdr(swapped, hs.Addr, es.Addr, es.Size); ok {
			t.Errorf("%s: a table out of order accepted", p)
		}
	}
}

// FuzzEHFrameHdr reads hostile .eh_frame_hdr sections: it must not panic,
// and a table it accepts has at most one start per 8 bytes of header and
// per 16 bytes of .eh_frame, in order.
func FuzzEHFrameHdr(f *testing.F) {
	f.Fuzz(func(t *testing.T, hdr []byte, addr, ehAddr, ehSize uint64) {
		starts, ok := parseEHFrameHdr(hdr, addr, ehAddr, ehSize)
		if !ok {
			return
		}
		if len(starts) > len(hdr)/8 || uint64(len(starts)) > ehSize/16 {
			t.Fatalf("%d starts from %d bytes of header, %d of .eh_frame", len(starts), len(hdr), ehSize)
		}
	})
}
