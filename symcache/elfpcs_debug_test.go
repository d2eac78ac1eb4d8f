package symcache

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// TestELFAtLeavesTablesTheDebugFileOutnumbers: a stripped program whose
// debug file has more named functions than the program's .dynsym has
// entries is named from the debug file without its own tables being read,
// so that a .dynsym whose string table is broken does not fail its load.
func TestELFAtLeavesTablesTheDebugFileOutnumbers(t *testing.T) {
	stripped, dbgDir, id := strippedWithDebugFile(t)
	funcs, helper := debugFunctions(t, dbgDir, id)
	f, err := elf.Open(stripped)
	if err != nil {
		t.Fatal(err)
	}
	n, ok := symbolEntries(f)
	dynsym := -1
	for i, s := range f.Sections {
		if s.Type == elf.SHT_DYNSYM {
			dynsym = i
		}
	}
	f.Close()
	if !ok || n >= funcs || dynsym < 0 {
		t.Fatalf("the stripped program's tables have %d entries (%v), its .dynsym is section %d, the debug file has %d functions: the test needs fewer entries and a .dynsym", n, ok, dynsym, funcs)
	}
	// Point .dynsym's sh_link at the null section: no string table.
	b, err := os.ReadFile(stripped)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	shoff, shentsize := le.Uint64(b[0x28:]), uint64(le.Uint16(b[0x3a:]))
	le.PutUint32(b[shoff+uint64(dynsym)*shentsize+40:], 0)
	broken := filepath.Join(t.TempDir(), "p")
	if err := os.WriteFile(broken, b, 0o755); err != nil {
		t.Fatal(err)
	}

	useDebugDir(t, dbgDir)
	img := execImage(t, broken, 0)
	img.BuildID = id
	c := New(Options{NoLines: true})
	c.Expect(img, helper, false)
	if got := c.Symbolize(img, helper, false); len(got) == 0 || got[0].Function != "helper" {
		t.Fatalf("helper's address symbolizes as %+v, want helper from the debug file", got)
	}
}
