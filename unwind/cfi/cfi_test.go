package cfi

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/macprof/macprof/unwind"
)

// ehFrame builds an .eh_frame at addr holding one CIE with init and one
// FDE for [start, start+size) with program prog.
func ehFrame(addr, start, size uint64, init, prog []byte) []byte {
	return ehFrameAug("zR", addr, start, size, init, prog)
}

// ehFrameAug is ehFrame with a CIE of augmentation aug ("zR" followed by
// letters without data, as "S").
func ehFrameAug(aug string, addr, start, size uint64, init, prog []byte) []byte {
	cieBody := append([]byte{0, 0, 0, 0, 1}, aug...)
	cieBody = append(cieBody, 0, 1, 0x78, 16, 1, 0x1b)
	cieBody = append(cieBody, init...)
	for (len(cieBody)+4)%8 != 0 {
		cieBody = append(cieBody, 0)
	}
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(cieBody)))
	b = append(b, cieBody...)
	fdePos := len(b)
	fde := binary.LittleEndian.AppendUint32(nil, uint32(fdePos+4)) // CIE pointer: back to 0
	pcAt := addr + uint64(fdePos) + 8
	fde = binary.LittleEndian.AppendUint32(fde, uint32(int32(start-pcAt)))
	fde = binary.LittleEndian.AppendUint32(fde, uint32(size))
	fde = append(fde, 0) // no augmentation data
	fde = append(fde, prog...)
	for (len(fde)+4)%8 != 0 {
		fde = append(fde, 0)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(fde)))
	b = append(b, fde...)
	return binary.LittleEndian.AppendUint32(b, 0)
}

// sigProg is glibc's __restore_rt FDE program, cut to the registers a
// rule keeps: CFA = *(rsp+160), rbp at rsp+120, the return address at
// rsp+168.
var sigProg = []byte{
	cfaDefCFAExpression, 4, opBreg0 + 7, 0xa0, 0x01, opDeref,
	cfaExpression, 6, 3, opBreg0 + 7, 0xf8, 0x00,
	cfaExpression, 16, 3, opBreg0 + 7, 0xa8, 0x01,
}

// TestSignalFrameRule: a signal frame's FDE (CIE augmentation "S") gives
// a rule with its CFA read at SP+160, FP and the return address at SP plus
// their offsets, marked Signal; without "S" the same program is not
// marked, and a register expression of another shape stays unsupported.
func TestSignalFrameRule(t *testing.T) {
	for _, tc := range []struct {
		aug  string
		prog []byte
		want string
	}{
		{"zRS", sigProg, "CFA=[SP+160]+0 FP=[SP+120] RA=[SP+168] signal"},
		{"zR", sigProg, "CFA=[SP+160]+0 FP=[SP+120] RA=[SP+168]"},
		// DW_OP_breg6 (rbp), and breg7 with a deref: not modelled.
		{"zRS", append(slices.Clone(sigProg[:12]), cfaExpression, 16, 2, opBreg0+6, 0x08), "CFA=[SP+160]+0 FP=[SP+120] RA=? signal"},
		{"zRS", append(slices.Clone(sigProg[:12]), cfaExpression, 16, 3, opBreg0+7, 0x08, opDeref), "CFA=[SP+160]+0 FP=[SP+120] RA=? signal"},
	} {
		tab := Build(unwind.ArchAMD64, []Section{{Data: ehFrameAug(tc.aug, 0x1000, 0x2000, 16, amd64CIEInit, tc.prog), Addr: 0x1000, EH: true}}, []Segment{{Vaddr: 0, Size: 0x10000, Off: 0}})
		if got, ok := tab.Lookup(0x2004); !ok || got.String() != tc.want {
			t.Errorf("%s % x: %v (%v), want %s", tc.aug, tc.prog, got, ok, tc.want)
		}
	}
}

// amd64CIEInit is the usual CIE program: CFA = rsp+8, return address at
// CFA-8.
var amd64CIEInit = []byte{cfaDefCFA, 7, 8, cfaOffset | 16, 1}

