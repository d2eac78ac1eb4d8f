package symcache

import (
	"bytes"
	"debug/elf"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// FuzzDWARFLines feeds ELF files with DWARF to NewDWARFLines and looks up
// addresses, which reads the units covering them: hostile line programs
// and trees must not panic, hang or grow without bound, and a unit must
// give the same frames whichever lookup reads it first. The committed
// seeds (testdata/fuzz/FuzzDWARFLines) are gcc -O2 -g object files:
// testprog/src/inlineother.c, which has inlined functions, and ld -r of
// multicu's a.c, b.c, r.S and g.S (several units, one without ranges, one
// whose line program goes past its high_pc), and linked programs read
// through dwarfInfo: inlineother.c (gcc -O2 -g) and inline.cpp (g++ -O2
// -g -gdwarf-4).
func FuzzDWARFLines(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, addr uint64) {
		ef, err := elf.NewFile(bytes.NewReader(data))
		if err != nil {
			return
		}
		fuzzDWARFInfo(t, ef, []uint64{addr, 0, 0x10, 0x40, 0x100})
		d, err := ef.DWARF()
		if err != nil {
			return
		}
		l, err := NewDWARFLines(d)
		if err != nil {
			return
		}
		addrs := []uint64{addr, 0, 0x10, 0x40, 0x100}
		for i, s := range l.spans {
			if i == 64 {
				break
			}
			addrs = append(addrs, s.lo, s.lo+addr%(s.hi-s.lo), s.hi)
		}
		frames := make([]string, len(addrs))
		for i, a := range addrs {
			fr := l.Lines(a)
			if len(fr) > maxDWARFDepth {
				t.Fatalf("%d frames", len(fr))
			}
			frames[i] = fmt.Sprint(fr)
		}
		// The same lookups in the other order, on a new index, give the
		// same frames unless a budget ran out (then what is left out
		// depends on which unit came first).
		l2, err := NewDWARFLines(d)
		if err != nil {
			t.Fatalf("a second index: %v", err)
		}
		again := make([]string, len(addrs))
		for i := len(addrs) - 1; i >= 0; i-- {
			again[i] = fmt.Sprint(l2.Lines(addrs[i]))
		}
		for _, x := range []*DWARFLines{l, l2} {
			if x.rowsLeft <= 0 || x.nodesLeft <= 0 || x.rangesLeft <= 0 {
				return
			}
		}
		for i := range addrs {
			if again[i] != frames[i] {
				t.Fatalf("%#x: %s, or %s when units are read in another order", addrs[i], again[i], frames[i])
			}
		}
	})
}

// fuzzDWARFInfo looks addrs up in ef's DWARF read as it is in the file
// (its relocations, if any, not applied), with its units gone over through
// .debug_info's bytes (dwarfInfo), as for a linked binary; ef's units'
// ranges are looked up too.
func fuzzDWARFInfo(t *testing.T, ef *elf.File, addrs []uint64) {
	d, info, err := elfDWARFUnrelocated(ef)
	if err != nil {
		return
	}
	l, err := newDWARFLines(d, info, false)
	if err != nil {
		return
	}
	for i, s := range l.spans {
		if i == 64 {
			break
		}
		addrs = append(addrs, s.lo, s.hi-1)
	}
	for _, a := range addrs {
		if fr := l.Lines(a); len(fr) > maxDWARFDepth {
			t.Fatalf("%d frames", len(fr))
		}
		l.OuterLine(a)
	}
}

// TestLazyLinesTimeout checks that a line source whose file hangs (a hung
// FUSE mount, say) gives no lines after lineLoadTimeout instead of
// hanging the lookup, and that it is loaded once.
func TestLazyLinesTimeout(t *testing.T) {
	old := lineLoadTimeout
	lineLoadTimeout = 50 * time.Millisecond
	t.Cleanup(func() { lineLoadTimeout = old })
	release := make(chan struct{})
	defer close(release)
	var calls atomic.Int32
	l := newLazyLines(func() (LineSource, error) {
		calls.Add(1)
		<-release
		return nil, nil
	})
	start := time.Now()
	if fr := l.Lines(0x10); fr != nil || l.Err() == nil {
		t.Fatalf("Lines = %v, err %v", fr, l.Err())
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("lookup took %v", el)
	}
	l.Lines(0x20)
	if n := calls.Load(); n != 1 {
		t.Fatalf("loaded %d times", n)
	}
}
