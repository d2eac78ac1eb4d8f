package symcache

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand"
	"testing"

	"github.com/macprof/macprof/demangle"
	"github.com/macprof/macprof/images"
)

// synthMachO builds a 64-bit arm64 Mach-O dylib in memory with n functions
// of 16 bytes each in __text, one symbol per function (a tenth of them C++
// mangled) and LC_FUNCTION_STARTS for all: the input of the table-build
// benchmark. The text itself is zeros.
func synthMachO(n int) []byte {
	le := binary.LittleEndian
	const (
		textAddr = 0x4000
		cmdsSize = 72 + 80 + 72 + 24 + 16
	)
	textSize := uint64(n) * 16
	var strs bytes.Buffer
	strs.WriteString(" \x00")
	syms := make([]byte, 0, n*16)
	var starts []byte
	prev := uint64(textAddr)
	for i := 0; i < n; i++ {
		strx := uint32(strs.Len())
		if i%10 == 0 {
			mod := fmt.Sprintf("module%d", i)
			fmt.Fprintf(&strs, "__ZN3app%d%s4workEv\x00", len(mod), mod)
		} else {
			fmt.Fprintf(&strs, "_function_number_%d\x00", i)
		}
		var e [16]byte
		le.PutUint32(e[0:], strx)
		e[4] = 0x0f // N_SECT|N_EXT
		e[5] = 1
		addr := uint64(textAddr) + uint64(i)*16
		le.PutUint64(e[8:], addr)
		syms = append(syms, e[:]...)
		starts = binary.AppendUvarint(starts, addr-prev)
		prev = addr
	}
	starts = append(starts, 0)
	textEnd := (textAddr + textSize + 0x3fff) &^ 0x3fff
	linkOff := textEnd // __TEXT maps file offset 0 at vmaddr 0 (no __PAGEZERO in a dylib)
	symOff := linkOff
	strOff := symOff + uint64(len(syms))
	fsOff := strOff + uint64(strs.Len())
	linkSize := fsOff + uint64(len(starts)) - linkOff

	b := make([]byte, 32, fsOff+uint64(len(starts)))
	le.PutUint32(b[0:], 0xfeedfacf)
	le.PutUint32(b[4:], 0x0100000c)
	le.PutUint32(b[12:], 6)
	le.PutUint32(b[16:], 4)
	le.PutUint32(b[20:], cmdsSize)
	seg := func(name string, addr, size, off, fsize uint64, nsects uint32) {
		c := make([]byte, 72)
		le.PutUint32(c, 0x19)
		le.PutUint32(c[4:], 72+80*nsects)
		copy(c[8:], name)
		le.PutUint64(c[24:], addr)
		le.PutUint64(c[32:], size)
		le.PutUint64(c[40:], off)
		le.PutUint64(c[48:], fsize)
		le.PutUint32(c[64:], nsects)
		b = append(b, c...)
	}
	seg("__TEXT", 0, textEnd, 0, textEnd, 1)
	s := make([]byte, 80)
	copy(s, "__text")
	copy(s[16:], "__TEXT")
	le.PutUint64(s[32:], textAddr)
	le.PutUint64(s[40:], textSize)
	le.PutUint32(s[48:], textAddr)
	le.PutUint32(s[64:], 0x80000400)
	b = append(b, s...)
	seg("__LINKEDIT", linkOff, (linkSize+0x3fff)&^0x3fff, linkOff, linkSize, 0)
	c := make([]byte, 24)
	le.PutUint32(c, 0x2)
	le.PutUint32(c[4:], 24)
	le.PutUint32(c[8:], uint32(symOff))
	le.PutUint32(c[12:], uint32(n))
	le.PutUint32(c[16:], uint32(strOff))
	le.PutUint32(c[20:], uint32(strs.Len()))
	b = append(b, c...)
	c = make([]byte, 16)
	le.PutUint32(c, 0x26)
	le.PutUint32(c[4:], 16)
	le.PutUint32(c[8:], uint32(fsOff))
	le.PutUint32(c[12:], uint32(len(starts)))
	b = append(b, c...)
	b = b[:symOff]
	b = append(b, syms...)
	b = append(b, strs.Bytes()...)
	b = append(b, starts...)
	return b
}

