package images

import (
	"bytes"
	"testing"
)

// segmentBuildID reads the headers of a target's files: any bytes give an
// ID found in them (hex of at most the notes read), or none, without
// panicking or reading past the notes' bound.
func FuzzSegmentBuildID(f *testing.F) {
	// A 64-bit little-endian header with one PT_NOTE at offset 120
	// holding a 4-byte GNU build ID.
	h := make([]byte, 140)
	copy(h, "\x7fELF\x02\x01\x01")
	h[32] = 64  // e_phoff
	h[54] = 56  // e_phentsize
	h[56] = 1   // e_phnum
	h[64] = 4   // p_type PT_NOTE
	h[72] = 120 // p_offset
	h[96] = 20  // p_filesz
	copy(h[120:], "\x04\x00\x00\x00\x04\x00\x00\x00\x03\x00\x00\x00GNU\x00\xde\xad\xbe\xef")
	f.Add(h)
	f.Add(h[:60])
	f.Fuzz(func(t *testing.T, b []byte) {
		id, ok := segmentBuildID(bytes.NewReader(b))
		if !ok && id != "" || len(id) > 2*maxNoteBytes {
			t.Fatalf("segmentBuildID = %q, %v", id, ok)
		}
	})
}
