package cfi

import (
	"debug/elf"
	"encoding/binary"
	"path/filepath"
	"sync"
	"testing"

	"github.com/macprof/macprof/unwind"
)

// lazyObjects are the objects whose lazily indexed tables the tests
// compare with whole builds: the fixtures (one with .eh_frame only, one
// with .debug_frame too), the C library and python3 (gcc-built, thousands
// of FDEs).
func lazyObjects(t testing.TB) []string {
	libc, python := systemObjects(t)
	return []string{"testdata/eh_amd64", "testdata/eh_arm64", "testdata/debug_amd64", libc, python}
}

// wholeBuild builds path's table from every FDE at once, as Build does.
func wholeBuild(t testing.TB, path string) *Table {
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tab, err := fromELF(f, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if tab.Lazy() {
		t.Fatal("a whole build indexed lazily")
	}
	return tab
}

// TestLazyTableEqualsWholeBuild: Load indexes an object's .eh_frame through
// its .eh_frame_hdr and compiles FDEs on first use; every lookup at, around
// and in the middle of every row of the whole build (itself checked against
// llvm-objdump by TestOracleObjdump and TestOracleLibc) answers the same,
// and once every FDE is compiled the rows are the same. (These objects'
// FDEs do not overlap; where FDEs do, the two differ, see doc.go.)
func TestLazyTableEqualsWholeBuild(t *testing.T) {
	for _, path := range lazyObjects(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			lazy, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if !lazy.Lazy() {
				t.Fatalf("%s: not indexed through .eh_frame_hdr", path)
			}
			whole := wholeBuild(t, path)
			rows := whole.AllRows()
			if len(rows) < 2 {
				t.Fatalf("%d rows in the whole build", len(rows))
			}
			for i, r := range rows {
				mid := r.Off // and the middle of the row, gaps included
				if i+1 < len(rows) {
					mid += (rows[i+1].Off - r.Off) / 2
				}
				for _, off := range []uint64{r.Off - 1, r.Off, r.Off + 1, mid} {
					w, wok := whole.Lookup(off)
					l, lok := lazy.Lookup(off)
					if wok != lok || w != l {
						t.Fatalf("%#x: lazily %v (ok %v), whole %v (ok %v)", off, l, lok, w, wok)
					}
				}
			}
			if n := len(lazy.AllRows()); n != len(rows) {
				t.Errorf("%d rows once all is compiled, the whole build has %d", n, len(rows))
			}
			t.Logf("%d rows, %d lookups", len(rows), 4*len(rows))
		})
	}
}

// TestLazyTableCompilesWhatIsLookedUp: a lookup compiles the one FDE it
// lands in, a lookup in a compiled FDE does not allocate, and CompileAll
// leaves nothing for lookups to compile.
func TestLazyTableCompilesWhatIsLookedUp(t *testing.T) {
	path := lazyObjects(t)[3] // the C library
	lazy, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := lazy.Rows(); n != 0 {
		t.Fatalf("%d rows compiled before any lookup", n)
	}
	rows := wholeBuild(t, path).AllRows()
	var off uint64
	for _, r := range rows[len(rows)/2:] {
		if r.Rule.CFA != unwind.CFANone {
			off = r.Off
			break
		}
	}
	if _, ok := lazy.Lookup(off); !ok {
		t.Fatalf("%#x: no rule", off)
	}
	one := lazy.Rows()
	if one == 0 || one > 200 {
		t.Errorf("one lookup compiled %d rows, want those of one FDE", one)
	}
	if a := testing.AllocsPerRun(100, func() { lazy.Find(off) }); a != 0 {
		t.Errorf("a lookup in a compiled FDE allocates %v times", a)
	}
	if lazy.Rows() != one {
		t.Errorf("repeated lookups compiled more rows: %d, then %d", one, lazy.Rows())
	}
	// After CompileAll (what a snapshot's Warm does before it stops
	// threads) no lookup compiles anything.
	lazy.CompileAll()
	all := lazy.Rows()
	if all <= one {
		t.Fatalf("CompileAll: %d rows, one FDE had %d", all, one)
	}
	for _, r := range rows {
		lazy.Find(r.Off)
	}
	if lazy.Rows() != all {
		t.Errorf("lookups after CompileAll compiled more rows: %d, then %d", all, lazy.Rows())
	}
}

