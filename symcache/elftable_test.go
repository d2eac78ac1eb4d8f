package symcache

import (
	"bytes"
	"cmp"
	"debug/elf"
	"encoding/binary"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/objfile"
)

// testSym is a symbol for tinyELF: its name offset is where name lands
// in .strtab, unless nameOff is set.
type testSym struct {
	name        string
	nameOff     uint32 // used when not 0
	value, size uint64
	typ         elf.SymType
}

// tinyELF returns an x86-64 ELF file with a .text at 0x1000 (0x1000
// bytes), .symtab holding syms and .dynsym holding dyn (when not nil),
// and, in .strtab, the names followed by tail (no NUL added after it).
func tinyELF(syms, dyn []testSym, tail string) []byte {
	le := binary.LittleEndian
	strtab := []byte{0}
	symtab := func(ss []testSym) []byte {
		b := make([]byte, 24) // the null entry
		for _, s := range ss {
			off := uint32(len(strtab))
			if s.nameOff != 0 {
				off = s.nameOff
			} else {
				strtab = append(append(strtab, s.name...), 0)
			}
			var e [24]byte
			le.PutUint32(e[0:], off)
			e[4] = byte(elf.STB_GLOBAL)<<4 | byte(s.typ)
			le.PutUint16(e[6:], 1) // .text
			le.PutUint64(e[8:], s.value)
			le.PutUint64(e[16:], s.size)
			b = append(b, e[:]...)
		}
		return b
	}
	st := symtab(syms)
	var ds []byte
	if dyn != nil {
		ds = symtab(dyn)
	}
	strtab = append(strtab, tail...)
	shstr := []byte("\x00.text\x00.symtab\x00.strtab\x00.shstrtab\x00.dynsym\x00")
	// Layout: header, text, symtab, dynsym, strtab, shstrtab, section headers.
	var body bytes.Buffer
	body.Write(make([]byte, 64))
	textOff := body.Len()
	body.Write(make([]byte, 0x1000))
	symOff := body.Len()
	body.Write(st)
	dynOff := body.Len()
	body.Write(ds)
	strOff := body.Len()
	body.Write(strtab)
	shstrOff := body.Len()
	body.Write(shstr)
	for body.Len()%8 != 0 {
		body.WriteByte(0)
	}
	shOff := body.Len()
	sh := func(name uint32, typ elf.SectionType, flags elf.SectionFlag, addr, off, size uint64, link uint32, entsize uint64) {
		var h [64]byte
		le.PutUint32(h[0:], name)
		le.PutUint32(h[4:], uint32(typ))
		le.PutUint64(h[8:], uint64(flags))
		le.PutUint64(h[16:], addr)
		le.PutUint64(h[24:], off)
		le.PutUint64(h[32:], size)
		le.PutUint32(h[40:], link)
		le.PutUint64(h[56:], entsize)
		body.Write(h[:])
	}
	sh(0, elf.SHT_NULL, 0, 0, 0, 0, 0, 0)
	sh(1, elf.SHT_PROGBITS, elf.SHF_ALLOC|elf.SHF_EXECINSTR, 0x1000, uint64(textOff), 0x1000, 0, 0)
	sh(7, elf.SHT_SYMTAB, 0, 0, uint64(symOff), uint64(len(st)), 3, 24)
	sh(15, elf.SHT_STRTAB, 0, 0, uint64(strOff), uint64(len(strtab)), 0, 0)
	sh(23, elf.SHT_STRTAB, 0, 0, uint64(shstrOff), uint64(len(shstr)), 0, 0)
	n := 5
	if dyn != nil {
		sh(33, elf.SHT_DYNSYM, elf.SHF_ALLOC, 0, uint64(dynOff), uint64(len(ds)), 3, 24)
		n++
	}
	b := body.Bytes()
	copy(b, "\x7fELF\x02\x01\x01")
	le.PutUint16(b[16:], uint16(elf.ET_DYN))
	le.PutUint16(b[18:], uint16(elf.EM_X86_64))
	le.PutUint32(b[20:], 1)
	le.PutUint64(b[40:], uint64(shOff))
	le.PutUint16(b[52:], 64)
	le.PutUint16(b[58:], 64)
	le.PutUint16(b[60:], uint16(n))
	le.PutUint16(b[62:], 4)
	return b
}

