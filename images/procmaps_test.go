package images

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

const sampleMaps = `55e3c0a00000-55e3c0a02000 r--p 00000000 fe:00 247278                     /usr/bin/cat
55e3c0a02000-55e3c0a07000 r-xp 00002000 fe:00 247278                     /usr/bin/cat
55e3c0a0c000-55e3c0a2d000 rw-p 00000000 00:00 0                          [heap]
7f1a2b400000-7f1a2b428000 r--p 00000000 fe:00 262211                     /usr/lib/x86_64-linux-gnu/libc.so.6
7f1a2b428000-7f1a2b5bd000 r-xp 00028000 fe:00 262211                     /usr/lib/x86_64-linux-gnu/libc.so.6
7f1a2b700000-7f1a2b701000 r-xp 00000000 fe:00 99                         /tmp/my lib (deleted)
7f1a2b800000-7f1a2b900000 rw-p 00000000 00:00 0 
7f1a2b900000-7f1a2ba00000 rw-p 00000000 00:00 0
7ffd5c9e0000-7ffd5ca01000 rw-p 00000000 00:00 0                          [stack]
7ffd5cbd3000-7ffd5cbd7000 r--p 00000000 00:00 0                          [vvar]
7ffd5cbd7000-7ffd5cbd9000 r-xp 00000000 00:00 0                          [vdso]
ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]
`

func TestParseProcMapsSample(t *testing.T) {
	rs, err := ParseProcMaps(strings.NewReader(sampleMaps))
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 12 {
		t.Fatalf("%d regions, want 12", len(rs))
	}
	want := Region{Start: 0x55e3c0a02000, End: 0x55e3c0a07000, Perms: "r-xp", Offset: 0x2000, Dev: 0xfe00, Inode: 247278, Path: "/usr/bin/cat"}
	if rs[1] != want {
		t.Errorf("region 1 = %+v\nwant %+v", rs[1], want)
	}
	if rs[5].Path != "/tmp/my lib (deleted)" {
		t.Errorf("path with spaces = %q", rs[5].Path)
	}
	if rs[6].Path != "" || rs[7].Path != "" {
		t.Errorf("anonymous paths = %q %q", rs[6].Path, rs[7].Path)
	}
	if rs[11].Start != 0xffffffffff600000 || !rs[11].Executable() || rs[0].Executable() {
		t.Errorf("vsyscall %+v, exec flags wrong", rs[11])
	}

	// Find: every boundary.
	for _, tc := range []struct {
		addr  uint64
		found bool
		start uint64
	}{
		{0, false, 0},
		{0x55e3c0a00000 - 1, false, 0},
		{0x55e3c0a00000, true, 0x55e3c0a00000},
		{0x55e3c0a01fff, true, 0x55e3c0a00000},
		{0x55e3c0a02000, true, 0x55e3c0a02000},
		{0x55e3c0a07000, false, 0}, // gap before [heap]
		{0x7f1a2b8fffff, true, 0x7f1a2b800000},
		{0x7f1a2b900000, true, 0x7f1a2b900000},
		{0x7ffd5ca00ff8, true, 0x7ffd5c9e0000},
		{0xffffffffff600fff, true, 0xffffffffff600000},
		{0xffffffffff601000, false, 0},
		{^uint64(0), false, 0},
	} {
		r, ok := rs.Find(tc.addr)
		if ok != tc.found || (ok && r.Start != tc.start) {
			t.Errorf("Find(%#x) = %#x %v, want %#x %v", tc.addr, r.Start, ok, tc.start, tc.found)
		}
	}
	if _, ok := Regions(nil).Find(5); ok {
		t.Error("Find in no regions")
	}

	// StackBounds: the region holding SP, wherever it is (not by label).
	if lo, hi, ok := rs.StackBounds(0x7ffd5ca00100); !ok || lo != 0x7ffd5c9e0000 || hi != 0x7ffd5ca01000 {
		t.Errorf("StackBounds([stack]) = %#x %#x %v", lo, hi, ok)
	}
	if lo, hi, ok := rs.StackBounds(0x7f1a2b850000); !ok || lo != 0x7f1a2b800000 || hi != 0x7f1a2b900000 {
		t.Errorf("StackBounds(anonymous mapping) = %#x %#x %v", lo, hi, ok)
	}
	if _, _, ok := rs.StackBounds(0x1000); ok {
		t.Error("StackBounds outside every region")
	}

	// ELFImages: executable, file-backed (and the vDSO); deleted suffix trimmed.
	imgs := rs.ELFImages()
	var got []string
	for _, im := range imgs {
		if im.Format != FormatELF {
			t.Errorf("%v: format %v", im, im.Format)
		}
		got = append(got, fmt.Sprintf("%s@%#x+%#x", im.Path, im.Start, im.Offset))
	}
	wantImgs := []string{
		"/usr/bin/cat@0x55e3c0a02000+0x2000",
		"/usr/lib/x86_64-linux-gnu/libc.so.6@0x7f1a2b428000+0x28000",
		"/tmp/my lib@0x7f1a2b700000+0x0",
		"[vdso]@0x7ffd5cbd7000+0x0",
	}
	if !reflect.DeepEqual(got, wantImgs) {
		t.Errorf("ELFImages = %q\nwant %q", got, wantImgs)
	}
	// The images index cleanly.
	s := NewSet(imgs)
	if im := s.Lookup(0x7f1a2b428000 + 0x100); im == nil || im.Name() != "libc.so.6" || im.FileOffset(0x7f1a2b428100) != 0x28100 {
		t.Errorf("Lookup in libc = %v", im)
	}
}

