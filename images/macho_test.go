package images

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func machoFixture(name string) string { return filepath.Join("testdata", "macho", name) }

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(machoFixture(name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// otoolUUID returns the LC_UUID llvm-otool prints, lowercase without
// dashes.
func otoolUUID(t *testing.T, path string) string {
	t.Helper()
	otool := ""
	for _, n := range []string{"llvm-otool-14", "llvm-otool"} {
		if p, err := exec.LookPath(n); err == nil {
			otool = p
			break
		}
	}
	if otool == "" {
		t.Fatal("this test needs llvm-otool-14 on PATH (Debian: apt-get install llvm-14)")
	}
	args := []string{"-l", path}
	out, err := exec.Command(otool, args...).Output()
	if err != nil {
		t.Fatalf("llvm-otool %v: %v", args, err)
	}
	m := regexp.MustCompile(`uuid ([0-9A-F-]{36})`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no uuid in llvm-otool output for %s", path)
	}
	return strings.ToLower(strings.ReplaceAll(string(m[1]), "-", ""))
}

func TestOpenMachOFixtures(t *testing.T) {
	for _, c := range []struct {
		file, arch, want string
		dylib            bool
	}{
		{"prog_arm64", "", "arm64", false},
		{"prog_x86_64", "", "x86_64", false},
		{"prog_universal", "arm64", "arm64", false},
		{"prog_universal", "x86_64", "x86_64", false},
		{"libdemo_arm64.dylib", "", "arm64", true},
		{"libdemo_x86_64.dylib", "", "x86_64", true},
		{"prog_arm64_stripped", "", "arm64", false},
	} {
		f, err := OpenMachO(machoFixture(c.file), c.arch)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if f.Arch() != c.want {
			t.Errorf("%s %s: arch %s", c.file, c.arch, f.Arch())
		}
		// llvm-otool-14 ignores -arch for universal files: ask it about
		// the thin file the slice was made from.
		src := c.file
		if c.arch != "" {
			src = "prog_" + c.arch
		}
		if got, want := f.UUIDString(), otoolUUID(t, machoFixture(src)); got != want {
			t.Errorf("%s %s: UUID %s, llvm-otool %s", c.file, c.arch, got, want)
		}
		if (f.FileType == 6) != c.dylib {
			t.Errorf("%s: filetype %d", c.file, f.FileType)
		}
		text, le := f.Text(), f.Segment("__LINKEDIT")
		if text == nil || le == nil || text.Offset != 0 || f.Symtab == nil || f.FunctionStarts == nil {
			t.Fatalf("%s: __TEXT %+v __LINKEDIT %+v symtab %+v starts %+v", c.file, text, le, f.Symtab, f.FunctionStarts)
		}
		st, err := f.ReadSymbolTable(f.R, f.Size)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if st.Len() != int(f.Symtab.NSyms) {
			t.Errorf("%s: %d symbols, LC_SYMTAB says %d", c.file, st.Len(), f.Symtab.NSyms)
		}
		starts, err := f.ReadFunctionStarts(f.R, f.Size, nil)
		if err != nil || len(starts) == 0 {
			t.Errorf("%s: function starts %v, %v", c.file, starts, err)
		}
		for _, s := range starts {
			if s < text.Addr || s >= text.Addr+text.Size {
				t.Errorf("%s: function start %#x outside __TEXT", c.file, s)
			}
		}
		f.Close()
	}
}

func TestOpenMachOUniversal(t *testing.T) {
	path := machoFixture("prog_universal")
	arm, err := OpenMachO(path, "arm64")
	if err != nil {
		t.Fatal(err)
	}
	defer arm.Close()
	x86, err := OpenMachO(path, "x86_64")
	if err != nil {
		t.Fatal(err)
	}
	defer x86.Close()
	if arm.UUIDString() == x86.UUIDString() {
		t.Fatal("both slices have one UUID")
	}
	// The slices equal the thin files they were made from.
	for _, f := range []*MachOFile{arm, x86} {
		thin := readFixture(t, "prog_"+f.Arch())
		b := make([]byte, f.Size)
		if _, err := f.R.ReadAt(b, 0); err != nil || !bytes.Equal(b, thin) {
			t.Errorf("%s slice differs from prog_%s (%v)", f.Arch(), f.Arch(), err)
		}
	}
	byUUID, err := OpenMachOUUID(path, x86.UUIDString())
	if err != nil || byUUID.Arch() != "x86_64" {
		t.Fatalf("by UUID: %v %v", byUUID, err)
	}
	byUUID.Close()
	def, err := OpenMachO(path, "")
	if err != nil || !archMatches(def.Arch(), HostArch()) {
		t.Errorf("default slice %v (host %s): %v", def, HostArch(), err)
	}
	def.Close()
	_, err = OpenMachO(path, "arm64e")
	if err == nil || !strings.Contains(err.Error(), "x86_64, arm64") {
		t.Errorf("missing arch: err %v, want the slices listed", err)
	}
	_, err = OpenMachOUUID(path, "00112233445566778899aabbccddeeff")
	if err == nil {
		t.Error("unknown UUID: no error")
	}
	if _, err := OpenMachO(machoFixture("prog_arm64"), "x86_64"); err == nil {
		t.Error("thin arm64 file opened as x86_64")
	}
}

func TestMachO32BitRejected(t *testing.T) {
	hdr := make([]byte, 28+8)
	binary.LittleEndian.PutUint32(hdr, machoMagic32)
	binary.LittleEndian.PutUint32(hdr[4:], cpuTypeX86)
	if _, err := ParseMachO(hdr); !errors.Is(err, ErrMachO32) {
		t.Errorf("32-bit header: %v", err)
	}
	if _, err := NewMachOFile(bytes.NewReader(hdr), int64(len(hdr)), func(*MachO) bool { return true }, false, "any"); !errors.Is(err, ErrMachO32) {
		t.Errorf("32-bit file: %v", err)
	}
	// A universal file with only a 32-bit slice.
	fat := make([]byte, 4096+len(hdr))
	binary.BigEndian.PutUint32(fat, fatMagic)
	binary.BigEndian.PutUint32(fat[4:], 1)
	binary.BigEndian.PutUint32(fat[8:], cpuTypeX86)
	binary.BigEndian.PutUint32(fat[16:], 4096)
	binary.BigEndian.PutUint32(fat[20:], uint32(len(hdr)))
	copy(fat[4096:], hdr)
	_, err := NewMachOFile(bytes.NewReader(fat), int64(len(fat)), func(*MachO) bool { return true }, false, "any")
	if err == nil || !strings.Contains(err.Error(), "no 64-bit slice") || !strings.Contains(err.Error(), "i386") {
		t.Errorf("fat 32-bit only: %v", err)
	}
}

// loadCommand returns the offset in b of the first load command cmd.
func loadCommand(t testing.TB, b []byte, cmd uint32) int {
	t.Helper()
	le := binary.LittleEndian
	off := machoHeaderSize
	for i := 0; i < int(le.Uint32(b[16:])); i++ {
		if le.Uint32(b[off:]) == cmd {
			return off
		}
		off += int(le.Uint32(b[off+4:]))
	}
	t.Fatalf("no load command %#x", cmd)
	return 0
}

// HostileMachO is a fixture Mach-O with one field made hostile, what the
// error of ReadMachO, or of ReadSymbolTable, must contain, and the Off and
// Val of its FormatError. It is exported for the in-memory half of the
// test (package images_test).
type HostileMachO struct {
	Name string
	Data []byte
	Want string
	Off  uint64
	Val  any
}

// HostileMachOs returns libdemo_arm64.dylib with each hostile change.
func HostileMachOs(t testing.TB) []HostileMachO {
	t.Helper()
	orig := readFixture(t, "libdemo_arm64.dylib")
	le := binary.LittleEndian
	cases := []struct {
		name string
		// mutate changes b and returns the FormatError's Off and Val.
		mutate func(b []byte) (uint64, any)
		want   string // in the error of ReadMachO, or of ReadSymbolTable
	}{
		{"cmdsize 0", func(b []byte) (uint64, any) {
			le.PutUint32(b[machoHeaderSize+4:], 0)
			return machoHeaderSize, uint32(0)
		}, "cmdsize 0 is less than 8"},
		{"cmdsize past end", func(b []byte) (uint64, any) {
			le.PutUint32(b[machoHeaderSize+4:], 1<<20)
			return machoHeaderSize, uint32(1 << 20)
		}, "runs past sizeofcmds"},
		{"sizeofcmds past end", func(b []byte) (uint64, any) {
			le.PutUint32(b[20:], uint32(len(b)))
			return 0, uint32(len(b))
		}, "runs past the end"},
		{"sizeofcmds huge", func(b []byte) (uint64, any) {
			le.PutUint32(b[20:], 0xfffffff0)
			return 0, uint32(0xfffffff0)
		}, "exceeds the limit"},
		{"ncmds huge", func(b []byte) (uint64, any) {
			le.PutUint32(b[16:], 0xffffffff)
			return 0, uint32(0xffffffff)
		}, "cannot fit"},
		{"nsects huge", func(b []byte) (uint64, any) {
			off := loadCommand(t, b, lcSegment64)
			le.PutUint32(b[off+64:], 0x7fffffff)
			return uint64(off), uint32(0x7fffffff)
		}, "sections do not fit"},
		{"nsyms near 2^32", func(b []byte) (uint64, any) {
			off := loadCommand(t, b, lcSymtab)
			le.PutUint32(b[off+12:], 0xfffffff0)
			return uint64(le.Uint32(b[off+8:])), uint32(0xfffffff0) // symoff
		}, "run past the end"},
		{"string table out of range", func(b []byte) (uint64, any) {
			off := loadCommand(t, b, lcSymtab)
			le.PutUint32(b[off+16:], 0xffff0000)
			return 0xffff0000, le.Uint32(b[off+20:]) // strsize
		}, "string table"},
		{"overlapping segments", func(b []byte) (uint64, any) {
			off := loadCommand(t, b, lcSegment64)
			first := le.Uint64(b[off+24:])
			off += int(le.Uint32(b[off+4:]))
			le.PutUint64(b[off+24:], first+16) // second segment inside the first
			return 0, cstring(b[off+8 : off+24])
		}, "overlap"},
		{"vmaddr overflow", func(b []byte) (uint64, any) {
			off := loadCommand(t, b, lcSegment64)
			le.PutUint64(b[off+24:], ^uint64(0)-8)
			return uint64(off), le.Uint64(b[off+32:]) // vmsize
		}, "overflows"},
		{"function starts out of range", func(b []byte) (uint64, any) {
			off := loadCommand(t, b, lcFunctionStarts)
			le.PutUint32(b[off+8:], 0xfffffff0)
			return 0xfffffff0, le.Uint32(b[off+12:]) // datasize
		}, "LC_FUNCTION_STARTS"},
	}
	out := make([]HostileMachO, len(cases))
	for i, c := range cases {
		b := bytes.Clone(orig)
		off, val := c.mutate(b)
		out[i] = HostileMachO{Name: c.name, Data: b, Want: c.want, Off: off, Val: val}
	}
	return out
}

// TestMachOHostile reads each hostile Mach-O as a file: the error is a
// FormatError at the offset of the bad structure, holding the bad value.
// TestMachOHostileInMemory reads them from memory.
func TestMachOHostile(t *testing.T) {
	for _, c := range HostileMachOs(t) {
		b := c.Data
		var err error
		m, err := ReadMachO(bytes.NewReader(b), int64(len(b)))
		if err == nil {
			_, err = m.ReadSymbolTable(bytes.NewReader(b), int64(len(b)))
		}
		if err == nil {
			_, err = m.ReadFunctionStarts(bytes.NewReader(b), int64(len(b)), nil)
		}
		if err == nil || !strings.Contains(err.Error(), c.Want) {
			t.Errorf("%s: error %v, want one containing %q", c.Name, err, c.Want)
		}
		var fe *FormatError
		if !errors.As(err, &fe) {
			t.Errorf("%s: error %v (%T) is not a *FormatError", c.Name, err, err)
			continue
		}
		if fe.Off != c.Off || fe.Val != c.Val {
			t.Errorf("%s: FormatError{Off: %#x, Val: %#v}, want {Off: %#x, Val: %#v}", c.Name, fe.Off, fe.Val, c.Off, c.Val)
		}
		if want := fmt.Sprintf("at offset %#x", c.Off); !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%s: error %q does not end with %q", c.Name, err, want)
		}
	}
}

// TestMachOReadErrorIsNotFormatError: a read that fails is returned as it
// is, not as a malformed file.
func TestMachOReadErrorIsNotFormatError(t *testing.T) {
	b := readFixture(t, "libdemo_arm64.dylib")
	r := &failingReader{b: b, after: machoHeaderSize, err: errors.New("disk on fire")}
	_, err := ReadMachO(r, int64(len(b)))
	var fe *FormatError
	if err == nil || errors.As(err, &fe) || !errors.Is(err, r.err) {
		t.Errorf("ReadMachO with a failing read: %v, want the read's error, not a *FormatError", err)
	}
}

// failingReader reads b up to after, and fails past it.
type failingReader struct {
	b     []byte
	after int64
	err   error
}

func (r *failingReader) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > r.after {
		return 0, r.err
	}
	return copy(p, r.b[off:]), nil
}

func TestDecodeFunctionStarts(t *testing.T) {
	got, err := DecodeFunctionStarts([]byte{0x80, 0x01, 0x10, 0x00, 0x55}, 0x1000, 0x2000, nil)
	if err != nil || len(got) != 2 || got[0] != 0x1080 || got[1] != 0x1090 {
		t.Errorf("got %#x, %v", got, err)
	}
	var fe *FormatError
	if _, err := DecodeFunctionStarts([]byte{0x10, 0x80}, 0x1000, 0x2000, nil); !errors.As(err, &fe) || fe.Off != 1 {
		t.Errorf("truncated ULEB128: %v, want a FormatError at offset 1", err)
	}
	if _, err := DecodeFunctionStarts(bytes.Repeat([]byte{0xff}, 11), 0, 1<<62, nil); err == nil {
		t.Error("overlong ULEB128: no error")
	}
	if _, err := DecodeFunctionStarts([]byte{0x80, 0x40}, 0x1000, 0x2000, nil); err == nil {
		t.Error("start past __TEXT: no error")
	}
}
