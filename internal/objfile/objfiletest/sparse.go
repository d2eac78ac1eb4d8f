// Package objfiletest builds hostile object files for tests.
package objfiletest

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Claimed is the size SparseELF gives each patched section, and Above the
// offset above which it places them.
const (
	Claimed = 1 << 30
	Above   = 3 << 30
)

// SparseELF writes a copy of the 64-bit little-endian ELF file src whose
// .eh_frame, .symtab and .strtab each claim Claimed bytes at offsets above
// Above, the file extended over them as holes: a file of a few KB on disk
// that reads as gigabytes of zeros.
func SparseELF(t testing.TB, src string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Class != elf.ELFCLASS64 || f.Data != elf.ELFDATA2LSB {
		t.Fatalf("%s: not a 64-bit little-endian ELF file", src)
	}
	le := binary.LittleEndian
	shoff := le.Uint64(b[0x28:])
	patched := 0
	for i, s := range f.Sections {
		if s.Name != ".eh_frame" && s.Name != ".symtab" && s.Name != ".strtab" {
			continue
		}
		h := b[shoff+uint64(i)*64:]
		le.PutUint64(h[24:], Above+uint64(patched)*Claimed) // sh_offset
		le.PutUint64(h[32:], Claimed)                       // sh_size
		patched++
	}
	if patched != 3 {
		t.Fatalf("%s: %d of .eh_frame, .symtab and .strtab found", src, patched)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(src)+"-sparse")
	if err := os.WriteFile(out, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(out, Above+4*Claimed); err != nil {
		t.Fatal(err)
	}
	return out
}

// Allocated returns how many bytes fn allocated on the heap.
func Allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// SparseMachO writes a copy of the thin 64-bit Mach-O file src whose
// LC_SYMTAB claims Claimed bytes of symbols (at Above) and of strings
// (before them), the file extended over them as holes.
func SparseMachO(t testing.TB, src string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	if len(b) < 32 || le.Uint32(b) != 0xfeedfacf {
		t.Fatalf("%s: not a thin 64-bit Mach-O file", src)
	}
	ncmds := le.Uint32(b[16:])
	off := uint32(32)
	for i := uint32(0); i < ncmds; i++ {
		cmd, size := le.Uint32(b[off:]), le.Uint32(b[off+4:])
		if cmd == 0x2 { // LC_SYMTAB: symoff, nsyms, stroff, strsize
			le.PutUint32(b[off+8:], Above)
			le.PutUint32(b[off+12:], Claimed/16)
			le.PutUint32(b[off+16:], Above-Claimed) // offsets are 32-bit
			le.PutUint32(b[off+20:], Claimed)
			out := filepath.Join(t.TempDir(), filepath.Base(src)+"-sparse")
			if err := os.WriteFile(out, b, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(out, Above+Claimed); err != nil {
				t.Fatal(err)
			}
			return out
		}
		off += size
	}
	t.Fatalf("%s: no LC_SYMTAB", src)
	return ""
}
