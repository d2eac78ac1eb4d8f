package symcache

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestELFFuncSymbolsAsDebugELF checks that elfFuncSymbols keeps exactly the
// function symbols debug/elf's Symbols and DynamicSymbols give, names
// included, on real objects: libc, the test binary (Go), node when present.
func TestELFFuncSymbolsAsDebugELF(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("sh", "-c", "ldconfig -p | awk '/libc.so.6 .*x86-64|libc.so.6 .*AArch64/{print $NF; exit}'").Output()
	libc := strings.TrimSpace(string(out))
	if err != nil || libc == "" {
		t.Fatal("cannot find libc.so.6 with ldconfig -p")
	}
	files := []string{exe, libc}
	if _, err := os.Stat("/usr/bin/node"); err == nil {
		files = append(files, "/usr/bin/node")
	}
	for _, path := range files {
		f, err := elf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, typ := range []elf.SectionType{elf.SHT_SYMTAB, elf.SHT_DYNSYM} {
			var ref []elf.Symbol
			if typ == elf.SHT_SYMTAB {
				ref, _ = f.Symbols()
			} else {
				ref, _ = f.DynamicSymbols()
			}
			var want []Symbol
			for _, s := range ref {
				if ty := elf.ST_TYPE(s.Info); (ty == elf.STT_FUNC || ty == elf.STT_GNU_IFUNC) && s.Value != 0 && s.Section != elf.SHN_UNDEF {
					want = append(want, Symbol{Name: TrimGoABI(s.Name), Start: s.Value, Size: s.Size})
				}
			}
			got, n, _, err := elfFuncSymbols(f, typ, nil)
			if err != nil {
				t.Fatalf("%s %v: %v", path, typ, err)
			}
			if n != len(ref) || !slices.Equal(got, want) {
				t.Errorf("%s %v: %d entries, %d functions; debug/elf: %d, %d", path, typ, n, len(got), len(ref), len(want))
			}
			t.Logf("%s %v: %d functions", path, typ, len(got))
		}
		f.Close()
	}
}

// TestELFFuncSymbolsLongNames reads a symbol table of 100,000 functions
// whose names all start in one 16 MiB unterminated run of a string table
// (debug/elf scans and copies the run once per symbol: 1.6 TB): the run is
// scanned once and the names share the table's copy.
func TestELFFuncSymbolsLongNames(t *testing.T) {
	const n = 100000
	strs := append(bytes.Repeat([]byte{'A'}, 16<<20), 0)
	syms := make([]byte, 24*(n+1))
	for i := 1; i <= n; i++ {
		e := syms[24*i:]
		binary.LittleEndian.PutUint32(e, uint32(i*8))
		e[4] = byte(elf.STT_FUNC)
		binary.LittleEndian.PutUint16(e[6:], 1)
		binary.LittleEndian.PutUint64(e[8:], uint64(0x1000+16*i))
	}
	f, err := elf.NewFile(bytes.NewReader(elfWithSymbols(syms, strs)))
	if err != nil {
		t.Fatal(err)
	}
	var got []Symbol
	start := time.Now()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, _, _, err = elfFuncSymbols(f, elf.SHT_SYMTAB, nil)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n || !strings.HasPrefix(got[n-1].Name, "AAAA") || len(got[0].Name) != 16<<20-8 {
		t.Fatalf("%d symbols, last %d bytes", len(got), len(got[n-1].Name))
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	if alloc > 48<<20 { // the 16 MiB table, its copy's growth, the symbols
		t.Errorf("allocated %d bytes for %d symbols and a 16 MiB string table", alloc, n)
	}
	t.Logf("%d symbols in %v, %d bytes allocated", n, time.Since(start), alloc)
}

// elfWithSymbols returns a 64-bit little-endian ELF file with sections
// .symtab (syms), .strtab (strs) and .shstrtab.
func elfWithSymbols(syms, strs []byte) []byte {
	le := binary.LittleEndian
	shstr := []byte("\x00.symtab\x00.strtab\x00.shstrtab\x00")
	b := make([]byte, 64)
	copy(b, "\x7fELF\x02\x01\x01")
	le.PutUint16(b[16:], uint16(elf.ET_EXEC))
	le.PutUint16(b[18:], uint16(elf.EM_X86_64))
	le.PutUint32(b[20:], 1)
	symOff := uint64(len(b))
	b = append(b, syms...)
	strOff := uint64(len(b))
	b = append(b, strs...)
	shstrOff := uint64(len(b))
	b = append(b, shstr...)
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	shoff := uint64(len(b))
	sh := func(name uint32, typ elf.SectionType, off, size uint64, link uint32, entsize uint64) {
		h := make([]byte, 64)
		le.PutUint32(h, name)
		le.PutUint32(h[4:], uint32(typ))
		le.PutUint64(h[24:], off)
		le.PutUint64(h[32:], size)
		le.PutUint32(h[40:], link)
		le.PutUint64(h[56:], entsize)
		b = append(b, h...)
	}
	sh(0, elf.SHT_NULL, 0, 0, 0, 0)
	sh(1, elf.SHT_SYMTAB, symOff, uint64(len(syms)), 2, 24)
	sh(9, elf.SHT_STRTAB, strOff, uint64(len(strs)), 0, 0)
	sh(17, elf.SHT_STRTAB, shstrOff, uint64(len(shstr)), 0, 0)
	le.PutUint64(b[40:], shoff)
	le.PutUint16(b[52:], 64)
	le.PutUint16(b[58:], 64)
	le.PutUint16(b[60:], 4)
	le.PutUint16(b[62:], 3)
	return b
}