func TestParseProcMapsHostile(t *testing.T) {
	for _, tc := range []struct {
		name, in, err string
	}{
		{"too few fields", "1000-2000 r-xp 0 00:00\n", "too few fields"},
		{"empty line", "\n", "too few fields"},
		{"no dash", "10002000 r-xp 0 00:00 0\n", "bad address range"},
		{"bad start", "zz-2000 r-xp 0 00:00 0\n", "bad start address"},
		{"bad end", "1000-zz r-xp 0 00:00 0\n", "bad end address"},
		{"start overflow", "10000000000000000-2000 r-xp 0 00:00 0\n", "bad start address"},
		{"end before start", "2000-1000 r-xp 0 00:00 0\n", "before start"},
		{"bad offset", "1000-2000 r-xp xyz 00:00 0\n", "bad offset"},
		{"bad inode", "1000-2000 r-xp 0 00:00 -1\n", "bad inode"},
		{"second line bad", "1000-2000 r-xp 0 00:00 0 /a\nnonsense\n", "maps line 2"},
		{"line too long", "1000-2000 r-xp 0 00:00 0 /" + strings.Repeat("a", 2<<20) + "\n", "token too long"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs, err := ParseProcMaps(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err = %v, want %q", err, tc.err)
			}
			for _, r := range rs {
				if r.End < r.Start {
					t.Errorf("returned a bad region %+v", r)
				}
			}
		})
	}
	// Lines the kernel may produce that still parse.
	for _, in := range []string{
		"1000-2000 r-xp 0 00:00 0",                  // no newline at EOF, no path
		"1000-1000 ---p 0 00:00 0 \n",               // empty range
		"1000-2000 r-xp 0 00:00 0       /a b  c \n", // spaces inside and after the path
		"ffffffffffffe000-ffffffffffffffff r-xp ffffffffffffffff 00:00 18446744073709551615 /x\n",
		"",
	} {
		if _, err := ParseProcMaps(strings.NewReader(in)); err != nil {
			t.Errorf("ParseProcMaps(%q): %v", in, err)
		}
	}
	rs, _ := ParseProcMaps(strings.NewReader("1000-2000 r-xp 0 00:00 0       /a b  c \n"))
	if rs[0].Path != "/a b  c " {
		t.Errorf("path = %q", rs[0].Path)
	}
	// The line bound: a map of more than maxMapsLines lines is refused.
	var big bytes.Buffer
	for i := 0; i <= maxMapsLines; i++ {
		big.WriteString("0-1 r 0 0:0 0\n")
	}
	if rs, err := ParseProcMaps(&big); err == nil || !strings.Contains(err.Error(), "more than") || len(rs) != maxMapsLines {
		t.Errorf("huge map: %d regions, err %v", len(rs), err)
	}
}