// mapTestELF writes data to a file and maps it (objfile.MapELF); the file
// is closed at the test's end, the mapping by the caller.
func mapTestELF(t *testing.T, data []byte) (*elf.File, *objfile.Mapping) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "obj")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { file.Close() })
	ef, m, err := objfile.MapELF(file, maxELFRead)
	if err != nil || m == nil {
		t.Fatalf("MapELF: %v (mapping %v), but the bytes were read", err, m != nil)
	}
	return ef, m
}

// mappedTable builds the Table of the ELF bytes data through
// elfTableMapped, from a mapping of them as a file, and calls check with
// it before the mapping is closed.
func mappedTable(t *testing.T, data []byte, check func(*Table)) {
	t.Helper()
	ef, m := mapTestELF(t, data)
	defer m.Close()
	tab, _, err := elfTableMapped("obj", ef, m)
	if err != nil {
		t.Fatalf("elfTableMapped: %v", err)
	}
	check(tab)
}

// sameTable reports the first difference between got and want, function
// by function (start, end, name), or "".
func sameTable(t *testing.T, got, want *Table) {
	t.Helper()
	if got.Len() != want.Len() || (got.ends == nil) != (want.ends == nil) {
		t.Fatalf("%d functions (sized %v), want %d (sized %v)", got.Len(), got.ends != nil, want.Len(), want.ends != nil)
	}
	for i := range got.Len() {
		gn, gs := got.Symbol(i)
		wn, ws := want.Symbol(i)
		if gn != wn || gs != ws || (got.ends != nil && got.ends[i] != want.ends[i]) {
			t.Fatalf("function %d: %q at %#x, want %q at %#x", i, gn, gs, wn, ws)
		}
	}
}

