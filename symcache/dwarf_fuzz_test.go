package symcache

import (
	"bytes"
	"debug/elf"
	"sync/atomic"
	"testing"
	"time"
)

// FuzzDWARFLines feeds ELF files with DWARF to NewDWARFLines and looks up
// addresses: hostile line programs and trees must not panic, hang or grow
// without bound. The committed seed (testdata/fuzz/FuzzDWARFLines) is a
// gcc -O2 -g object file of inlineC, which has inlined functions.
func FuzzDWARFLines(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, addr uint64) {
		ef, err := elf.NewFile(bytes.NewReader(data))
		if err != nil {
			return
		}
		d, err := ef.DWARF()
		if err != nil {
			return
		}
		l, err := NewDWARFLines(d)
		if err != nil {
			return
		}
		for _, a := range []uint64{addr, 0, 0x10, 0x40, 0x100} {
			if fr := l.Lines(a); len(fr) > maxDWARFDepth {
				t.Fatalf("%d frames", len(fr))
			}
		}
	})
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
