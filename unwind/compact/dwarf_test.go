package compact

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/macprof/macprof/unwind"
)

// The DWARF-mode fixtures (testdata/build.sh): main > dcaller > odd >
// dleaf, odd's compact entry in DWARF mode naming its FDE in __eh_frame.
func dwarfFixture(arch string) string { return filepath.Join("testdata", "dwarf_"+arch) }

var (
	reFDE = regexp.MustCompile(`^([0-9a-f]{8}) [0-9a-f]+ [0-9a-f]+ FDE cie=[0-9a-f]+ pc=([0-9a-f]+)\.\.\.([0-9a-f]+)$`)
	reRow = regexp.MustCompile(`^\s+0x([0-9a-f]+): CFA=reg(\d+)([+-]\d+)?(?:: (.*))?$`)
	reReg = regexp.MustCompile(`^reg(\d+)=\[CFA([+-]\d+)\]$`)
)

// objdumpFDE is an FDE as llvm-objdump --dwarf=frames prints it: its
// offset in __eh_frame, its range and its rows (address, rule), the rule
// in unwind's terms for the walk's three registers.
type objdumpFDE struct {
	off        uint64
	start, end uint64
	addrs      []uint64
	rules      []unwind.Rule
}

// objdumpFrames parses llvm-objdump-14 --dwarf=frames of path: the FDEs
// whose rows it prints.
func objdumpFrames(t *testing.T, path string, arm64 bool) []objdumpFDE {
	t.Helper()
	out, err := exec.Command(tool(t, "llvm-objdump-14", "llvm-objdump"), "--dwarf=frames", path).Output()
	if err != nil {
		t.Fatalf("llvm-objdump --dwarf=frames %s: %v", path, err)
	}
	spReg, fpReg, raReg := 7, 6, 16
	if arm64 {
		spReg, fpReg, raReg = 31, 29, 30
	}
	var fdes []objdumpFDE
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if m := reFDE.FindStringSubmatch(line); m != nil {
			off, _ := strconv.ParseUint(m[1], 16, 64)
			start, _ := strconv.ParseUint(m[2], 16, 64)
			end, _ := strconv.ParseUint(m[3], 16, 64)
			fdes = append(fdes, objdumpFDE{off: off, start: start, end: end})
			continue
		}
		m := reRow.FindStringSubmatch(line)
		if m == nil || len(fdes) == 0 {
			continue
		}
		f := &fdes[len(fdes)-1]
		addr, _ := strconv.ParseUint(m[1], 16, 64)
		reg, _ := strconv.Atoi(m[2])
		off, _ := strconv.Atoi(m[3])
		r := unwind.Rule{CFA: unwind.CFAUnsupported, CFAOff: int32(off), RA: unwind.RegSame}
		switch reg {
		case spReg:
			r.CFA = unwind.CFASP
		case fpReg:
			r.CFA = unwind.CFAFP
		}
		if m[4] != "" {
			for _, s := range strings.Split(m[4], ", ") {
				rm := reReg.FindStringSubmatch(s)
				if rm == nil {
					t.Fatalf("%s: row %q: register rule %q", path, line, s)
				}
				n, _ := strconv.Atoi(rm[1])
				o, _ := strconv.Atoi(rm[2])
				switch n {
				case raReg:
					r.RA, r.RAOff = unwind.RegSaved, int32(o)
				case fpReg:
					r.FP, r.FPOff = unwind.RegSaved, int32(o)
				}
			}
		}
		f.addrs, f.rules = append(f.addrs, addr), append(f.rules, r)
	}
	return fdes
}