// TestRestoreStateRestoresCFA checks the epilogue pattern GCC emits
// (remember_state; def_cfa_offset 8; ret; restore_state), which needs the
// CFA restored with the registers, as libgcc and libunwind do (llvm-objdump
// 14 does not, so it cannot be the oracle here).
func TestRestoreStateRestoresCFA(t *testing.T) {
	const addr, start = 0x1000, 0x2000
	prog := []byte{
		cfaAdvanceLoc | 1, cfaDefCFAOffset, 16, cfaOffset | 6, 2, // push rbp
		cfaAdvanceLoc | 4, cfaDefCFAOffset, 64,
		cfaAdvanceLoc | 8, cfaRememberState, cfaDefCFAOffset, 8, cfaRestore | 6,
		cfaAdvanceLoc | 1, cfaRestoreState,
	}
	tab := Build(unwind.ArchAMD64, []Section{{Data: ehFrame(addr, start, 32, amd64CIEInit, prog), Addr: addr, EH: true}},
		[]Segment{{Vaddr: 0, Size: 1 << 20, Off: 0}})
	for _, c := range []struct {
		off  uint64
		want string
	}{
		{start, "CFA=SP+8 FP=same RA=[CFA-8]"},
		{start + 1, "CFA=SP+16 FP=[CFA-16] RA=[CFA-8]"},
		{start + 5, "CFA=SP+64 FP=[CFA-16] RA=[CFA-8]"},
		{start + 13, "CFA=SP+8 FP=same RA=[CFA-8]"},
		{start + 14, "CFA=SP+64 FP=[CFA-16] RA=[CFA-8]"},
		{start + 31, "CFA=SP+64 FP=[CFA-16] RA=[CFA-8]"},
	} {
		if r, ok := tab.Lookup(c.off); !ok || r.String() != c.want {
			t.Errorf("%#x: %v (ok %v), want %s", c.off, r, ok, c.want)
		}
	}
	for _, off := range []uint64{start - 1, start + 32, 0, 1 << 40} {
		if r, ok := tab.Lookup(off); ok {
			t.Errorf("%#x: %v, want no rule", off, r)
		}
	}
}

// TestUnsupportedRules checks that expressions and other registers are
// marked unsupported, and an undefined return address (the outermost
// frame) as such.
func TestUnsupportedRules(t *testing.T) {
	const addr, start = 0x1000, 0x2000
	prog := []byte{
		cfaAdvanceLoc | 1, cfaDefCFAExpression, 2, 0x77, 8, // DW_OP_breg7 8
		cfaAdvanceLoc | 1, cfaDefCFA, 3, 16, // rbx+16
		cfaAdvanceLoc | 1, cfaDefCFA, 7, 8, cfaUndefined, 16,
		cfaAdvanceLoc | 1, cfaOffset | 16, 1, cfaRegister, 6, 3,
		cfaAdvanceLoc | 1, cfaDefCFAExpression, 5, opBreg0 + 7, 0x28, opDeref, opPlusUconst, 8, // [rsp+40]+8
		cfaAdvanceLoc | 1, cfaDefCFAOffset, 16, // not valid after an expression
	}
	tab := Build(unwind.ArchAMD64, []Section{{Data: ehFrame(addr, start, 16, amd64CIEInit, prog), Addr: addr, EH: true}},
		[]Segment{{Vaddr: 0, Size: 1 << 20, Off: 0}})
	for off, want := range map[uint64]string{
		start + 1: "CFA=? FP=same RA=[CFA-8]",
		start + 2: "CFA=? FP=same RA=[CFA-8]",
		start + 3: "CFA=SP+8 FP=same RA=undefined",
		start + 4: "CFA=SP+8 FP=? RA=[CFA-8]",
		start + 5: "CFA=[SP+40]+8 FP=? RA=[CFA-8]",
		start + 6: "CFA=? FP=? RA=[CFA-8]",
	} {
		if r, ok := tab.Lookup(off); !ok || r.String() != want {
			t.Errorf("%#x: %v (ok %v), want %s", off, r, ok, want)
		}
	}
}

// TestOracleLibc compares the system C library's table with llvm-objdump
// (FDEs with restore_state excepted, see oracleFDE): gcc-built, with
// thousands of functions.
func TestOracleLibc(t *testing.T) {
	path, arch := "/lib/x86_64-linux-gnu/libc.so.6", unwind.ArchAMD64
	if runtime.GOARCH == "arm64" {
		path, arch = "/lib/aarch64-linux-gnu/libc.so.6", unwind.ArchARM64
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the C library is not at %s: %v", path, err)
	}
	checkObjdump(t, path, arch, 1000)
}

