package symcache

import (
	"github.com/macprof/macprof/images"
)

// MachOTableInPlace is MachOTable with data, the image's bytes, read in
// place as LoadMachOMapped reads a mapped file, a Go binary's lines
// included.
func MachOTableInPlace(object string, m *images.MachO, data []byte) (*Table, error) {
	image := machOBytes(data)
	t, _, err := machOTable(object, m, machOInPlace(m, image), nil)
	if err == nil && t.lines == nil {
		if l, err := machOGoLines(m, image, int64(len(data))); err == nil {
			t.lines = l
		}
	}
	return t, err
}