// TestDWARFModeMatchesObjdump: odd's compact entry (llvm-objdump
// --unwind-info, checked in TestParseMatchesObjdump) is DWARF mode and
// names the FDE llvm-objdump --dwarf=frames prints for odd's range, and at
// every address of odd the table answers with that FDE's row.
func TestDWARFModeMatchesObjdump(t *testing.T) {
	for _, arch := range fixtureArchs {
		t.Run(arch, func(t *testing.T) {
			f := openMachO(t, dwarfFixture(arch))
			tab, _, err := FromMachO(f)
			if err != nil {
				t.Fatal(err)
			}
			im := loadImage(t, f)
			odd := im.sym(t, "odd")
			r, ok := tab.Lookup(uint32(odd - im.base))
			if !ok || r.Kind != KindDWARF {
				t.Fatalf("odd's rule %+v, want DWARF mode", r)
			}
			var fde *objdumpFDE
			fdes := objdumpFrames(t, dwarfFixture(arch), im.arm64)
			for i := range fdes {
				if fdes[i].off == uint64(r.DWARFOffset) {
					fde = &fdes[i]
				}
			}
			// The FDE covers odd's code; the entry runs on over the
			// padding to the next function.
			if fde == nil || fde.start != odd || fde.end <= odd || fde.end > im.base+uint64(r.End) || len(fde.rules) < 4 {
				t.Fatalf("llvm-objdump prints no FDE at __eh_frame offset %#x for odd [%#x, %#x) with its rows: %+v", r.DWARFOffset, odd, im.base+uint64(r.End), fdes)
			}
			for a := fde.start; a < fde.end; a++ {
				i := len(fde.addrs) - 1
				for fde.addrs[i] > a {
					i--
				}
				got := tab.walkRule(uint32(a - im.base))
				if got == nil || *got != fde.rules[i] {
					t.Errorf("odd+%d: rule %v, llvm-objdump's row at %#x: %v", a-odd, got, fde.addrs[i], fde.rules[i])
				}
			}
		})
	}
}

// dwarfStack lays out main > dcaller > odd, the thread in odd at byte off
// (an instruction's start), executing the fixture's own prologues and
// transcribing odd's instructions (checked against its bytes); with leaf
// >= 0 odd has called dleaf (at its call) and the thread is at dleaf+leaf.
// It returns the stack and the PCs a walk must give.
func dwarfStack(t *testing.T, im *image, off, leaf int) (*machine, []uint64) {
	t.Helper()
	m := newMachine(t, im)
	m.pc = im.sym(t, "main")
	for m.step() {
	}
	mainRet := im.callSite(t, "main", "dcaller")
	m.call("dcaller", mainRet, -1)
	dcallerRet := im.callSite(t, "dcaller", "odd")
	m.call("odd", dcallerRet, 0)
	odd := m.pc
	oddRet := im.callSite(t, "odd", "dleaf")
	code := fmt.Sprintf("% x", im.text[odd-im.addr:odd-im.addr+40])
	if im.arm64 {
		// sub sp, sp, #32; str x30, [sp, #16]; str x19, [sp, #8];
		// mov x19, x0; bl dleaf; add x0, x0, x19; ldr x19, [sp, #8];
		// ldr x30, [sp, #16]; add sp, sp, #32; ret
		if want := "ff 83 00 d1 fe 0b 00 f9 f3 07 00 f9 f3 03 00 aa 06 00 00 94 00 00 13 8b f3 07 40 f9 fe 0b 40 f9 ff 83 00 91 c0 03 5f d6"; code != want {
			t.Fatalf("odd is % s, want %s: redo the transcription", code, want)
		}
		for at := 0; at < off; at += 4 {
			switch at {
			case 0:
				m.x[a64SP] -= 32
			case 4:
				m.store(m.x[a64SP]+16, m.x[a64LR])
			case 8:
				m.store(m.x[a64SP]+8, m.x[19])
			case 16:
				m.x[a64LR] = oddRet // dleaf returned: LR points into odd
			case 28:
				m.x[a64LR] = m.load(m.x[a64SP] + 16)
			case 32:
				m.x[a64SP] += 32
			}
		}
		if leaf >= 0 {
			m.x[a64LR] = oddRet
			m.pc = im.sym(t, "dleaf") + uint64(leaf)
			return m, []uint64{m.pc, oddRet, dcallerRet, mainRet}
		}
	} else {
		// subq $40, %rsp; movq %rbx, 16(%rsp); movq %rdi, %rbx;
		// callq dleaf; addq %rbx, %rax; movq 16(%rsp), %rbx;
		// addq $40, %rsp; retq
		if want := "48 83 ec 28 48 89 5c 24 10 48 89 fb e8 0f 00 00 00 48 01 d8 48 8b 5c 24 10 48 83 c4 28 c3"; !strings.HasPrefix(code, want) {
			t.Fatalf("odd is %s, want %s: redo the transcription", code, want)
		}
		for _, at := range []int{0, 4, 9, 12, 17, 20, 25} {
			if at >= off {
				break
			}
			switch at {
			case 0:
				m.x[x86RSP] -= 40
			case 4:
				m.store(m.x[x86RSP]+16, m.x[3])
			}
		}
		if off >= 29 {
			m.x[x86RSP] += 40
		}
		if leaf >= 0 {
			// pushq %rbx; leaq 1(%rdi), %rax; popq %rbx; retq
			if code := fmt.Sprintf("% x", im.text[im.sym(t, "dleaf")-im.addr:][:7]); code != "53 48 8d 47 01 5b c3" {
				t.Fatalf("dleaf is %s: redo the transcription", code)
			}
			m.call("dleaf", oddRet, min(leaf, 1)) // the push, if past it
			m.pc = im.sym(t, "dleaf") + uint64(leaf)
			return m, []uint64{m.pc, oddRet, dcallerRet, mainRet}
		}
	}
	m.pc = odd + uint64(off)
	return m, []uint64{m.pc, dcallerRet, mainRet}
}