func synthTable(tb testing.TB, n int) (*Table, []byte) {
	tb.Helper()
	data := synthMachO(n)
	m, err := images.ReadMachO(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		tb.Fatal(err)
	}
	t, err := MachOTable("synth.dylib", m, bytes.NewReader(data), int64(len(data)), nil)
	if err != nil {
		tb.Fatal(err)
	}
	return t, data
}

func TestSynthMachO(t *testing.T) {
	tab, _ := synthTable(t, 1000)
	if tab.Len() != 1001 { // 1000 functions and the end of __text
		t.Fatalf("table has %d starts", tab.Len())
	}
	name, start, ok := tab.Lookup(0x4000 + 20*16 + 5)
	if !ok || name != "_ZN3app8module204workEv" || start != 0x4000+20*16 {
		t.Errorf("lookup: %q %#x %v", name, start, ok)
	}
	if got := demangle.Name(name, demangle.Simplified); got != "app::module20::work()" {
		t.Errorf("demangled %q", got)
	}
}

// BenchmarkMachOTableBuild100k builds the Table of an image with 100,000
// function symbols and LC_FUNCTION_STARTS (reading, filtering, sorting).
func BenchmarkMachOTableBuild100k(b *testing.B) {
	data := synthMachO(100_000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		m, err := images.ReadMachO(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := MachOTable("synth.dylib", m, bytes.NewReader(data), int64(len(data)), nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTableLookupCold maps a random offset to its function in a
// 100,000-function table, with no frame cache (random addresses defeat the
// CPU caches too).
func BenchmarkTableLookupCold(b *testing.B) {
	tab, _ := synthTable(b, 100_000)
	rng := rand.New(rand.NewSource(1))
	offs := make([]uint64, 1<<16)
	for i := range offs {
		offs[i] = 0x4000 + uint64(rng.Intn(100_000*16))
	}
	b.ReportAllocs()
	i := 0
	var sink uint64
	for b.Loop() {
		off := offs[i&(len(offs)-1)]
		i++
		a, _ := tab.Address(off)
		_, start, _ := tab.Lookup(a)
		sink += start
	}
	_ = sink
}

// BenchmarkFrameCacheHit symbolizes frames already in the frame cache: the
// cost of every repeated frame at export time.
func BenchmarkFrameCacheHit(b *testing.B) {
	_, data := synthTable(b, 100_000)
	m, _ := images.ReadMachO(bytes.NewReader(data), int64(len(data)))
	img := &images.Image{Path: "/usr/lib/synth.dylib", BuildID: "0123456789abcdef0123456789abcdef", Format: images.FormatMachO,
		Start: 0x1_8000_0000, Limit: 0x1_8000_0000 + m.Text().Size}
	cache := New(Options{Loaders: map[images.Format]Loader{images.FormatMachO: func(*images.Image) (*Table, error) {
		return MachOTable("synth.dylib", m, bytes.NewReader(data), int64(len(data)), nil)
	}}})
	pcs := make([]uint64, 1024)
	rng := rand.New(rand.NewSource(1))
	for i := range pcs {
		pcs[i] = img.Start + 0x4000 + uint64(rng.Intn(100_000*16))
		cache.Symbolize(img, pcs[i], true)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		fr := cache.Symbolize(img, pcs[i&1023], true)
		i++
		if len(fr) == 0 {
			b.Fatal("no frame")
		}
	}
}

// TestFrameCacheHitAllocs proves the frame-cache hit path allocates
// nothing.
func TestFrameCacheHitAllocs(t *testing.T) {
	img, _ := openFixture(t, "prog_arm64", "")
	cache := New(Options{})
	pc := img.Start + 0x400
	want := cache.Symbolize(img, pc, true)
	if n := testing.AllocsPerRun(1000, func() {
		if fr := cache.Symbolize(img, pc, true); len(fr) != len(want) || fr[0] != want[0] {
			t.Fatal("cached frame changed")
		}
	}); n != 0 {
		t.Errorf("cache hit: %v allocs/op", n)
	}
	// An image without a build ID is keyed by path, still without
	// allocation.
	img2 := *img
	img2.BuildID = ""
	cache.Symbolize(&img2, pc, true)
	if n := testing.AllocsPerRun(1000, func() { cache.Symbolize(&img2, pc, true) }); n != 0 {
		t.Errorf("cache hit by path: %v allocs/op", n)
	}
}
