package images

import (
	"fmt"
	"sort"
)

// fakeMemory is a sparse address space for tests: regions of bytes at
// addresses; reads must fall inside one region.
type fakeMemory struct {
	regions []fakeRegion // sorted by addr
}

type fakeRegion struct {
	addr uint64
	data []byte
}

func (m *fakeMemory) Map(addr uint64, data []byte) {
	m.regions = append(m.regions, fakeRegion{addr, data})
	sort.Slice(m.regions, func(i, j int) bool { return m.regions[i].addr < m.regions[j].addr })
}

func (m *fakeMemory) ReadMemory(addr uint64, dst []byte) error {
	i := sort.Search(len(m.regions), func(i int) bool { return m.regions[i].addr > addr }) - 1
	if i >= 0 {
		r := m.regions[i]
		if off := addr - r.addr; off < uint64(len(r.data)) && uint64(len(dst)) <= uint64(len(r.data))-off {
			copy(dst, r.data[off:])
			return nil
		}
	}
	return fmt.Errorf("fake memory: %d bytes at %#x are not mapped", len(dst), addr)
}
