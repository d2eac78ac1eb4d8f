package cfi

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/macprof/macprof/unwind"
)

// The fixtures: testdata/build.sh builds them with clang 14.
var fixtures = []struct {
	file string
	arch unwind.Arch
}{
	{"eh_amd64", unwind.ArchAMD64},
	{"eh_arm64", unwind.ArchARM64},
	{"debug_amd64", unwind.ArchAMD64},
	{"debug_arm64", unwind.ArchARM64},
}

// objdumpPath finds llvm-objdump (scripts/install-deps.sh installs llvm-14).
func objdumpPath(t testing.TB) string {
	for _, name := range []string{"llvm-objdump-14", "llvm-objdump"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("llvm-objdump (package llvm-14, scripts/install-deps.sh) is missing: it is the oracle of the CFI tables")
	return ""
}

// oracleFDE is one FDE as llvm-objdump --dwarf=frames prints it: its range
// and rows (virtual addresses).
type oracleFDE struct {
	start, end uint64
	rows       []oracleRow
	// restores: the FDE uses DW_CFA_restore_state, which llvm-objdump 14
	// gets wrong (it restores the registers' rules but not the CFA's,
	// where libgcc, libunwind and DWARF producers restore the whole row;
	// GCC's epilogues rely on that).
	restores bool
}

type oracleRow struct {
	addr uint64
	rule unwind.Rule
}

var (
	fdeLine  = regexp.MustCompile(`FDE cie=([0-9a-f]+) pc=([0-9a-f]+)\.\.\.([0-9a-f]+)`)
	cieLine  = regexp.MustCompile(`^([0-9a-f]+) [0-9a-f]+ [0-9a-f]+ CIE`)
	atSP     = regexp.MustCompile(`^\[DW_OP_breg(\d+) ([+-]\d+)\]$`)
	rowLine  = regexp.MustCompile(`^\s+0x([0-9a-f]+): CFA=([^:]+)(?:: (.*))?$`)
	cfaReg   = regexp.MustCompile(`^reg(\d+)([+-]\d+)?$`)
	cfaDeref = regexp.MustCompile(`^DW_OP_breg(\d+) ([+-]\d+), DW_OP_deref(?:, DW_OP_plus_uconst 0x([0-9a-f]+))?$`)
	saved    = regexp.MustCompile(`^\[CFA([+-]\d+)\]$`)
)

// parseObjdump reads llvm-objdump's FDEs and unwind rows, reducing each row
// to a Rule independently of the package's own reduction.
func parseObjdump(t *testing.T, out []byte, arch unwind.Arch) []oracleFDE {
	sp, fp, ra := 7, 6, 16
	if arch == unwind.ArchARM64 {
		sp, fp, ra = 31, 29, 30
	}
	var fdes []oracleFDE
	var cur *oracleFDE
	signal := map[string]bool{} // CIEs with augmentation "S", by offset
	var cieAt string
	sigFDE := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if m := fdeLine.FindStringSubmatch(line); m != nil {
			s, _ := strconv.ParseUint(m[2], 16, 64)
			e, _ := strconv.ParseUint(m[3], 16, 64)
			fdes = append(fdes, oracleFDE{start: s, end: e})
			cur = &fdes[len(fdes)-1]
			sigFDE = signal[m[1]]
			continue
		}
		if m := cieLine.FindStringSubmatch(line); m != nil {
			cieAt = m[1]
		}
		if aug, ok := strings.CutPrefix(strings.TrimSpace(line), "Augmentation:"); ok && cur == nil && strings.Contains(aug, "S") {
			signal[cieAt] = true
		}
		if strings.Contains(line, " CIE") {
			cur = nil
		}
		if cur != nil && strings.Contains(line, "DW_CFA_restore_state") {
			cur.restores = true
		}
		m := rowLine.FindStringSubmatch(line)
		if m == nil || cur == nil {
			continue
		}
		addr, _ := strconv.ParseUint(m[1], 16, 64)
		r := unwind.Rule{CFA: unwind.CFAUnsupported, FP: unwind.RegSame, RA: unwind.RegUnsupported}
		if arch == unwind.ArchARM64 {
			r.RA = unwind.RegSame
		}
		r.Signal = sigFDE
		if c := cfaDeref.FindStringSubmatch(m[2]); c != nil {
			n, _ := strconv.Atoi(c[1])
			off, _ := strconv.ParseInt(c[2], 10, 64)
			plus, _ := strconv.ParseInt(c[3], 16, 64)
			switch n {
			case sp:
				r.CFA, r.CFAOff, r.CFAPlus = unwind.CFADerefSP, int32(off), int32(plus)
			case fp:
				r.CFA, r.CFAOff, r.CFAPlus = unwind.CFADerefFP, int32(off), int32(plus)
			}
		}
		if c := cfaReg.FindStringSubmatch(m[2]); c != nil {
			n, _ := strconv.Atoi(c[1])
			off, _ := strconv.ParseInt(c[2], 10, 64)
			switch n {
			case sp:
				r.CFA, r.CFAOff = unwind.CFASP, int32(off)
			case fp:
				r.CFA, r.CFAOff = unwind.CFAFP, int32(off)
			}
		}
		if m[3] != "" {
			for _, reg := range strings.Split(m[3], ", ") {
				name, val, ok := strings.Cut(reg, "=")
				if !ok {
					continue // the rest of an expression (", " separates its operations too)
				}
				n, err := strconv.Atoi(strings.TrimPrefix(name, "reg"))
				if err != nil || (n != fp && n != ra) {
					continue
				}
				rule, off := unwind.RegUnsupported, int32(0)
				switch {
				case saved.MatchString(val):
					o, _ := strconv.ParseInt(saved.FindStringSubmatch(val)[1], 10, 32)
					rule, off = unwind.RegSaved, int32(o)
				case atSP.MatchString(val) && atSP.FindStringSubmatch(val)[1] == strconv.Itoa(sp):
					o, _ := strconv.ParseInt(atSP.FindStringSubmatch(val)[2], 10, 32)
					rule, off = unwind.RegSavedSP, int32(o)
				case val == "undefined":
					rule = unwind.RegUndefined
				case val == "same":
					rule = unwind.RegSame
				}
				if n == fp {
					r.FP, r.FPOff = rule, off
				} else {
					r.RA, r.RAOff = rule, off
				}
			}
		}
		cur.rows = append(cur.rows, oracleRow{addr: addr, rule: r})
	}
	return fdes
}

