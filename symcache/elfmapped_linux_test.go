package symcache

import (
	"slices"
	"testing"
)

// TestLoadELFMappedAsLoadELF checks that the Table LoadELFMapped builds
// with its names in the file's mapping is LoadELF's, symbol for symbol,
// on real objects (libc, python3, libpython, a C program).
func TestLoadELFMappedAsLoadELF(t *testing.T) {
	for _, path := range pcObjects(t) {
		img, full, _ := openPCObject(t, path)
		mapped, unmap, err := LoadELFMapped(img)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if mapped.Len() != full.Len() || !slices.Equal(mapped.ends, full.ends) || !slices.Equal(mapped.segments, full.segments) || mapped.HasLines() != full.HasLines() {
			t.Errorf("%s: %d functions, %d ends, lines %v; LoadELF: %d, %d, %v", path, mapped.Len(), len(mapped.ends), mapped.HasLines(), full.Len(), len(full.ends), full.HasLines())
		}
		named := 0
		for i := range min(mapped.Len(), full.Len()) {
			n, s := mapped.Symbol(i)
			wn, ws := full.Symbol(i)
			if n != wn || s != ws {
				t.Errorf("%s: function %d is %q at %#x; LoadELF: %q at %#x", path, i, n, s, wn, ws)
				break
			}
			if n != "" {
				named++
			}
		}
		if err := unmap(); err != nil {
			t.Errorf("%s: unmap: %v", path, err)
		}
		t.Logf("%s: %d functions, %d named", path, full.Len(), named)
	}
}