// TestWalkDWARFMode walks the DWARF-mode fixtures' stacks sampled at
// every instruction of odd and inside dleaf (x86_64: a frameless leaf
// that pushed rbx) to main: odd's frame by its FDE's rows, the others by
// compact rules, the whole walk by one WalkCFI over Images.
func TestWalkDWARFMode(t *testing.T) {
	offs := map[string][]int{"x86_64": {0, 4, 9, 12, 17, 20, 25, 29}, "arm64": {0, 4, 8, 12, 16, 20, 24, 28, 32, 36}}
	// dleaf's instructions walked: x86_64 before and after its push
	// (and before its pop); its ret, after the pop, is an epilogue no
	// compact rule describes.
	leaves := map[string][]int{"x86_64": {0, 1, 5}, "arm64": {0, 4}}
	for _, arch := range fixtureArchs {
		t.Run(arch, func(t *testing.T) {
			f := openMachO(t, dwarfFixture(arch))
			tab, _, err := FromMachO(f)
			if err != nil {
				t.Fatal(err)
			}
			im := loadImage(t, f)
			imgs := fixtureImages(t, im, tab)
			w := mustWalker(t, tab.Arch())
			check := func(name string, m *machine, want []uint64) {
				t.Helper()
				pcs, res := w.WalkCFI(m.regs(), &m.stack, imgs, make([]uint64, 0, 16))
				// main lies past the table's last range (lld-14 folds it
				// into dcaller's entry, of the same encoding, but ends
				// the table at dcaller's end): its frame record ends the
				// walk, every other frame is a table's.
				if !eqSlices(pcs, want) || res.Stop != unwind.StopEnd || res.CFIFrames != len(want)-1 {
					t.Errorf("%s: walk %#x %+v, want %#x to the end, all but main's frame by a table", name, pcs, res, want)
				}
			}
			for _, off := range offs[arch] {
				m, want := dwarfStack(t, im, off, -1)
				check(fmt.Sprintf("odd+%d", off), m, want)
			}
			callAt := 12
			if im.arm64 {
				callAt = 16
			}
			for _, leaf := range leaves[arch] {
				m, want := dwarfStack(t, im, callAt, leaf)
				check(fmt.Sprintf("dleaf+%d", leaf), m, want)
			}
			// The walk does not allocate once odd's FDE is compiled.
			m, _ := dwarfStack(t, im, callAt, 0)
			dst := make([]uint64, 0, 16)
			if a := testing.AllocsPerRun(200, func() { w.WalkCFI(m.regs(), &m.stack, imgs, dst) }); a != 0 {
				t.Errorf("%v allocations per walk", a)
			}
		})
	}
}