// TestMappedTableAsNewTable checks that the mapped table (names left in
// the file, only ties ranked) keeps, among symbols at one start, the one
// NewTable keeps: named over unnamed (an empty name or one past the
// string table, or one no NUL ends, is none), sized over unsized, the
// shortest name (after dropping .abi0 or .abiinternal), then the first;
// where the named ones have one size, as Table.name chooses.
func TestMappedTableAsNewTable(t *testing.T) {
	f := elf.STT_FUNC
	syms := []testSym{
		{name: "longer", value: 0x1000, size: 16, typ: f},
		{name: "short", value: 0x1000, size: 16, typ: f},
		{name: "unsized", value: 0x1000, typ: f},
		{name: "abcdef.abi0", value: 0x1100, size: 8, typ: f}, // 6 after the suffix goes
		{name: "abcdefg", value: 0x1100, size: 8, typ: f},
		{name: "", value: 0x1200, size: 32, typ: f},
		{name: "unsizedname", value: 0x1200, typ: f},
		{nameOff: 1 << 20, value: 0x1300, size: 4, typ: f}, // past .strtab
		{name: "data", value: 0x1300, size: 4, typ: elf.STT_OBJECT},
		{name: "same1", value: 0x1400, size: 4, typ: f},
		{name: "same2", value: 0x1400, size: 4, typ: f},
		{name: "long", value: 0x1500, size: 4, typ: f},
		{name: "ifunc", value: 0x1600, typ: elf.STT_GNU_IFUNC},
		{name: "", value: 0x1900, size: 8, typ: f},
		{name: "zz", value: 0x1900, size: 8, typ: f},
		{name: "", value: 0x1a00, size: 8, typ: f},
		{name: "", value: 0x1a00, size: 8, typ: f},
		{name: "tie.abiinternal", value: 0x1b00, size: 8, typ: f}, // 3 after the suffix goes
		{name: "tie2", value: 0x1b00, size: 8, typ: f},
		// Past the first window Table.name reads names in: the
		// shortest by its raw length is found first.
		{name: strings.Repeat("b", firstTieWindow-4), value: 0x1c00, size: 8, typ: f},
		{name: strings.Repeat("a", firstTieWindow-9) + ".abiinternal", value: 0x1c00, size: 8, typ: f},
	}
	dyn := []testSym{
		{name: "short", value: 0x1000, size: 16, typ: f},
		{name: "dynonly", value: 0x1700, size: 4, typ: f},
		{name: "x", value: 0x1500, size: 4, typ: f},
	}
	// A name that runs into the unterminated tail has none: its
	// offset is known once the string table is laid out.
	syms = append(syms, testSym{nameOff: 1, value: 0x1800, size: 4, typ: f}, testSym{name: "lastreal", value: 0x1800, typ: f})
	ef, err := elf.NewFile(bytes.NewReader(tinyELF(syms, dyn, "unterminated")))
	if err != nil {
		t.Fatal(err)
	}
	syms[len(syms)-2].nameOff = uint32(ef.Section(".strtab").Size) - uint32(len("unterminated"))
	data := tinyELF(syms, dyn, "unterminated")
	if ef, err = elf.NewFile(bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	want, err := ELFTable("obj", ef)
	if err != nil {
		t.Fatal(err)
	}
	wantNames := map[uint64]string{0x1000: "short", 0x1100: "abcdef", 0x1200: "unsizedname", 0x1300: "", 0x1400: "same1", 0x1500: "x", 0x1600: "ifunc", 0x1700: "dynonly", 0x1800: "lastreal", 0x1900: "zz", 0x1a00: "", 0x1b00: "tie", 0x1c00: strings.Repeat("a", firstTieWindow-9)}
	mappedTable(t, data, func(got *Table) {
		sameTable(t, got, want)
		for a, w := range wantNames {
			if n, s, ok := got.Lookup(a); n != w || s != a || !ok {
				t.Errorf("%#x: %q at %#x (%v), want %q", a, n, s, ok, w)
			}
		}
	})
}

// TestLoadELFMappedStrippedStarts checks that a file without .symtab gets
// .eh_frame's starts in its mapped table as in LoadELF's, on a real
// stripped object.
func TestLoadELFMappedStrippedStarts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "inl-stripped")
	if out, err := exec.Command(tool(t, "strip", "llvm-strip"), "--strip-all", "-o", path, buildInlineC(t, "-fno-inline")).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v\n%s", err, out)
	}
	img := &images.Image{Path: path, Format: images.FormatELF, Start: 0, Limit: 1 << 40}
	full, err := LoadELF(img)
	if err != nil {
		t.Fatal(err)
	}
	defer objfile.RecoverFault(&err, objfile.PanicOnFault())
	mapped, unmap, err := LoadELFMapped(img)
	if err != nil {
		t.Fatal(err)
	}
	defer unmap()
	if mapped.refs == nil {
		t.Fatal("LoadELFMapped did not read the names in place")
	}
	sameTable(t, mapped, full)
	anonymous := 0
	for i := range mapped.Len() {
		if n, _ := mapped.Symbol(i); n == "" {
			anonymous++
		}
	}
	if anonymous == 0 {
		t.Errorf("no unnamed .eh_frame start among %d functions", mapped.Len())
	}
}