// TestParseProcMapsSelf parses this process's real map and finds in it the
// test binary's code and the memory of a goroutine stack.
func TestParseProcMapsSelf(t *testing.T) {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		t.Fatalf("this test needs Linux /proc: %v", err)
	}
	defer f.Close()
	rs, err := ParseProcMaps(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) < 5 {
		t.Fatalf("only %d regions", len(rs))
	}
	for i := 1; i < len(rs); i++ {
		if rs[i].Start < rs[i-1].End {
			t.Errorf("regions %d and %d overlap or are unsorted: %+v %+v", i-1, i, rs[i-1], rs[i])
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pc := uint64(reflect.ValueOf(TestParseProcMapsSelf).Pointer())
	r, ok := rs.Find(pc)
	if !ok || !r.Executable() || r.Path != exe {
		t.Errorf("code at %#x: region %+v %v, want executable %s", pc, r, ok, exe)
	}
	var local [64]byte
	sp := uint64(uintptr(unsafe.Pointer(&local[0])))
	lo, hi, ok := rs.StackBounds(sp)
	if !ok || sp < lo || sp >= hi {
		t.Errorf("goroutine stack at %#x not inside bounds %#x-%#x (%v)", sp, lo, hi, ok)
	}
	found := false
	for _, im := range rs.ELFImages() {
		if im.Contains(pc) {
			found = im.Path == exe
		}
	}
	if !found {
		t.Errorf("ELFImages has no image of %s containing %#x", exe, pc)
	}
}

// FuzzProcMaps: any input parses or fails without panicking, every region
// returned is well formed, and formatting a region and parsing it again
// gives it back.
func FuzzProcMaps(f *testing.F) {
	f.Add([]byte(sampleMaps))
	f.Add([]byte("1000-2000 r-xp 0 00:00 0"))
	f.Add([]byte("2000-1000 r-xp 0 00:00 0\n"))
	f.Add([]byte("1000-2000  r-xp   0  00:00  0   /path with  spaces (deleted)\n"))
	f.Add([]byte("ffffffffffffe000-ffffffffffffffff --xp ffffffffffffffff 00:00 18446744073709551615 [vsyscall]\n"))
	f.Add([]byte("\x00-\x00 \x00 \x00 \x00 \x00\n\n"))
	f.Add([]byte("0-0 p 0 1000:0 0\n")) // a major of 13 bits: its high bits must not read as the minor's
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, err := ParseProcMaps(bytes.NewReader(data))
		for _, r := range rs {
			if r.End < r.Start {
				t.Fatalf("region ends before it starts: %+v", r)
			}
			if r.Perms == "" || strings.ContainsAny(r.Perms, " \n") {
				t.Fatalf("bad perms %q", r.Perms)
			}
			if strings.HasPrefix(r.Path, " ") || strings.Contains(r.Path, "\n") {
				t.Fatalf("bad path %q", r.Path)
			}
			// glibc's major() and minor(): each takes only its own bits.
			major, minor := r.Dev>>8&0xfff|r.Dev>>32&0xfffff000, r.Dev&0xff|r.Dev>>12&0xffffff00
			line := fmt.Sprintf("%x-%x %s %x %x:%x %d %s\n", r.Start, r.End, r.Perms, r.Offset, major, minor, r.Inode, r.Path)
			again, err := ParseProcMaps(strings.NewReader(line))
			want := r
			// bufio.ScanLines drops a carriage return before the newline,
			// so a path ending in "\r" loses it on the way back.
			want.Path = strings.TrimSuffix(want.Path, "\r")
			if err != nil || len(again) != 1 || again[0] != want {
				t.Fatalf("round trip of %+v: %+v %v", r, again, err)
			}
		}
		_ = err
		// Lookups on whatever was parsed never panic.
		for _, a := range []uint64{0, 1, 0x1000, ^uint64(0)} {
			rs.Find(a)
			rs.StackBounds(a)
		}
		NewSet(rs.ELFImages()).Lookup(0x1000)
	})
}
