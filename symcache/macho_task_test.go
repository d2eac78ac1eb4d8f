package symcache

import (
	"encoding/binary"
	"fmt"
	"os"
	"sort"
	"testing"

	"github.com/macprof/macprof/images"
)

// taskMemory is a sparse fake address space: regions of bytes at addresses.
type taskMemory struct {
	regions []taskRegion
	reads   int
}

type taskRegion struct {
	addr uint64
	data []byte
}

func (m *taskMemory) Map(addr uint64, data []byte) {
	m.regions = append(m.regions, taskRegion{addr, data})
	sort.Slice(m.regions, func(i, j int) bool { return m.regions[i].addr < m.regions[j].addr })
}

func (m *taskMemory) ReadMemory(addr uint64, dst []byte) error {
	m.reads++
	i := sort.Search(len(m.regions), func(i int) bool { return m.regions[i].addr > addr }) - 1
	if i >= 0 {
		r := m.regions[i]
		if off := addr - r.addr; off < uint64(len(r.data)) && uint64(len(dst)) <= uint64(len(r.data))-off {
			copy(dst, r.data[off:])
			return nil
		}
	}
	return fmt.Errorf("task memory: %d bytes at %#x are not mapped", len(dst), addr)
}

// TestSyntheticTask lays real Mach-O images out at slid addresses in a fake
// address space, with a dyld_all_image_infos and image array describing
// them, and symbolizes every __text address through the memory reader
// only (the image paths do not exist on disk), the path the darwin backend
// takes. Names must agree with llvm-symbolizer on the files.
func TestSyntheticTask(t *testing.T) {
	files := []string{"prog_arm64", "libdemo_arm64.dylib", "cxx_x86_64", "objc_arm64", "prog_x86_64_stripped", "libdemo_x86_64.dylib"}
	mem := &taskMemory{}
	le := binary.LittleEndian
	const (
		infosAddr = 0x7ff800000
		arrayAddr = 0x7ff810000
		strsAddr  = 0x7ff820000
	)
	var array, strs []byte
	var loads, slides []uint64
	var machos []*images.MachO
	for i, name := range files {
		b, err := os.ReadFile(fixture(name))
		if err != nil {
			t.Fatal(err)
		}
		f, err := images.OpenMachO(fixture(name), "")
		if err != nil {
			t.Fatal(err)
		}
		slide := uint64(i+1)<<36 + uint64(i)*0x4000 // page-aligned, distinct
		for _, s := range f.Segments {
			if s.FileSize > 0 {
				mem.Map(s.Addr+slide, b[s.Offset:s.Offset+s.FileSize])
			}
		}
		load := f.Text().Addr + slide
		loads, slides, machos = append(loads, load), append(slides, slide), append(machos, f.MachO)
		f.Close()
		var e [images.DyldImageInfoSize]byte
		le.PutUint64(e[:], load)
		le.PutUint64(e[8:], strsAddr+uint64(len(strs)))
		array = append(array, e[:]...)
		strs = append(strs, "/nonexistent/"+name+"\x00"...)
	}
	infos := make([]byte, images.DyldAllImageInfosSize)
	le.PutUint32(infos, 15)
	le.PutUint32(infos[4:], uint32(len(files)))
	le.PutUint64(infos[8:], arrayAddr)
	mem.Map(infosAddr, infos)
	mem.Map(arrayAddr, array)
	mem.Map(strsAddr, strs)

	imgs, _, err := images.DyldImages(mem, infosAddr, 0)
	if err != nil || len(imgs) != len(files) {
		t.Fatalf("DyldImages: %d images, %v", len(imgs), err)
	}
	set := images.NewSet(imgs)
	cache := New(Options{})
	total := 0
	for i, name := range files {
		m := machos[i]
		arch := m.Arch()
		addrs := textAddrs(t, m, step(arch))
		want := llvmSymbolize(t, fixture(name), "", addrs, false)
		bad := 0
		for k, a := range addrs {
			pc := a + slides[i]
			img := set.Lookup(pc)
			if img == nil || img.LoadAddress != loads[i] {
				t.Fatalf("%s: %#x not in its image (%v)", name, pc, img)
			}
			fr := cache.Symbolize(img, pc, false)
			got := fr[len(fr)-1]
			w := ""
			// llvm-symbolizer names a stripped function after
			// _mh_execute_header (the trap this design avoids):
			// macprof must name it image+0xOFFSET instead.
			if len(want[k]) > 0 && want[k][0].FunctionName != "??" && want[k][0].FunctionName != "_mh_execute_header" {
				w = want[k][0].FunctionName
			}
			if got.Function != w || got.Image != name {
				if bad++; bad <= 5 {
					t.Errorf("%s %#x (link %#x): got %+v, llvm-symbolizer %q", name, pc, a, got, w)
				}
			}
			if w == "" && got.Name() != fmt.Sprintf("%s+0x%x", name, pc-img.Start) {
				t.Fatalf("%s: anonymous frame named %q", name, got.Name())
			}
		}
		total += len(addrs)
		if bad > 0 {
			t.Errorf("%s: %d of %d addresses disagree", name, bad, len(addrs))
		}
	}
	if total < 10000 {
		t.Errorf("only %d addresses", total)
	}
	t.Logf("%d addresses symbolized from memory, %d memory reads", total, mem.reads)
}

// TestMemoryImageUsesDSYM checks that an image read from memory still takes
// file:line from the dSYM beside its file when the UUIDs match.
func TestMemoryImageUsesDSYM(t *testing.T) {
	b, err := os.ReadFile(fixture("prog_arm64"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := images.OpenMachO(fixture("prog_arm64"), "")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const slide = 0x7c000
	mem := &taskMemory{}
	for _, s := range f.Segments {
		if s.FileSize > 0 {
			mem.Map(s.Addr+slide, b[s.Offset:s.Offset+s.FileSize])
		}
	}
	img, err := images.MachOImageFromMemory(mem, f.Text().Addr+slide, fixture("prog_arm64"))
	if err != nil {
		t.Fatal(err)
	}
	fr := New(Options{}).Symbolize(img, 0x100000400+slide, false)
	if len(fr) != 1 || fr[0].Function != "leaf" || fr[0].Line != 18 || fr[0].File != "/fixtures/src/prog.c" {
		t.Errorf("frames %+v, want leaf at /fixtures/src/prog.c:18", fr)
	}
}
