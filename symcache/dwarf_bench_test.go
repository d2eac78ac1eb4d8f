package symcache

import (
	"debug/elf"
	"math/rand"
	"slices"
	"testing"
)

// nodeBinary is an ELF with DWARF for a few of its units (node's libuv:
// 111 C units, 1% of its code), the shape bench/symbolize measures.
const nodeBinary = "/usr/bin/node"

// BenchmarkDWARFOuterLineNode reads node's DWARF for lines and answers
// bench/symbolize's 100,000 addresses (random in .text, seed 1) in
// address order, as `macprof symbolize` does: what node's DWARF costs a
// symbolize run ("read"), and the lookups alone ("lookup").
func BenchmarkDWARFOuterLineNode(b *testing.B) {
	f, err := elf.Open(nodeBinary)
	if err != nil {
		b.Skip(nodeBinary, " absent: ", err)
	}
	defer f.Close()
	text := f.Section(".text")
	rng := rand.New(rand.NewSource(1))
	addrs := make([]uint64, 100_000)
	for i := range addrs {
		addrs[i] = text.Addr + uint64(rng.Int63n(int64(text.Size)))
	}
	slices.Sort(addrs)
	// readAll reads f's DWARF and looks every address up.
	readAll := func(b *testing.B) *DWARFLines {
		d, info, err := elfDWARF(f)
		if err != nil {
			b.Fatal(err)
		}
		l, err := newDWARFLines(d, info, false)
		if err != nil {
			b.Fatal(err)
		}
		for _, a := range addrs {
			l.OuterLine(a)
		}
		return l
	}
	b.Run("read", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			readAll(b)
		}
	})
	// The lookups alone, every unit they read already indexed.
	b.Run("lookup", func(b *testing.B) {
		l := readAll(b)
		b.ReportAllocs()
		for b.Loop() {
			for _, a := range addrs {
				l.OuterLine(a)
			}
		}
	})
}
