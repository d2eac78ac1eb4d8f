package images

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/macprof/macprof/internal/objfile/objfiletest"
	"github.com/macprof/macprof/internal/testprog"
)

// elfWithBuildID returns the path of a C test program (gcc links a
// .note.gnu.build-id into a PT_NOTE segment) and its bytes.
func elfWithBuildID(t *testing.T) (string, []byte) {
	t.Helper()
	bin := testprog.BuildC(t, "spinexit.c")
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	return bin, b
}

// writeTemp writes b to a new file in a test directory.
func writeTemp(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSegmentBuildIDAgreesWithSections reads the build IDs of a C program,
// libc and the dynamic loader from their segments in one read, and gets
// what debug/elf reads from their .note.gnu.build-id sections.
func TestSegmentBuildIDAgreesWithSections(t *testing.T) {
	bin, _ := elfWithBuildID(t)
	files := []string{bin}
	for _, p := range []string{"/lib/x86_64-linux-gnu/libc.so.6", "/lib/aarch64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1"} {
		if _, err := os.Stat(p); err == nil {
			files = append(files, p)
		}
	}
	if len(files) < 3 {
		t.Fatalf("no libc or dynamic loader found: only %v", files)
	}
	for _, p := range files {
		f, err := elf.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		s := f.Section(".note.gnu.build-id")
		if s == nil {
			t.Fatalf("%s: no .note.gnu.build-id section", p)
		}
		data, err := s.Data()
		f.Close()
		if err != nil || len(data) < 16 {
			t.Fatalf("%s: note %x, %v", p, data, err)
		}
		want := hex.EncodeToString(data[16:]) // name "GNU\0" after the 12-byte header
		file, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		id, ok := segmentBuildID(file)
		file.Close()
		if !ok || id != want {
			t.Errorf("%s: segmentBuildID = %q, %v; want %q from the section", p, id, ok, want)
		}
	}
}

// TestMappedELFBuildIDReadsNoSectionHeaders reads the build ID of files
// whose section headers are unusable: a sparse file whose sections claim
// gigabytes of holes and a file whose section header table lies past its
// end. The ID is in the notes of its segments, read without the sections,
// so both give it, with little allocated.
func TestMappedELFBuildIDReadsNoSectionHeaders(t *testing.T) {
	bin, b := elfWithBuildID(t)
	want, err := ELFBuildID(bin)
	if err != nil || want == "" {
		t.Fatalf("ELFBuildID(%s) = %q, %v", bin, want, err)
	}
	badTable := bytes.Clone(b)
	binary.LittleEndian.PutUint64(badTable[0x28:], uint64(len(b))+1<<20) // e_shoff
	for name, p := range map[string]string{
		"sparse":           objfiletest.SparseELF(t, bin),
		"no section table": writeTemp(t, "shoff", badTable),
	} {
		var id string
		var err error
		n := objfiletest.Allocated(func() { id, err = MappedELFBuildID(&Image{Path: p, Format: FormatELF}) })
		if err != nil || id != want {
			t.Errorf("%s: MappedELFBuildID = %q, %v; want %q", name, id, err, want)
		}
		if n > 64<<10 {
			t.Errorf("%s: MappedELFBuildID allocated %d bytes", name, n)
		}
	}
}

// TestBuildIDOutsideSegmentsIsReadFromSections reads a file whose PT_NOTE
// segment has been made PT_NULL: the build ID, no longer in a segment, is
// found in the .note.gnu.build-id section.
func TestBuildIDOutsideSegmentsIsReadFromSections(t *testing.T) {
	bin, b := elfWithBuildID(t)
	want, err := ELFBuildID(bin)
	if err != nil || want == "" {
		t.Fatalf("ELFBuildID(%s) = %q, %v", bin, want, err)
	}
	le := binary.LittleEndian
	phoff, entsize, num := le.Uint64(b[32:]), uint64(le.Uint16(b[54:])), uint64(le.Uint16(b[56:]))
	c := bytes.Clone(b)
	patched := 0
	for i := uint64(0); i < num; i++ {
		if ph := c[phoff+i*entsize:]; elf.ProgType(le.Uint32(ph)) == elf.PT_NOTE {
			le.PutUint32(ph, uint32(elf.PT_NULL))
			patched++
		}
	}
	if patched == 0 {
		t.Fatalf("%s: no PT_NOTE segment", bin)
	}
	p := writeTemp(t, "nonote", c)
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if id, ok := segmentBuildID(f); ok {
		t.Fatalf("segmentBuildID found %q with no PT_NOTE segment", id)
	}
	if id, err := MappedELFBuildID(&Image{Path: p, Format: FormatELF}); err != nil || id != want {
		t.Errorf("MappedELFBuildID = %q, %v; want %q from the section", id, err, want)
	}
}

// TestSegmentBuildIDOfBothClasses reads the build ID of a minimal 64-bit
// little-endian and 32-bit big-endian header, each with one PT_NOTE.
func TestSegmentBuildIDOfBothClasses(t *testing.T) {
	h64 := make([]byte, 140)
	copy(h64, "\x7fELF\x02\x01\x01")
	h64[32], h64[54], h64[56] = 64, 56, 1  // e_phoff, e_phentsize, e_phnum
	h64[64], h64[72], h64[96] = 4, 120, 20 // p_type PT_NOTE, p_offset, p_filesz
	copy(h64[120:], "\x04\x00\x00\x00\x04\x00\x00\x00\x03\x00\x00\x00GNU\x00\xde\xad\xbe\xef")
	h32 := make([]byte, 116)
	copy(h32, "\x7fELF\x01\x02\x01")
	h32[31], h32[43], h32[45] = 52, 32, 1 // e_phoff, e_phentsize, e_phnum
	h32[55], h32[59], h32[71] = 4, 96, 20 // p_type PT_NOTE, p_offset, p_filesz
	copy(h32[96:], "\x00\x00\x00\x04\x00\x00\x00\x04\x00\x00\x00\x03GNU\x00\xca\xfe\xba\xbe")
	for want, b := range map[string][]byte{"deadbeef": h64, "cafebabe": h32} {
		if id, ok := segmentBuildID(bytes.NewReader(b)); !ok || id != want {
			t.Errorf("segmentBuildID = %q, %v; want %q", id, ok, want)
		}
	}
}
