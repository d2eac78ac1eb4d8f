package symcache

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/objfile/objfiletest"
)

// TestDSYMHostileSymtab opens a dSYM whose LC_SYMTAB has 100,000 entries
// naming one 16 MiB unterminated run (a real 18 MB file): debug/macho
// parsed the table to read DWARF, copying the run once per entry (1.6 TB);
// its DWARF is now read with the table hidden, and its lines still come.
func TestDSYMHostileSymtab(t *testing.T) {
	src := filepath.Join(fixtures, "prog_arm64.dSYM", "Contents", "Resources", "DWARF", "prog_arm64")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	const n = 100000
	symOff := uint32(len(b)+15) &^ 15
	b = append(b, make([]byte, int(symOff)-len(b)+16*n)...)
	for i := 0; i < n; i++ {
		e := b[int(symOff)+16*i:]
		e[4] = 0x0e // N_SECT, name at strx 0
		e[5] = 1
	}
	strOff := uint32(len(b))
	b = append(b, bytes.Repeat([]byte{'A'}, 16<<20)...)
	patched := false
	for off, i := uint32(32), uint32(0); i < le.Uint32(b[16:]); i++ {
		if le.Uint32(b[off:]) == 0x2 { // LC_SYMTAB
			le.PutUint32(b[off+8:], symOff)
			le.PutUint32(b[off+12:], n)
			le.PutUint32(b[off+16:], strOff)
			le.PutUint32(b[off+20:], 16<<20)
			patched = true
		}
		off += le.Uint32(b[off+4:])
	}
	if !patched {
		t.Fatal("fixture: no LC_SYMTAB")
	}
	hostile := filepath.Join(t.TempDir(), "prog_arm64")
	if err := os.WriteFile(hostile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var l *DWARFLines
	alloc := objfiletest.Allocated(func() { l, err = OpenDSYM(hostile, "") })
	if err != nil {
		t.Fatal(err)
	}
	if alloc > 64<<20 {
		t.Errorf("OpenDSYM allocated %d bytes", alloc)
	}
	ref, err := OpenDSYM(src, "")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for a := uint64(0x100000000); a < 0x100004000; a += 4 {
		want := ref.Lines(a)
		if got := l.Lines(a); len(got) != len(want) || len(got) > 0 && got[0] != want[0] {
			t.Fatalf("%#x: %v, the fixture's dSYM gives %v", a, got, want)
		}
		found += len(want)
	}
	if found == 0 {
		t.Fatal("no lines in the fixture's dSYM")
	}
	t.Logf("%v, %d bytes allocated, %d frames", time.Since(start), alloc, found)
}
