package images_test

import (
	"bytes"
	"testing"

	"github.com/macprof/macprof/images"
)

// FuzzDyldLocalSymbols parses arbitrary bytes as a dyld shared cache's
// .symbols file and reads every dylib's local symbols: nothing may panic,
// hang or allocate beyond what the file holds. Seeds in
// testdata/fuzz/FuzzDyldLocalSymbols: the synthetic cache's .symbols file
// (two dylibs, 64-bit entries), an old-format file (32-bit entries), a
// header alone, and a file whose entry points past the nlists.
func FuzzDyldLocalSymbols(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		if h, err := images.ReadDyldCacheHeader(r); err == nil && h.MappingOffset < 16 {
			t.Fatalf("header with mappingOffset %d accepted", h.MappingOffset)
		}
		l, err := images.OpenDyldLocalSymbols(r, int64(len(data)), [16]byte{})
		if err != nil {
			return
		}
		offs := l.DylibOffsets()
		if len(offs) > len(data)/12 {
			t.Fatalf("%d entries from %d bytes", len(offs), len(data))
		}
		for _, off := range offs {
			st, err := l.Symbols(off)
			if err != nil {
				continue
			}
			if st.Len()*16 > len(data) {
				t.Fatalf("%d nlists from %d bytes", st.Len(), len(data))
			}
			for i := 0; i < st.Len(); i++ {
				st.Name(st.Entry(i).Strx)
			}
		}
	})
}
