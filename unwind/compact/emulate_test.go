package compact

import (
	"debug/macho"
	"encoding/binary"
	"sort"
	"testing"

	"github.com/macprof/macprof/unwind"
)

// image is a fixture's code and symbols, for building stacks from its own
// instructions.
type image struct {
	f      *macho.File
	text   []byte
	addr   uint64 // __text's address
	base   uint64 // __TEXT's address: image offsets start here
	syms   []macho.Symbol
	arm64  bool
	byName map[string]uint64
}

func loadImage(t testing.TB, f *macho.File) *image {
	t.Helper()
	sec := f.Section("__text")
	data, err := sec.Data()
	if err != nil {
		t.Fatal(err)
	}
	im := &image{f: f, text: data, addr: sec.Addr, base: f.Segment("__TEXT").Addr, arm64: f.Cpu == macho.CpuArm64, byName: map[string]uint64{}}
	for _, s := range f.Symtab.Syms {
		if s.Sect == 1 && s.Type&0x0e == 0x0e { // N_SECT, in __text
			im.syms = append(im.syms, s)
			im.byName[s.Name] = s.Value
		}
	}
	sort.Slice(im.syms, func(i, j int) bool { return im.syms[i].Value < im.syms[j].Value })
	return im
}

func (im *image) sym(t testing.TB, name string) uint64 {
	t.Helper()
	a, ok := im.byName["_"+name]
	if !ok {
		t.Fatalf("fixture has no symbol _%s", name)
	}
	return a
}

// name returns the function holding addr, without its leading underscore.
func (im *image) name(addr uint64) string {
	i := sort.Search(len(im.syms), func(i int) bool { return im.syms[i].Value > addr }) - 1
	if i < 0 {
		return "?"
	}
	return im.syms[i].Name[1:]
}

func (im *image) u32(addr uint64) uint32 {
	return binary.LittleEndian.Uint32(im.text[addr-im.addr:])
}

// callSite returns the return address of the first call from function
// `from` to function `to`, found by decoding from's BL (arm64) or
// CALL rel32 (x86_64) instructions.
func (im *image) callSite(t testing.TB, from, to string) uint64 {
	t.Helper()
	start, target := im.sym(t, from), im.sym(t, to)
	end := im.addr + uint64(len(im.text))
	if i := sort.Search(len(im.syms), func(i int) bool { return im.syms[i].Value > start }); i < len(im.syms) {
		end = im.syms[i].Value
	}
	for a := start; a < end; {
		if im.arm64 {
			if w := im.u32(a); w&0xFC000000 == 0x94000000 {
				off := int64(int32(w<<6)>>6) * 4
				if uint64(int64(a)+off) == target {
					return a + 4
				}
			}
			a += 4
			continue
		}
		if im.text[a-im.addr] == 0xE8 && a+5 <= end {
			if uint64(int64(a+5)+int64(int32(im.u32(a+1)))) == target {
				return a + 5
			}
		}
		a++
	}
	t.Fatalf("no call from %s to %s in the fixture", from, to)
	return 0
}

// machine executes the prologue instructions of the fixture's functions
// on a stack, the way the CPU would: pushes and stores of registers, frame
// pointer set-up and stack allocation. Register values are distinct
// markers, so saved slots can be checked.
type machine struct {
	t     testing.TB
	im    *image
	stack unwind.Stack
	x     [32]uint64 // arm64 x0..x30 and SP at 31; x86_64 rax..r15 by number, RSP at 4
	pc    uint64
}

const (
	stackTop  = 0x7ff7_bfe0_0000
	stackSize = 64 << 10
	x86RSP    = 4
	x86RBP    = 5
	a64SP     = 31
	a64FP     = 29
	a64LR     = 30
)

func newMachine(t testing.TB, im *image) *machine {
	m := &machine{t: t, im: im}
	m.stack = unwind.Stack{Base: stackTop - stackSize, Data: make([]byte, stackSize), Lo: stackTop - stackSize, Hi: stackTop}
	for i := range m.x {
		m.x[i] = 0x1111_0000 + uint64(i) // markers
	}
	if im.arm64 {
		m.x[a64SP], m.x[a64FP], m.x[a64LR] = stackTop, 0, 0 // main's caller: end of chain
	} else {
		m.x[x86RSP], m.x[x86RBP] = stackTop, 0
		m.push(0) // main's return address: end of chain
	}
	return m
}

