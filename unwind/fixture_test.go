package unwind_test

import (
	"debug/elf"
	"encoding/binary"
	"slices"
	"testing"

	"github.com/macprof/macprof/unwind"
	"github.com/macprof/macprof/unwind/cfi"
)

// fixtureObject is a clang-built fixture of unwind/cfi (testdata/build.sh)
// loaded at its link addresses: its table and how to find its functions
// and call sites.
type fixtureObject struct {
	t     *cfi.Table
	arch  unwind.Arch
	text  *elf.Section
	code  []byte
	funcs map[string]elf.Symbol
	segs  []elf.ProgHeader
}

func loadFixture(t *testing.T, name string, arch unwind.Arch) *fixtureObject {
	t.Helper()
	return loadObject(t, "cfi/testdata/"+name, arch)
}

// loadObject loads the ELF executable at path as a fixtureObject.
func loadObject(t *testing.T, path string, arch unwind.Arch) *fixtureObject {
	t.Helper()
	tab, err := cfi.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	o := &fixtureObject{t: tab, arch: arch, text: f.Section(".text"), funcs: map[string]elf.Symbol{}}
	if o.code, err = o.text.Data(); err != nil {
		t.Fatal(err)
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			o.funcs[s.Name] = s
		}
	}
	for _, p := range f.Progs {
		o.segs = append(o.segs, p.ProgHeader)
	}
	return o
}

// Rule makes the fixture its own Tables, mapped at its link addresses.
func (o *fixtureObject) Rule(pc uint64) (*unwind.Rule, bool) {
	for _, p := range o.segs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 && pc >= p.Vaddr && pc < p.Vaddr+p.Filesz {
			r := o.t.Find(pc - p.Vaddr + p.Off)
			return r, false
		}
	}
	return nil, false
}

// callSite returns the return address of caller's call of callee: after
// its call rel32 (amd64) or bl (arm64).
func (o *fixtureObject) callSite(t *testing.T, caller, callee string) uint64 {
	t.Helper()
	from, to := o.funcs[caller], o.funcs[callee]
	if from.Value == 0 || to.Value == 0 {
		t.Fatalf("no function %s or %s in the fixture", caller, callee)
	}
	at := func(a uint64) []byte { return o.code[a-o.text.Addr:] }
	for a := from.Value; a < from.Value+from.Size; a++ {
		b := at(a)
		switch o.arch {
		case unwind.ArchAMD64:
			if b[0] == 0xe8 && a+5+uint64(int64(int32(binary.LittleEndian.Uint32(b[1:])))) == to.Value {
				return a + 5
			}
		case unwind.ArchARM64:
			if (a-from.Value)%4 != 0 {
				continue
			}
			ins := binary.LittleEndian.Uint32(b)
			if ins>>26 == 0x25 && a+uint64(int64(int32(ins<<6)>>6)*4) == to.Value {
				return a + 4
			}
		}
	}
	t.Fatalf("%s does not call %s", caller, callee)
	return 0
}

// TestWalkCFIFixtures walks, with the fixtures' own tables (amd64 and
// arm64), a stack built the way their code builds it: interrupted in
// asmleaf, the frameless assembly leaf, called by saves, called by
// dynamic (whose CFA is its frame pointer's on arm64: it calls alloca),
// called by main (whose return address is zero here: the end). The walk
// names every caller, in order, once.
func TestWalkCFIFixtures(t *testing.T) {
	for _, fx := range []struct {
		name string
		arch unwind.Arch
	}{{"eh_amd64", unwind.ArchAMD64}, {"eh_arm64", unwind.ArchARM64}, {"debug_amd64", unwind.ArchAMD64}, {"debug_arm64", unwind.ArchARM64}} {
		t.Run(fx.name, func(t *testing.T) {
			o := loadFixture(t, fx.name, fx.arch)
			leaf := o.funcs["asmleaf"].Value
			rets := []uint64{
				o.callSite(t, "saves", "asmleaf"),
				o.callSite(t, "dynamic", "saves"),
				o.callSite(t, "main", "dynamic"),
			}
			// Lay the frames out from the leaf outward, each as its
			// rule says, with SP growing by the rule's CFA.
			s := unwind.NewSynth(unwind.TestStack, 1<<16)
			var regs unwind.Regs
			regs.PC = leaf + 4
			sp := s.Base() + 0x100
			regs.SP = sp
			fpSink := &regs.FP // where the current frame's FP value is kept
			type saved struct {
				addr uint64
				v    *uint64
			}
			var fps []saved // FP values kept on the stack, written at the end
			pcs := append([]uint64{regs.PC}, rets...)
			for i, pc := range pcs {
				look := pc
				if i > 0 {
					look--
				}
				r, _ := o.Rule(look)
				if r == nil {
					t.Fatalf("no rule at %#x", look)
				}
				var cfa uint64
				switch r.CFA {
				case unwind.CFASP:
					cfa = sp + uint64(int64(r.CFAOff))
				case unwind.CFAFP:
					cfa = sp + 0x200
					*fpSink = cfa - uint64(int64(r.CFAOff))
				default:
					t.Fatalf("%#x: rule %v", look, r)
				}
				next := uint64(0) // main's caller: none
				if i+1 < len(pcs) {
					next = pcs[i+1]
				}
				switch r.RA {
				case unwind.RegSaved:
					s.Word(cfa+uint64(int64(r.RAOff)), next)
				case unwind.RegSame:
					if i != 0 {
						t.Fatalf("%#x: return address in LR in a caller", look)
					}
					regs.LR = next
				default:
					t.Fatalf("%#x: rule %v", look, r)
				}
				if r.FP == unwind.RegSaved {
					// The caller's FP is kept here from now on.
					fps = append(fps, saved{cfa + uint64(int64(r.FPOff)), new(uint64)})
					fpSink = fps[len(fps)-1].v
				}
				sp = cfa
			}
			for _, f := range fps {
				s.Word(f.addr, *f.v)
			}
			w := unwind.MustWalker(t, unwind.Config{Arch: fx.arch})
			got, res := w.WalkCFI(regs, s.Stack(), o, make([]uint64, 0, 64))
			if !slices.Equal(got, pcs) || res.Stop != unwind.StopEnd || res.CFIFrames != len(pcs) {
				t.Errorf("walk %#x (%v, %d CFI frames), want %#x", got, res.Stop, res.CFIFrames, pcs)
			}
		})
	}
}