// TestGoBinaryKeepsFramePointers checks that a Go binary gets the table
// that says to follow frame pointers, with its .debug_frame's rows for
// LeafRule where it has one (a Go program built by the test: a leaf's CFA
// is SP+8 at every address), and without rows where it has none (-w).
func TestGoBinaryKeepsFramePointers(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build ../testdata/goleaf: %v", err)
	}
	for _, flags := range []string{"", "-w"} {
		bin := filepath.Join(t.TempDir(), "goleaf")
		build := exec.Command(goTool, "build", "-ldflags="+flags, "-o", bin, ".")
		build.Dir = filepath.Join("..", "testdata", "goleaf")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build ../testdata/goleaf: %v\n%s", err, out)
		}
		tab, err := Load(bin)
		if err != nil {
			t.Fatal(err)
		}
		if !tab.FramePointers() || (tab.Rows() == 0) != (flags == "-w") {
			t.Errorf("-ldflags=%q: frame pointers %v, %d rows; want true, rows only with DWARF", flags, tab.FramePointers(), tab.Rows())
		}
		if flags != "" {
			continue
		}
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		syms, _ := f.Symbols()
		text := f.Section(".text")
		f.Close()
		for _, s := range syms {
			if s.Name != "main.spin" {
				continue
			}
			for pc := s.Value; pc < s.Value+s.Size; pc++ {
				if r, ok := tab.Lookup(pc - text.Addr + text.Offset); !ok || r.String() != "CFA=SP+8 FP=same RA=[CFA-8]" {
					t.Fatalf("main.spin+%#x: %v, want the leaf's CFA=SP+8 FP=same RA=[CFA-8]", pc-s.Value, r)
				}
			}
			return
		}
		t.Fatal("no main.spin in ../testdata/goleaf")
	}
}

// TestLoadRefusesOtherObjects checks the errors for what is not a 64-bit
// amd64 or arm64 ELF file.
func TestLoadRefusesOtherObjects(t *testing.T) {
	if _, err := Load("cfi_test.go"); err == nil {
		t.Error("a Go source file loaded as ELF")
	}
	f := &elf.File{FileHeader: elf.FileHeader{Machine: elf.EM_RISCV, Class: elf.ELFCLASS64, Data: elf.ELFDATA2LSB}}
	if _, err := FromELF(f); err == nil {
		t.Error("a RISC-V object accepted")
	}
}

// BenchmarkLoad loads the tables of the system C library and of python3
// (Debian's links libpython statically), as a walk's first sample in them
// does, and then compiles every FDE, as lookups in all of their code would.
func BenchmarkLoad(b *testing.B) {
	libc, python := systemObjects(b)
	for _, path := range []string{libc, python} {
		b.Run(filepath.Base(path), func(b *testing.B) {
			var tab *Table
			var err error
			b.ReportAllocs()
			for b.Loop() {
				if tab, err = Load(path); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(tab.Bytes()), "table-bytes")
		})
		// What a lazily indexed table's lookups add: compiling each FDE
		// on first use, here all of them.
		b.Run(filepath.Base(path)+"/compile-each-FDE", func(b *testing.B) {
			fdes := 0
			b.ReportAllocs()
			for b.Loop() {
				tab, err := Load(path)
				if err != nil || !tab.Lazy() {
					b.Fatalf("%v, lazy %v", err, tab != nil && tab.Lazy())
				}
				fdes = len(tab.lazy.spans())
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(fdes), "ns/FDE")
			b.ReportMetric(float64(fdes), "FDEs")
		})
	}
}

// TestFDEWithoutRowsEndsThePreviousRule: in a whole build, an FDE whose
// program advances past its end before any row (so it has none) right
// after another FDE does not inherit that FDE's last rule.
func TestFDEWithoutRowsEndsThePreviousRule(t *testing.T) {
	const a, b = 0x1000, 0x2000
	segs := []Segment{{Vaddr: 0, Size: 1 << 20, Off: 0}}
	first := ehFrame(a, 0x5000, 0x40, amd64CIEInit, []byte{cfaAdvanceLoc | 1, cfaDefCFAOffset, 16})
	empty := ehFrame(b, 0x5040, 0x40, amd64CIEInit, []byte{cfaAdvanceLoc1, 0x40, cfaDefCFAOffset, 32})
	tab := Build(unwind.ArchAMD64, []Section{{Data: first, Addr: a, EH: true}, {Data: empty, Addr: b, EH: true}}, segs)
	if r, ok := tab.Lookup(0x5030); !ok || r.CFAOff != 16 {
		t.Errorf("inside the first FDE: %v %v", r, ok)
	}
	if r, ok := tab.Lookup(0x5050); ok {
		t.Errorf("inside the FDE without rows: %v, want no rule", r)
	}
}

// systemObjects returns the paths of the system C library and of Debian's
// python3 (which links libpython statically): gcc-built objects with
// thousands of FDEs.
func systemObjects(t testing.TB) (libc, python string) {
	libc = "/lib/x86_64-linux-gnu/libc.so.6"
	if runtime.GOARCH == "arm64" {
		libc = "/lib/aarch64-linux-gnu/libc.so.6"
	}
	python, err := filepath.EvalSymlinks("/usr/bin/python3")
	if err != nil {
		t.Fatalf("python3 is needed (apt-get install python3): %v", err)
	}
	return libc, python
}
