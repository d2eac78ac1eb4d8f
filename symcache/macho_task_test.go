package symcache_test

import (
	"fmt"
	"testing"

	"github.com/macprof/macprof/demangle"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/fixture"
	"github.com/macprof/macprof/symcache"
)

// TestSyntheticTask lays real Mach-O images out at slid addresses in a fake
// address space, with a dyld_all_image_infos and image array describing
// them, and symbolizes every __text address through the memory reader
// only (the image paths do not exist on disk), the path the darwin backend
// takes. Names must agree with llvm-symbolizer on the files.
func TestSyntheticTask(t *testing.T) {
	files := []string{"prog_arm64", "libdemo_arm64.dylib", "cxx_x86_64", "objc_arm64", "prog_x86_64_stripped", "libdemo_x86_64.dylib"}
	imgs := make([]fixture.TaskImage, len(files))
	for i, name := range files {
		// Page-aligned, distinct slides.
		imgs[i] = fixture.TaskImage{File: symcache.Fixture(name), Path: "/nonexistent/" + name, Slide: uint64(i+1)<<36 + uint64(i)*0x4000}
	}
	task := fixture.NewTask(t, imgs, nil)
	found, _, err := images.DyldImages(task.Mem, task.InfosAddr, 0)
	if err != nil || len(found) != len(files) {
		t.Fatalf("DyldImages: %d images, %v", len(found), err)
	}
	set := images.NewSet(found)
	cache := symcache.New(symcache.Options{})
	total := 0
	for i, name := range files {
		m := task.MachOs[i]
		arch := m.Arch()
		addrs := symcache.TextAddrs(t, m, symcache.Step(arch))
		want := symcache.LLVMSymbolize(t, symcache.Fixture(name), "", addrs, false)
		bad := 0
		for k, a := range addrs {
			pc := a + imgs[i].Slide
			img := set.Lookup(pc)
			if img == nil || img.LoadAddress != task.Loads[i] {
				t.Fatalf("%s: %#x not in its image (%v)", name, pc, img)
			}
			fr := cache.Symbolize(img, pc, false)
			got := fr[len(fr)-1]
			w := ""
			// llvm-symbolizer names a stripped function after
			// _mh_execute_header (the trap this design avoids):
			// macprof must name it image+0xSTART instead.
			if len(want[k]) > 0 && want[k][0].FunctionName != "??" && want[k][0].FunctionName != "_mh_execute_header" {
				// llvm-symbolizer leaves Swift names mangled.
				w = demangle.Name(want[k][0].FunctionName, demangle.Simplified)
			}
			if got.Function != w || got.Image != name {
				if bad++; bad <= 5 {
					t.Errorf("%s %#x (link %#x): got %+v, llvm-symbolizer %q", name, pc, a, got, w)
				}
			}
			// An anonymous frame is named by its function's
			// link-time start, whatever the slide.
			if w == "" && (!got.Anonymous || got.Name() != fmt.Sprintf("%s+0x%x", name, a-got.Offset)) {
				t.Fatalf("%s: anonymous frame %+v named %q", name, got, got.Name())
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
	t.Logf("%d addresses symbolized from memory, %d memory reads", total, task.Mem.Reads)
}

// TestMemoryImageUsesDSYM checks that an image read from memory still takes
// file:line from the dSYM beside its file when the UUIDs match.
func TestMemoryImageUsesDSYM(t *testing.T) {
	const slide = 0x7c000
	mem := &fixture.Memory{}
	m := mem.MapMachO(t, symcache.Fixture("prog_arm64"), slide)
	img, err := images.MachOImageFromMemory(mem, m.Text().Addr+slide, symcache.Fixture("prog_arm64"))
	if err != nil {
		t.Fatal(err)
	}
	fr := symcache.New(symcache.Options{}).Symbolize(img, 0x100000400+slide, false)
	if len(fr) != 1 || fr[0].Function != "leaf" || fr[0].Line != 18 || fr[0].File != "/fixtures/src/prog.c" {
		t.Errorf("frames %+v, want leaf at /fixtures/src/prog.c:18", fr)
	}
}