// TestLazyTableConcurrentLookups: goroutines looking up the same object's
// addresses at once, compiling FDEs as they go, all get the whole build's
// answers (run with -race in CI).
func TestLazyTableConcurrentLookups(t *testing.T) {
	path := lazyObjects(t)[4] // python3
	lazy, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	rows := wholeBuild(t, path).AllRows()
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for g := range 4 {
		wg.Go(func() {
			for i := g; i < len(rows); i += 7 {
				r := rows[i]
				l, ok := lazy.Lookup(r.Off)
				if ok != (r.Rule.CFA != unwind.CFANone) || ok && l != r.Rule {
					errs <- filepath.Base(path) + ": a concurrent lookup disagrees with the whole build"
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestLazyIndexRefusesOtherHeaders: a header of another layout, one whose
// table runs past its end or claims more FDEs than .eh_frame can hold, or
// one out of order is not searched (the object is built whole).
func TestLazyIndexRefusesOtherHeaders(t *testing.T) {
	eh := Section{Data: ehFrame(0x2000, 0x1000, 0x40, amd64CIEInit, nil), Addr: 0x2000, EH: true}
	segs := []Segment{{Vaddr: 0, Size: 0x10000, Off: 0}}
	hdr := func(enc byte, count uint32, entries ...int32) []byte {
		b := []byte{1, pePCRel | peS4, peU4, enc}
		b = binary.LittleEndian.AppendUint32(b, 0)
		b = binary.LittleEndian.AppendUint32(b, count)
		for _, e := range entries {
			b = binary.LittleEndian.AppendUint32(b, uint32(e))
		}
		return b
	}
	// Relative to the header at 0x1800: the FDE's start and its record.
	good := hdr(hdrTableEnc, 1, 0x1000-0x1800, 0x2000+0x18-0x1800)
	x := newIndex(unwind.ArchAMD64, eh, good, 0x1800, segs)
	if x == nil {
		t.Fatal("a well-formed header refused")
	}
	if r, ok := x.find(0x1010); !ok || r == nil || r.String() != "CFA=SP+8 FP=same RA=[CFA-8]" {
		t.Errorf("0x1010: %v %v", r, ok)
	}
	if _, ok := x.find(0x1040); ok {
		t.Error("0x1040, past the FDE: covered")
	}
	for name, h := range map[string][]byte{
		"other table encoding": hdr(peAbs|peU8, 1, 0, 0),
		"other version":        append([]byte{2}, good[1:]...),
		"count past the table": hdr(hdrTableEnc, 2, 0, 0),
		"count past .eh_frame": hdr(hdrTableEnc, 1000, make([]int32, 2000)...),
		"out of order":         hdr(hdrTableEnc, 2, 0x100, 0, 0x80, 0),
		"truncated":            good[:6],
	} {
		if newIndex(unwind.ArchAMD64, eh, h, 0x1800, segs) != nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestLazyIndexCraftedEntries: header entries that all name one FDE with a
// long program compile it once, entries whose location is not their FDE's
// are not used, and however the entries are crafted the rows compiled stay
// within twice the section's bytes.
func TestLazyIndexCraftedEntries(t *testing.T) {
	var prog []byte
	for range 1000 {
		prog = append(prog, cfaDefCFAOffset, 16, cfaAdvanceLoc|1, cfaDefCFAOffset, 8, cfaAdvanceLoc|1)
	}
	const ehAddr, hdrAddr, start = 0x20000, 0x1f000, 0x1000
	eh := Section{Data: ehFrame(ehAddr, start, 0x4000, amd64CIEInit, prog), Addr: ehAddr, EH: true}
	segs := []Segment{{Vaddr: 0, Size: 0x10000, Off: 0}}
	fde := int32(ehAddr + 0x18 - hdrAddr)
	n := len(eh.Data) / 16
	hdr := []byte{1, pePCRel | peS4, peU4, hdrTableEnc}
	hdr = binary.LittleEndian.AppendUint32(hdr, 0)
	hdr = binary.LittleEndian.AppendUint32(hdr, uint32(n))
	loc := int32(start - hdrAddr)
	for range n {
		hdr = binary.LittleEndian.AppendUint32(hdr, uint32(loc))
		hdr = binary.LittleEndian.AppendUint32(hdr, uint32(fde))
	}
	x := newIndex(unwind.ArchAMD64, eh, hdr, hdrAddr, segs)
	if x == nil {
		t.Fatal("refused")
	}
	x.compileAll()
	one := x.rows.Load()
	if one < 2000 || one > int64(len(prog)) {
		t.Fatalf("%d entries naming one FDE of 2000 rows compiled %d rows", n, one)
	}
	if r, ok := x.find(start + 1); !ok || r == nil || r.CFAOff != 8 {
		t.Errorf("inside the FDE: %v %v", r, ok)
	}
	// The same entries at other locations: none of them is the FDE's.
	for i := range n {
		binary.LittleEndian.PutUint32(hdr[12+8*i:], uint32(loc+int32(0x10*i+0x10)))
	}
	x = newIndex(unwind.ArchAMD64, eh, hdr, hdrAddr, segs)
	x.compileAll()
	if got := x.rows.Load(); got != 0 {
		t.Errorf("entries whose location is not their FDE's compiled %d rows", got)
	}
	if x.bytes() > 2*len(eh.Data)+len(x.table)+8*n+64 {
		t.Errorf("%d bytes for a %d-byte section", x.bytes(), len(eh.Data))
	}
}