// TestOracleObjdump checks the table of every fixture against llvm-objdump
// --dwarf=frames: at every address where either starts a row, in every
// FDE, the rules agree; past each FDE (and outside all) there is none; and
// every function symbol is covered.
func TestOracleObjdump(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.file, func(t *testing.T) {
			if n := checkObjdump(t, "testdata/"+fx.file, fx.arch, 8); n != 0 {
				t.Errorf("%d FDEs with restore_state were not compared", n)
			}
		})
	}
}

// checkObjdump compares the table of the object at path with
// llvm-objdump's rows; the object has at least minFuncs functions.
func checkObjdump(t *testing.T, path string, arch unwind.Arch, minFuncs int) (skipped int) {
	objdump := objdumpPath(t)
	fx := struct{ arch unwind.Arch }{arch}
	{
		{
			out, err := exec.Command(objdump, "--dwarf=frames", path).CombinedOutput()
			if err != nil {
				t.Fatalf("llvm-objdump: %v\n%s", err, out)
			}
			fdes := parseObjdump(t, out, fx.arch)
			if len(fdes) < minFuncs {
				t.Fatalf("objdump shows %d FDEs, want %d at least", len(fdes), minFuncs)
			}
			tab, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if tab.Arch() != fx.arch {
				t.Fatalf("arch %v, want %v", tab.Arch(), fx.arch)
			}
			f, err := elf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			off := func(vaddr uint64) uint64 {
				for _, p := range f.Progs {
					if p.Type == elf.PT_LOAD && vaddr >= p.Vaddr && vaddr <= p.Vaddr+p.Filesz && p.Flags&elf.PF_X != 0 {
						return vaddr - p.Vaddr + p.Off
					}
				}
				t.Fatalf("address %#x in no segment", vaddr)
				return 0
			}
			starts := map[uint64]bool{}
			for _, d := range fdes {
				starts[d.start] = true
			}
			// FDE ends that another FDE does not start at (compilers
			// lay functions out back to back or with padding between).
			covered := func(vaddr uint64) bool { return starts[vaddr] }
			ours := tab.AllRows()
			checked := 0
			for _, d := range fdes {
				if d.restores {
					skipped++
					continue
				}
				want := func(a uint64) unwind.Rule {
					i := sort.Search(len(d.rows), func(i int) bool { return d.rows[i].addr > a }) - 1
					if i < 0 {
						t.Fatalf("FDE [%#x,%#x): no row at %#x", d.start, d.end, a)
					}
					return d.rows[i].rule
				}
				addrs := map[uint64]bool{d.start: true, d.end - 1: true}
				for _, r := range d.rows {
					addrs[r.addr] = true
					if r.addr > d.start {
						addrs[r.addr-1] = true
					}
				}
				base := off(d.start)
				for i := sort.Search(len(ours), func(i int) bool { return ours[i].Off >= base }); i < len(ours); i++ {
					a := ours[i].Off - base + d.start
					if a >= d.end {
						break
					}
					addrs[a] = true
				}
				for a := range addrs {
					got, ok := tab.Lookup(off(a))
					if w := want(a); !ok || got != w {
						t.Errorf("%#x: got %v (ok %v), objdump says %v", a, got, ok, w)
					}
					checked++
				}
				if !covered(d.end) {
					if got, ok := tab.Lookup(off(d.end)); ok {
						t.Errorf("%#x, the end of FDE [%#x,%#x): got %v, want no rule", d.end, d.start, d.end, got)
					}
				}
			}
			// Every function has its FDE.
			syms, err := f.Symbols()
			if err != nil {
				syms, err = f.DynamicSymbols()
			}
			if err != nil {
				t.Fatal(err)
			}
			funcs := 0
			for _, s := range syms {
				if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Value == 0 {
					continue
				}
				funcs++
				if _, ok := tab.Lookup(off(s.Value)); !ok {
					t.Errorf("function %s at %#x: no rule", s.Name, s.Value)
				}
			}
			if funcs < minFuncs {
				t.Errorf("%d functions, want %d at least", funcs, minFuncs)
			}
			t.Logf("%d FDEs (%d with restore_state not compared), %d addresses checked, %d rows, %d rules", len(fdes), skipped, checked, tab.Rows(), len(tab.palette))
		}
	}
	return skipped
}