func (m *machine) store(addr, v uint64) {
	if addr < m.stack.Base || addr+8 > stackTop {
		m.t.Fatalf("store at %#x outside the stack", addr)
	}
	binary.LittleEndian.PutUint64(m.stack.Data[addr-m.stack.Base:], v)
}

func (m *machine) load(addr uint64) uint64 {
	return binary.LittleEndian.Uint64(m.stack.Data[addr-m.stack.Base:])
}

func (m *machine) push(v uint64) {
	m.x[x86RSP] -= 8
	m.store(m.x[x86RSP], v)
}

// call enters function fn from the return address ret and runs its
// prologue; sample stops there instead, after n instructions (n < 0: the
// whole prologue).
func (m *machine) call(fn string, ret uint64, n int) {
	if m.im.arm64 {
		m.x[a64LR] = ret
	} else {
		m.push(ret)
	}
	m.pc = m.im.sym(m.t, fn)
	for i := 0; n < 0 || i < n; i++ {
		if !m.step() {
			return
		}
	}
}

// step executes one prologue instruction and reports false at the first
// instruction that is not one.
func (m *machine) step() bool {
	if m.im.arm64 {
		return m.stepARM64()
	}
	return m.stepX86()
}

func (m *machine) stepARM64() bool {
	w := m.im.u32(m.pc)
	rt, rn, rt2 := w&31, (w>>5)&31, (w>>10)&31
	reg := func(r uint32) uint64 { return m.x[r] } // 31 is SP for these forms
	switch {
	case w&0xFFC00000 == 0xA9800000, w&0xFFC00000 == 0xA9000000: // STP Xt, Xt2, [Xn, #imm]! / [Xn, #imm]
		imm := uint64(int64(int32(w<<10)>>25) * 8)
		addr := reg(rn) + imm
		m.store(addr, reg(rt))
		m.store(addr+8, reg(rt2))
		if w&0xFFC00000 == 0xA9800000 {
			m.x[rn] = addr
		}
	case w&0xFF800000 == 0x91000000, w&0xFF800000 == 0xD1000000: // ADD/SUB Xd, Xn, #imm{, lsl 12}
		imm := uint64((w >> 10) & 0xFFF)
		if w&(1<<22) != 0 {
			imm <<= 12
		}
		if rt != a64SP && rt != a64FP {
			return false
		}
		if w&0xFF800000 == 0x91000000 {
			m.x[rt] = reg(rn) + imm
		} else {
			m.x[rt] = reg(rn) - imm
		}
	default:
		return false
	}
	m.pc += 4
	return true
}

func (m *machine) stepX86() bool {
	b := m.im.text[m.pc-m.im.addr:]
	switch {
	case b[0] >= 0x50 && b[0] <= 0x57: // push r
		m.push(m.x[b[0]-0x50])
		m.pc++
	case b[0] == 0x41 && b[1] >= 0x50 && b[1] <= 0x57: // push r8-r15
		m.push(m.x[8+b[1]-0x50])
		m.pc += 2
	case b[0] == 0x48 && b[1] == 0x89 && b[2] == 0xE5: // mov %rsp, %rbp
		m.x[x86RBP] = m.x[x86RSP]
		m.pc += 3
	case b[0] == 0x48 && b[1] == 0x83 && b[2] == 0xEC: // sub $imm8, %rsp
		m.x[x86RSP] -= uint64(b[3])
		m.pc += 4
	case b[0] == 0x48 && b[1] == 0x81 && b[2] == 0xEC: // sub $imm32, %rsp
		m.x[x86RSP] -= uint64(binary.LittleEndian.Uint32(b[3:]))
		m.pc += 7
	default:
		return false
	}
	return true
}

func (m *machine) regs() unwind.Regs {
	if m.im.arm64 {
		return unwind.Regs{PC: m.pc, SP: m.x[a64SP], FP: m.x[a64FP], LR: m.x[a64LR]}
	}
	return unwind.Regs{PC: m.pc, SP: m.x[x86RSP], FP: m.x[x86RBP]}
}