// TestMappedTableOfAFileRewritten: a table whose names are read in place
// answers every lookup, without a panic or an endless search, after its
// file's string tables were overwritten with bytes that hold no NUL (the
// mapping sees writes to the file: a library's owner can rewrite it under
// a symbolize run as root); the names are then what the file holds.
func TestMappedTableOfAFileRewritten(t *testing.T) {
	f := elf.STT_FUNC
	syms := []testSym{
		{name: "plain", value: 0x1000, size: 16, typ: f},
		{name: "same1", value: 0x1400, size: 4, typ: f}, // a tie, named at lookup
		{name: "same2", value: 0x1400, size: 4, typ: f},
	}
	data := tinyELF(syms, []testSym{{name: "plain", value: 0x1000, size: 16, typ: f}}, "")
	path := filepath.Join(t.TempDir(), "obj")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	img := &images.Image{Path: path, Format: images.FormatELF, Start: 0, Limit: 1 << 40}
	tab, unmap, err := LoadELFMapped(img)
	if err != nil {
		t.Fatal(err)
	}
	defer unmap()
	if tab.refs == nil {
		t.Fatal("LoadELFMapped did not read the names in place")
	}
	ef, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ef.Sections {
		if s.Type == elf.SHT_STRTAB {
			if _, err := w.WriteAt(bytes.Repeat([]byte("A"), int(s.Size)), int64(s.Offset)); err != nil {
				t.Fatal(err)
			}
		}
	}
	w.Close()
	done := make(chan string)
	go func() {
		var names []string
		for _, a := range []uint64{0x1000, 0x1400} {
			n, _, _ := tab.Lookup(a)
			names = append(names, n)
		}
		for i := range tab.Len() {
			n, _ := tab.Symbol(i)
			names = append(names, n)
		}
		done <- strings.Join(names, " ")
	}()
	select {
	case got := <-done:
		if strings.Trim(got, "A ") != "" {
			t.Errorf("names after the rewrite: %q, want runs of A", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a lookup after the rewrite still runs after 10 s")
	}
}

// TestSymColsSort checks symCols.sort against a stable sort by start
// (symbols at one start in index order), with starts that share a word
// with the index and starts too far apart to.
func TestSymColsSort(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, n := range []int{0, 1, 5, 3000} {
		for _, spread := range []uint64{1 << 8, 1 << 40, 1 << 63, 1<<64 - 1} {
			c := symCols{starts: make([]uint64, 0, 2*n)}
			for i := range n {
				a := 1<<63 - spread/2 + rng.Uint64()%spread
				if i > 0 && rng.Intn(4) == 0 {
					a = c.starts[rng.Intn(i)]
				}
				c.add(a, uint64(i)<<33, uint32(i))
			}
			want := make([]int, n)
			for i := range want {
				want[i] = i
			}
			starts := slices.Clone(c.starts)
			slices.SortStableFunc(want, func(a, b int) int { return cmp.Compare(starts[a], starts[b]) })
			c.sort()
			for k, i := range want {
				if c.starts[k] != starts[i] || c.sizes[k] != uint64(i)<<33 || c.refs[k] != uint32(i) {
					t.Fatalf("%d symbols, spread %#x: symbol %d is %d at %#x, want %d at %#x", n, spread, k, c.refs[k], c.starts[k], i, starts[i])
				}
			}
		}
	}
}

// TestFromColsAnonymousStarts checks that anonymous starts (.eh_frame's)
// merged with the symbols come once each, in order even when given out
// of it, and give way to any symbol at their start.
func TestFromColsAnonymousStarts(t *testing.T) {
	c := symCols{starts: make([]uint64, 0, 6)}
	c.add(0x300, 8, 1)
	c.add(0x100, 2, noName)
	c.add(0x200, 4, 6)
	anon := []uint64{0x250, 0x100, 0x50, 0x300, 0x250, 0x400}
	var tab Table
	tab.strs[0] = "\x00abcd\x00wxyz\x00"
	tab.fromCols(&c, anon)
	wantStarts := []uint64{0x50, 0x100, 0x200, 0x250, 0x300, 0x400}
	wantEnds := []uint64{0, 0x102, 0x204, 0, 0x308, 0}
	wantNames := []string{"", "", "wxyz", "", "abcd", ""}
	if !slices.Equal(tab.starts, wantStarts) || !slices.Equal(tab.ends, wantEnds) {
		t.Fatalf("starts %#x, ends %#x; want %#x, %#x", tab.starts, tab.ends, wantStarts, wantEnds)
	}
	for i, w := range wantNames {
		if n, _ := tab.Symbol(i); n != w {
			t.Errorf("function %d at %#x: %q, want %q", i, tab.starts[i], n, w)
		}
	}
}

// TestRadixSort64 checks radixSort64 against a comparison sort, on values
// of a few to 64 bits, with and without digits shared by every value.
func TestRadixSort64(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for _, bits := range []uint{1, 8, 11, 12, 22, 33, 63, 64} {
		for _, n := range []int{0, 1, 2, 1000} {
			v := make([]uint64, n)
			for i := range v {
				v[i] = rng.Uint64() >> (64 - bits)
				if bits > 40 {
					v[i] = v[i]&^(0x7ff<<22) | 0x5<<22 // a digit the same in every value
				}
			}
			want := slices.Clone(v)
			slices.Sort(want)
			if got := radixSort64(v, make([]uint64, n), 0); !slices.Equal(got, want) {
				t.Fatalf("%d values of %d bits: not sorted", n, bits)
			}
		}
	}
}

// TestRadixSort64From checks radixSort64 from a bit above 0: values
// whose low bits are their index (as symCols.sort packs them; below bit
// 13 the index wraps) come out in order of the bits above, each run of
// equal ones in the order they came, as a stable comparison sort by
// those bits gives them; the bits below are not sorted by.
func TestRadixSort64From(t *testing.T) {
	rng := rand.New(rand.NewSource(6))
	for _, from := range []uint{1, 10, 11, 17, 18, 40} {
		for _, n := range []int{0, 1, 2, 1000, 5000} {
			v := make([]uint64, n)
			for i := range v {
				// Few distinct keys above, so that runs of equal
				// ones hold many indexes.
				v[i] = uint64(rng.Intn(50))<<from | uint64(i)&(1<<from-1)
			}
			want := slices.Clone(v)
			slices.SortStableFunc(want, func(a, b uint64) int { return cmp.Compare(a>>from, b>>from) })
			if got := radixSort64(slices.Clone(v), make([]uint64, n), from); !slices.Equal(got, want) {
				t.Fatalf("%d values from bit %d: not in order of the bits above, index order kept", n, from)
			}
		}
	}
	// The bits below from are left as they came.
	v := []uint64{1<<8 | 3, 1<<8 | 1, 0<<8 | 2}
	if got := radixSort64(v, make([]uint64, 3), 8); !slices.Equal(got, []uint64{2, 1<<8 | 3, 1<<8 | 1}) {
		t.Fatalf("from bit 8: %#x, want the low bits' order kept", got)
	}
}

// TestFromColsAsNewTableWithStarts: a table built by fromCols from
// columns and anonymous starts (runs of them between symbols, repeats,
// symbols at them, unsized symbols or some sized) has the starts, ends
// and names of NewTableWithStarts' of the same symbols; with no symbol
// sized it makes no ends.
func TestFromColsAsNewTableWithStarts(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	const strs = "\x00f\x00gg\x00hhh\x00"
	names := map[uint32]string{1: "f", 3: "gg", 6: "hhh"}
	for round := range 200 {
		nsym, nanon := rng.Intn(20), rng.Intn(40)
		c := symCols{starts: make([]uint64, 0, 2*nsym)}
		var syms []Symbol
		for range nsym {
			start, size := uint64(rng.Intn(64)), uint64(0)
			if round%2 == 0 && rng.Intn(3) == 0 {
				size = uint64(1 + rng.Intn(8))
			}
			ref := []uint32{noName, 1, 3, 6}[rng.Intn(4)]
			c.add(start, size, ref)
			syms = append(syms, Symbol{Name: names[ref], Start: start, Size: size})
		}
		anon := make([]uint64, nanon)
		for i := range anon {
			anon[i] = uint64(rng.Intn(64))
		}
		if rng.Intn(2) == 0 {
			slices.Sort(anon)
			anon = slices.Compact(anon)
		}
		want := NewTableWithStarts("x", syms, slices.Clone(anon), nil, nil)
		got := &Table{Object: "x"}
		got.strs[0] = strs
		got.fromCols(&c, anon)
		if !slices.Equal(got.starts, want.starts) || !slices.Equal(got.ends, want.ends) || !slices.Equal(tableNames(got), tableNames(want)) {
			t.Fatalf("round %d: fromCols %#x %#x %q\nNewTableWithStarts %#x %#x %q", round, got.starts, got.ends, tableNames(got), want.starts, want.ends, tableNames(want))
		}
		if round%2 == 1 && got.ends != nil {
			t.Fatalf("round %d: no symbol sized, ends %#x", round, got.ends)
		}
	}
}