// TestFixtureRules pins what the fixtures' frameless and framed functions
// look like, so that a change in the oracle's parsing cannot hide a
// regression: the assembly leaf keeps its return address at the stack
// pointer (amd64) or in LR (arm64).
func TestFixtureRules(t *testing.T) {
	for _, fx := range fixtures {
		tab, err := Load("testdata/" + fx.file)
		if err != nil {
			t.Fatal(err)
		}
		f, err := elf.Open("testdata/" + fx.file)
		if err != nil {
			t.Fatal(err)
		}
		syms, _ := f.Symbols()
		f.Close()
		for _, s := range syms {
			if s.Name != "asmleaf" {
				continue
			}
			var off uint64
			for _, p := range f.Progs {
				if p.Type == elf.PT_LOAD && s.Value >= p.Vaddr && s.Value < p.Vaddr+p.Filesz {
					off = s.Value - p.Vaddr + p.Off
				}
			}
			got, ok := tab.Lookup(off)
			want := "CFA=SP+8 FP=same RA=[CFA-8]"
			if fx.arch == unwind.ArchARM64 {
				want = "CFA=SP+0 FP=same RA=same"
			}
			if !ok || got.String() != want {
				t.Errorf("%s: asmleaf: %v, want %s", fx.file, got, want)
			}
		}
	}
	_ = fmt.Sprint
}
