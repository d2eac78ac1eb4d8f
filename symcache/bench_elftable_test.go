package symcache

import (
	"debug/elf"
	"math/rand"
	"os"
	"slices"
	"testing"

	"github.com/macprof/macprof/images"
)

// BenchmarkELFNamesSortedNode looks up bench/symbolize's 100,000
// addresses (random in node's .text, seed 1) in address order in node's
// table read in place, and reads the name of each function met, once, as
// `macprof symbolize` does, from a fresh mapping and with the CPU caches
// emptied of it: most of the time is the misses on node's 7.5 MB string
// table.
func BenchmarkELFNamesSortedNode(b *testing.B) {
	f, err := elf.Open(nodeBinary)
	if err != nil {
		b.Skip(nodeBinary, " absent: ", err)
	}
	text := f.Section(".text")
	f.Close()
	rng := rand.New(rand.NewSource(1))
	addrs := make([]uint64, 100_000)
	for i := range addrs {
		addrs[i] = text.Addr + uint64(rng.Int63n(int64(text.Size)))
	}
	slices.Sort(addrs)
	sweep := make([]byte, 64<<20)
	var sink int
	for b.Loop() {
		b.StopTimer()
		t, unmap, err := LoadELFMapped(&images.Image{Path: nodeBinary, Format: images.FormatELF})
		if err != nil {
			b.Fatal(err)
		}
		for i := range sweep {
			sweep[i]++
		}
		seen := make([]bool, t.Len())
		b.StartTimer()
		near := -1
		for _, a := range addrs {
			i := t.LookupIndexNear(a, near)
			if i < 0 {
				continue
			}
			near = i
			if !seen[i] {
				seen[i] = true
				name, _ := t.Symbol(i)
				for j := 0; j < len(name); j += 16 {
					sink += int(name[j])
				}
			}
		}
		b.StopTimer()
		unmap()
		b.StartTimer()
	}
	_ = sink
}

// BenchmarkELFTableMappedNode builds node's table in place (LoadELFMapped:
// 185,000 .symtab and .dynsym entries, 78,000 function starts), the file
// in the page cache.
func BenchmarkELFTableMappedNode(b *testing.B) {
	if _, err := os.Stat(nodeBinary); err != nil {
		b.Skip(nodeBinary, " absent: ", err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_, unmap, err := LoadELFMapped(&images.Image{Path: nodeBinary, Format: images.FormatELF})
		if err != nil {
			b.Fatal(err)
		}
		unmap()
	}
}
