package mach

import (
	"testing"
	"time"

	"github.com/macprof/macprof/unwind"
)

func TestAddrMask(t *testing.T) {
	for bits, want := range map[int]uint64{
		47:  0x0000_7fff_ffff_ffff,
		48:  0x0000_ffff_ffff_ffff,
		39:  0x0000_007f_ffff_ffff,
		64:  ^uint64(0),
		0:   0x0000_7fff_ffff_ffff, // sysctl missing
		-5:  0x0000_7fff_ffff_ffff,
		100: 0x0000_7fff_ffff_ffff,
	} {
		if got := AddrMask(bits); got != want {
			t.Errorf("AddrMask(%d) = %#x, want %#x", bits, got, want)
		}
	}
}

func TestFlavorFor(t *testing.T) {
	if f := FlavorFor(true, false); f.Arch != unwind.ArchARM64 || f.Flavor != 6 || f.Count != 68 {
		t.Errorf("native arm64: %+v", f)
	}
	if f := FlavorFor(true, true); f.Arch != unwind.ArchAMD64 || f.Flavor != 4 || f.Count != 42 {
		t.Errorf("Rosetta: %+v", f)
	}
	if f := FlavorFor(false, false); f.Arch != unwind.ArchAMD64 {
		t.Errorf("Intel: %+v", f)
	}
	if !Translated(0x00020000|0x4) || Translated(0x4) {
		t.Error("Translated misreads P_TRANSLATED")
	}
}

func TestDecodeState(t *testing.T) {
	arm := ArmThreadState{FP: 0x16f000010, LR: 0xa500_0001_0000_3f00, SP: 0x16f000000, PC: 0x2b00_0001_0000_3e00}
	mask := AddrMask(47)
	r, ok := DecodeState(FlavorFor(true, false), &arm, nil, ArmThreadState64Count, mask)
	if !ok || r.PC != 0x1_0000_3e00 || r.LR != 0x1_0000_3f00 || r.SP != 0x16f000000 || r.FP != 0x16f000010 {
		t.Errorf("arm64 decode: %+v ok=%v", r, ok)
	}
	if _, ok := DecodeState(FlavorFor(true, false), &arm, nil, ArmThreadState64Count-1, mask); ok {
		t.Error("a short arm64 state was accepted")
	}
	x86 := X86ThreadState{RIP: 0x100003e00, RSP: 0x7ff7bfeff000, RBP: 0x7ff7bfeff010}
	r, ok = DecodeState(FlavorFor(false, false), nil, &x86, X86ThreadState64Count, 0)
	if !ok || r.PC != x86.RIP || r.SP != x86.RSP || r.FP != x86.RBP || r.LR != 0 {
		t.Errorf("x86_64 decode: %+v ok=%v", r, ok)
	}
	if _, ok := DecodeState(FlavorFor(false, false), nil, &x86, 10, 0); ok {
		t.Error("a short x86_64 state was accepted")
	}
}

func TestTimeAndInfo(t *testing.T) {
	b := ThreadBasicInfoData{UserTime: TimeValue{1, 500_000}, SystemTime: TimeValue{0, 250}, RunState: THStateRunning}
	if got, want := b.CPUTime(), 1500*time.Millisecond+250*time.Microsecond; got != want {
		t.Errorf("CPUTime = %v, want %v", got, want)
	}
	if !b.Running() {
		t.Error("TH_STATE_RUNNING not running")
	}
	b.RunState = THStateWaiting
	if b.Running() {
		t.Error("TH_STATE_WAITING running")
	}
	for _, tv := range []TimeValue{{-1, 0}, {0, -5}, {0, 2_000_000}} {
		if d := tv.Duration(); d != 0 {
			t.Errorf("%+v.Duration() = %v, want 0", tv, d)
		}
	}
	var e ThreadExtendedInfoData
	copy(e.Name[:], "worker-3\x00junk")
	if got := string(e.NameBytes()); got != "worker-3" {
		t.Errorf("name %q", got)
	}
	for i := range e.Name {
		e.Name[i] = 'x' // no NUL at all: all 64 bytes, never more
	}
	if got := len(e.NameBytes()); got != MaxThreadNameSize {
		t.Errorf("unterminated name: %d bytes", got)
	}
	if n := testing.AllocsPerRun(100, func() { _ = e.NameBytes() }); n != 0 {
		t.Errorf("NameBytes allocates %v times", n)
	}
}

func TestStackWindow(t *testing.T) {
	for _, c := range []struct {
		sp, lo, hi uint64
		capacity   int
		base       uint64
		n          int
	}{
		{0x1000, 0x0, 0x3000, 0x10000, 0x1000, 0x2000},
		{0x1000, 0x0, 0x3000, 0x100, 0x1000, 0x100},
		{0x1000, 0x2000, 0x3000, 0x10000, 0x1000, 0},
		{0x3000, 0x2000, 0x3000, 0x10000, 0x3000, 0},
		{0x2fff, 0x2000, 0x3000, 0x10000, 0x2fff, 1},
		{0x2000, 0x2000, 0x3000, 0, 0x2000, 0},
		{0x2000, 0x2000, 0x3000, -1, 0x2000, 0},
	} {
		base, n := StackWindow(c.sp, c.lo, c.hi, c.capacity)
		if base != c.base || n != c.n {
			t.Errorf("StackWindow(%#x, %#x, %#x, %d) = %#x, %d; want %#x, %d", c.sp, c.lo, c.hi, c.capacity, base, n, c.base, c.n)
		}
	}
}
