package images_test

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/fixture"
)

// newFakeTask lays each fixture (file name) out at its link address plus
// slide (the images 1<<40 apart) in a fake task under /usr/lib/, the last
// one as dyld, and fills in the rest of a version-15 dyld_all_image_infos.
func newFakeTask(t testing.TB, files []string, slide uint64) *fixture.Task {
	t.Helper()
	imgs := make([]fixture.TaskImage, len(files))
	for i, name := range files {
		imgs[i] = fixture.TaskImage{File: images.MachOFixture(name), Path: "/usr/lib/" + name, Slide: slide + uint64(i)<<40}
	}
	ft := fixture.NewTask(t, imgs[:len(imgs)-1], &imgs[len(imgs)-1])
	le := binary.LittleEndian
	ft.Infos[images.DyldOffLibSystemInitialized] = 1
	le.PutUint64(ft.Infos[images.DyldOffSharedCacheSlide:], 0x4000)
	le.PutUint64(ft.Infos[images.DyldOffSharedCacheBaseAddress:], 0x180000000)
	le.PutUint64(ft.Infos[images.DyldOffInfoArrayChangeTimestamp:], 12345)
	return ft
}

var taskFixtures = []string{"prog_arm64", "libdemo_arm64.dylib", "cxx_arm64", "libdemo_x86_64.dylib"}

func TestDyldImages(t *testing.T) {
	ft := newFakeTask(t, taskFixtures, 0x1c0000)
	infos, err := images.ReadDyldAllImageInfos(ft.Mem, ft.InfosAddr)
	if err != nil {
		t.Fatal(err)
	}
	if infos.Version != 15 || infos.InfoArrayCount != 3 || infos.InfoArray != 0x7ff200000 || !infos.LibSystemInitialized ||
		infos.DyldImageLoadAddress != ft.Loads[3] || infos.SharedCacheSlide != 0x4000 || infos.SharedCacheBaseAddress != 0x180000000 ||
		infos.InfoArrayChangeTimestamp != 12345 || infos.DyldPath == 0 {
		t.Errorf("infos %+v", infos)
	}
	list, err := images.ReadDyldImageInfos(ft.Mem, infos, 0)
	if err != nil || len(list) != 3 {
		t.Fatalf("image infos %+v, %v", list, err)
	}
	for i, d := range list {
		if d.LoadAddress != ft.Loads[i] || d.FilePath != "/usr/lib/"+taskFixtures[i] || d.ModDate != uint64(1700000000+i) {
			t.Errorf("entry %d: %+v", i, d)
		}
	}
	imgs, _, err := images.DyldImages(ft.Mem, ft.InfosAddr, 0)
	if err != nil || len(imgs) != 4 {
		t.Fatalf("images.DyldImages: %d images, %v", len(imgs), err)
	}
	for i, im := range imgs {
		if im.BuildID != ft.MachOs[i].UUIDString() || im.LoadAddress != ft.Loads[i] || im.Start != ft.Loads[i] || im.Memory == nil ||
			im.Path != "/usr/lib/"+taskFixtures[i] || im.Format != images.FormatMachO || im.Offset != 0 {
			t.Errorf("image %d: %+v", i, im)
		}
	}
	set := images.NewSet(imgs)
	if set.Lookup(ft.Loads[2]+0x100) != imgs[2] {
		t.Error("Set.Lookup misses an image")
	}
}

