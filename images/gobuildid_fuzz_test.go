package images

import (
	"encoding/binary"
	"testing"
)

// The Go build ID readers take bytes from a target's files: any input
// gives an ID of printable bytes found in it, or "", without panicking.
func FuzzGoBuildID(f *testing.F) {
	f.Add([]byte("\x03\x00\x00\x00\x05\x00\x00\x00\x04\x00\x00\x00Go\x00\x00abcde\x00\x00\x00"))
	f.Add([]byte("\xff Go build ID: \"a/b/c/d\"\n \xff"))
	f.Add([]byte("\x04\x00\x00\x00\xff\xff\xff\xff\x04\x00\x00\x00Go\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, id := range []string{findGoBuildIDNote(b, binary.LittleEndian), findGoBuildIDNote(b, binary.BigEndian), goTextBuildID(b)} {
			if len(id) > len(b) || !printableID([]byte(id)) {
				t.Fatalf("ID %q from %q", id, b)
			}
		}
	})
}
