package images

import (
	"testing"
)

func img(path string, start, limit uint64) *Image {
	return &Image{Path: path, Start: start, Limit: limit, Format: FormatELF}
}

func TestSetLookupEdges(t *testing.T) {
	a := img("/a", 0x1000, 0x2000)
	b := img("/b", 0x2000, 0x3000) // adjacent to a
	c := img("/c", 0x5000, 0x6000)
	top := img("/top", ^uint64(0)-0x1000, ^uint64(0))
	s := NewSet([]*Image{c, top, nil, a, b}) // unsorted, with a nil
	if s.Len() != 4 {
		t.Fatalf("len %d", s.Len())
	}
	for i, im := range s.Images() {
		if i > 0 && s.Images()[i-1].Start >= im.Start {
			t.Errorf("images not sorted: %v", s.Images())
		}
	}
	for _, tc := range []struct {
		addr uint64
		want *Image
	}{
		{0, nil},
		{0xfff, nil},
		{0x1000, a},
		{0x1fff, a},
		{0x2000, b},
		{0x2fff, b},
		{0x3000, nil},
		{0x4fff, nil},
		{0x5000, c},
		{0x6000, nil},
		{^uint64(0) - 0x1000, top},
		{^uint64(0) - 1, top},
		{^uint64(0), nil}, // Limit is exclusive
	} {
		if got := s.Lookup(tc.addr); got != tc.want {
			t.Errorf("Lookup(%#x) = %v, want %v", tc.addr, got, tc.want)
		}
	}
	var nilSet *Set
	if nilSet.Lookup(0x1000) != nil || nilSet.Len() != 0 || nilSet.Images() != nil {
		t.Error("nil Set is not empty")
	}
	if NewSet(nil).Lookup(0) != nil {
		t.Error("empty Set found something")
	}
}

func TestSetOverlaps(t *testing.T) {
	first := img("/first", 0x1000, 0x3000)
	inside := img("/inside", 0x1800, 0x2000)     // wholly inside first: dropped
	straddle := img("/straddle", 0x2800, 0x4000) // starts inside first: dropped
	after := img("/after", 0x3000, 0x3800)
	sameStartA := img("/sameA", 0x8000, 0x9000)
	sameStartB := img("/sameB", 0x8000, 0xa000)
	empty := img("/empty", 0x5000, 0x5000)
	inverted := img("/inverted", 0x7000, 0x6000)
	s := NewSet([]*Image{straddle, inside, first, after, empty, inverted, sameStartA, sameStartB})
	var got []string
	for _, im := range s.Images() {
		got = append(got, im.Path)
	}
	want := []string{"/first", "/after", "/sameA"}
	if len(got) != len(want) {
		t.Fatalf("images %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("images %v, want %v (the earlier start wins; on equal starts, the first given)", got, want)
		}
	}
	// The dropped straddler's tail is not covered by anything.
	if im := s.Lookup(0x3900); im != nil {
		t.Errorf("Lookup(0x3900) = %v", im)
	}
	if s.Lookup(0x2900) != first || s.Lookup(0x9fff) != nil || s.Lookup(0x5000) != nil {
		t.Error("overlap lookups wrong")
	}
}

func TestImageHelpers(t *testing.T) {
	im := &Image{Path: "/usr/lib/libfoo.so.1", Start: 0x7000, Limit: 0x9000, Offset: 0x1000}
	if im.Name() != "libfoo.so.1" || !im.Contains(0x7000) || im.Contains(0x9000) || im.FileOffset(0x7010) != 0x1010 {
		t.Errorf("helpers wrong for %v", im)
	}
	if im.File() != im.Path || im.Key() != "path:/usr/lib/libfoo.so.1" {
		t.Errorf("File %q Key %q", im.File(), im.Key())
	}
	im.OpenPath = "/proc/1/root/usr/lib/libfoo.so.1"
	if im.File() != im.OpenPath || im.Key() != "path:"+im.OpenPath {
		t.Errorf("OpenPath ignored: %q %q", im.File(), im.Key())
	}
	im.BuildID = "abcd"
	if im.Key() != "id:abcd" {
		t.Errorf("Key with build ID = %q", im.Key())
	}
	if im.String() != "/usr/lib/libfoo.so.1 [0x7000-0x9000) off 0x1000" {
		t.Errorf("String = %q", im.String())
	}
	for f, s := range map[Format]string{FormatELF: "ELF", FormatMachO: "Mach-O", FormatUnknown: "unknown", 9: "unknown"} {
		if f.String() != s {
			t.Errorf("Format(%d) = %q", f, f.String())
		}
	}
}