func TestDyldImageInfosBroken(t *testing.T) {
	le := binary.LittleEndian
	t.Run("busy", func(t *testing.T) {
		ft := newFakeTask(t, taskFixtures, 0)
		le.PutUint64(ft.Infos[images.DyldOffInfoArray:], 0)
		infos, _ := images.ReadDyldAllImageInfos(ft.Mem, ft.InfosAddr)
		if _, err := images.ReadDyldImageInfos(ft.Mem, infos, 0); !errors.Is(err, images.ErrDyldInfoArrayBusy) {
			t.Errorf("err %v", err)
		}
	})
	t.Run("truncated", func(t *testing.T) {
		ft := newFakeTask(t, taskFixtures, 0)
		le.PutUint32(ft.Infos[images.DyldOffInfoArrayCount:], 1000) // past the mapped array
		infos, _ := images.ReadDyldAllImageInfos(ft.Mem, ft.InfosAddr)
		list, err := images.ReadDyldImageInfos(ft.Mem, infos, 0)
		var pe *images.DyldPartialError
		if len(list) != 3 || !errors.As(err, &pe) || pe.Total != 1000 || pe.Read != 3 || !strings.Contains(err.Error(), "unreadable") {
			t.Errorf("list %d, err %v", len(list), err)
		}
	})
	t.Run("limit", func(t *testing.T) {
		ft := newFakeTask(t, taskFixtures, 0)
		infos, _ := images.ReadDyldAllImageInfos(ft.Mem, ft.InfosAddr)
		list, err := images.ReadDyldImageInfos(ft.Mem, infos, 2)
		if len(list) != 2 || err == nil || !strings.Contains(err.Error(), "beyond the limit") {
			t.Errorf("list %d, err %v", len(list), err)
		}
	})
	t.Run("garbage entries", func(t *testing.T) {
		ft := newFakeTask(t, taskFixtures, 0)
		le.PutUint64(ft.Array[images.DyldImageInfoSize:], le.Uint64(ft.Array)) // a repeat (cycle)
		le.PutUint64(ft.Array[2*images.DyldImageInfoSize+8:], 0xdead0000)      // unmapped path
		infos, _ := images.ReadDyldAllImageInfos(ft.Mem, ft.InfosAddr)
		list, err := images.ReadDyldImageInfos(ft.Mem, infos, 0)
		if len(list) != 1 || err == nil || !strings.Contains(err.Error(), "repeats entry 0") || !strings.Contains(err.Error(), "path") {
			t.Errorf("list %+v, err %v", list, err)
		}
		le.PutUint64(ft.Array, 0)
		list, err = images.ReadDyldImageInfos(ft.Mem, infos, 0)
		// Entry 1 is no longer a repeat; entry 2's path is still bad.
		if len(list) != 1 || err == nil || !strings.Contains(err.Error(), "NULL load address") {
			t.Errorf("list %+v, err %v", list, err)
		}
	})
	t.Run("unterminated path", func(t *testing.T) {
		mem := &fixture.Memory{}
		long := make([]byte, 2*images.MaxDyldPath)
		for i := range long {
			long[i] = 'a'
		}
		mem.Map(0x5000, long)
		var buf [images.MaxDyldPath]byte
		if _, err := images.ReadCString(mem, 0x5000, buf[:]); err == nil || !strings.Contains(err.Error(), "no NUL") {
			t.Errorf("err %v", err)
		}
		// A string ending right before unmapped memory is read.
		mem.Map(0x9000, []byte("/a/b\x00"))
		if s, err := images.ReadCString(mem, 0x9000, buf[:]); s != "/a/b" || err != nil {
			t.Errorf("%q %v", s, err)
		}
	})
	t.Run("versions", func(t *testing.T) {
		ft := newFakeTask(t, taskFixtures, 0)
		le.PutUint32(ft.Infos, 1)
		infos, err := images.ReadDyldAllImageInfos(ft.Mem, ft.InfosAddr)
		if err != nil || infos.DyldImageLoadAddress != 0 || infos.SharedCacheSlide != 0 || infos.InfoArrayCount != 3 {
			t.Errorf("version 1: %+v %v", infos, err)
		}
		le.PutUint32(ft.Infos, 12)
		infos, _ = images.ReadDyldAllImageInfos(ft.Mem, ft.InfosAddr)
		if infos.SharedCacheSlide != 0x4000 || infos.SharedCacheBaseAddress != 0 || infos.InfoArrayChangeTimestamp != 0 {
			t.Errorf("version 12: %+v", infos)
		}
		for _, v := range []uint32{0, 5000} {
			le.PutUint32(ft.Infos, v)
			if _, err := images.ReadDyldAllImageInfos(ft.Mem, ft.InfosAddr); err == nil {
				t.Errorf("version %d accepted", v)
			}
		}
		if _, err := images.ReadDyldAllImageInfos(ft.Mem, 0x10); err == nil {
			t.Error("unmapped infos accepted")
		}
	})
	t.Run("bad image", func(t *testing.T) {
		ft := newFakeTask(t, taskFixtures, 0)
		le.PutUint64(ft.Array, 0x7ff100000) // points at the path strings
		imgs, _, err := images.DyldImages(ft.Mem, ft.InfosAddr, 0)
		var pe *images.DyldPartialError
		if len(imgs) != 3 || !errors.As(err, &pe) || pe.Total != 4 || !strings.Contains(err.Error(), "bad magic") {
			t.Errorf("%d images, %v", len(imgs), err)
		}
	})
}
