package images

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

// fakeTask is an address space with Mach-O images laid out at slid
// addresses and a dyld_all_image_infos describing them.
type fakeTask struct {
	mem       *fakeMemory
	infosAddr uint64
	infos     []byte
	array     []byte
	loads     []uint64
	uuids     []string
}

// newFakeTask maps each fixture (file name) at its link address plus slide,
// and writes the image array, paths and a version-15 dyld_all_image_infos.
// The last fixture plays dyld.
func newFakeTask(t testing.TB, files []string, slide uint64) *fakeTask {
	t.Helper()
	ft := &fakeTask{mem: &fakeMemory{}, infosAddr: 0x7ff000000}
	le := binary.LittleEndian
	const strs = 0x7ff100000
	var paths []byte
	for i, name := range files {
		b := readFixture(t, name)
		f, err := OpenMachO(machoFixture(name), "")
		if err != nil {
			t.Fatal(err)
		}
		s := slide + uint64(i)<<40 // keep the images apart
		for _, seg := range f.Segments {
			if seg.FileSize > 0 {
				ft.mem.Map(seg.Addr+s, b[seg.Offset:seg.Offset+seg.FileSize])
			}
		}
		ft.loads = append(ft.loads, f.Text().Addr+s)
		ft.uuids = append(ft.uuids, f.UUIDString())
		f.Close()
		if i < len(files)-1 {
			e := make([]byte, DyldImageInfoSize)
			le.PutUint64(e, f.Text().Addr+s)
			le.PutUint64(e[8:], strs+uint64(len(paths)))
			le.PutUint64(e[16:], uint64(1700000000+i))
			ft.array = append(ft.array, e...)
		}
		paths = append(paths, "/usr/lib/"+name+"\x00"...)
	}
	ft.mem.Map(strs, paths)
	ft.infos = make([]byte, DyldAllImageInfosSize)
	le.PutUint32(ft.infos[dyldOffVersion:], 15)
	le.PutUint32(ft.infos[dyldOffInfoArrayCount:], uint32(len(files)-1))
	le.PutUint64(ft.infos[dyldOffInfoArray:], 0x7ff200000)
	ft.infos[dyldOffLibSystemInitialized] = 1
	le.PutUint64(ft.infos[dyldOffDyldImageLoadAddress:], ft.loads[len(ft.loads)-1])
	le.PutUint64(ft.infos[dyldOffSharedCacheSlide:], 0x4000)
	le.PutUint64(ft.infos[dyldOffSharedCacheBaseAddress:], 0x180000000)
	le.PutUint64(ft.infos[dyldOffInfoArrayChangeTimestamp:], 12345)
	le.PutUint64(ft.infos[dyldOffDyldPath:], strs+uint64(len(paths))-uint64(len("/usr/lib/"+files[len(files)-1])+1))
	ft.mem.Map(ft.infosAddr, ft.infos)
	ft.mem.Map(0x7ff200000, ft.array)
	return ft
}

var taskFixtures = []string{"prog_arm64", "libdemo_arm64.dylib", "cxx_arm64", "libdemo_x86_64.dylib"}

func TestDyldImages(t *testing.T) {
	ft := newFakeTask(t, taskFixtures, 0x1c0000)
	infos, err := ReadDyldAllImageInfos(ft.mem, ft.infosAddr)
	if err != nil {
		t.Fatal(err)
	}
	if infos.Version != 15 || infos.InfoArrayCount != 3 || infos.InfoArray != 0x7ff200000 || !infos.LibSystemInitialized ||
		infos.DyldImageLoadAddress != ft.loads[3] || infos.SharedCacheSlide != 0x4000 || infos.SharedCacheBaseAddress != 0x180000000 ||
		infos.InfoArrayChangeTimestamp != 12345 || infos.DyldPath == 0 {
		t.Errorf("infos %+v", infos)
	}
	list, err := ReadDyldImageInfos(ft.mem, infos, 0)
	if err != nil || len(list) != 3 {
		t.Fatalf("image infos %+v, %v", list, err)
	}
	for i, d := range list {
		if d.LoadAddress != ft.loads[i] || d.FilePath != "/usr/lib/"+taskFixtures[i] || d.ModDate != uint64(1700000000+i) {
			t.Errorf("entry %d: %+v", i, d)
		}
	}
	imgs, _, err := DyldImages(ft.mem, ft.infosAddr, 0)
	if err != nil || len(imgs) != 4 {
		t.Fatalf("DyldImages: %d images, %v", len(imgs), err)
	}
	for i, im := range imgs {
		if im.BuildID != ft.uuids[i] || im.LoadAddress != ft.loads[i] || im.Start != ft.loads[i] || im.Memory == nil ||
			im.Path != "/usr/lib/"+taskFixtures[i] || im.Format != FormatMachO || im.Offset != 0 {
			t.Errorf("image %d: %+v", i, im)
		}
	}
	set := NewSet(imgs)
	if set.Lookup(ft.loads[2]+0x100) != imgs[2] {
		t.Error("Set.Lookup misses an image")
	}
}

func TestDyldImageInfosBroken(t *testing.T) {
	le := binary.LittleEndian
	t.Run("busy", func(t *testing.T) {
		ft := newFakeTask(t, taskFixtures, 0)
		le.PutUint64(ft.infos[dyldOffInfoArray:], 0)
		infos, _ := ReadDyldAllImageInfos(ft.mem, ft.infosAddr)
		if _, err := ReadDyldImageInfos(ft.mem, infos, 0); !errors.Is(err, ErrDyldInfoArrayBusy) {
			t.Errorf("err %v", err)
		}
	})
	t.Run("truncated", func(t *testing.T) {
		ft := newFakeTask(t, taskFixtures, 0)
		le.PutUint32(ft.infos[dyldOffInfoArrayCount:], 1000) // past the mapped array
		infos, _ := ReadDyldAllImageInfos(ft.mem, ft.infosAddr)
		list, err := ReadDyldImageInfos(ft.mem, infos, 0)
		var pe *DyldPartialError
		if len(list) != 3 || !errors.As(err, &pe) || pe.Total != 1000 || pe.Read != 3 || !strings.Contains(err.Error(), "unreadable") {
			t.Errorf("list %d, err %v", len(list), err)
		}
	})
	t.Run("limit", func(t *testing.T) {
		ft := newFakeTask(t, taskFixtures, 0)
		infos, _ := ReadDyldAllImageInfos(ft.mem, ft.infosAddr)
		list, err := ReadDyldImageInfos(ft.mem, infos, 2)
		if len(list) != 2 || err == nil || !strings.Contains(err.Error(), "beyond the limit") {
			t.Errorf("list %d, err %v", len(list), err)
		}
	})
	t.Run("garbage entries", func(t *testing.T) {
		ft := newFakeTask(t, taskFixtures, 0)
		le.PutUint64(ft.array[DyldImageInfoSize:], le.Uint64(ft.array)) // a repeat (cycle)
		le.PutUint64(ft.array[2*DyldImageInfoSize+8:], 0xdead0000)      // unmapped path
		infos, _ := ReadDyldAllImageInfos(ft.mem, ft.infosAddr)
		list, err := ReadDyldImageInfos(ft.mem, infos, 0)
		if len(list) != 1 || err == nil || !strings.Contains(err.Error(), "repeats entry 0") || !strings.Contains(err.Error(), "path") {
			t.Errorf("list %+v, err %v", list, err)
		}
		le.PutUint64(ft.array, 0)
		list, err = ReadDyldImageInfos(ft.mem, infos, 0)
		// Entry 1 is no longer a repeat; entry 2's path is still bad.
		if len(list) != 1 || err == nil || !strings.Contains(err.Error(), "NULL load address") {
			t.Errorf("list %+v, err %v", list, err)
		}
	})
	t.Run("unterminated path", func(t *testing.T) {
		mem := &fakeMemory{}
		long := make([]byte, 2*MaxDyldPath)
		for i := range long {
			long[i] = 'a'
		}
		mem.Map(0x5000, long)
		var buf [MaxDyldPath]byte
		if _, err := ReadCString(mem, 0x5000, buf[:]); err == nil || !strings.Contains(err.Error(), "no NUL") {
			t.Errorf("err %v", err)
		}
		// A string ending right before unmapped memory is read.
		mem.Map(0x9000, []byte("/a/b\x00"))
		if s, err := ReadCString(mem, 0x9000, buf[:]); s != "/a/b" || err != nil {
			t.Errorf("%q %v", s, err)
		}
	})
	t.Run("versions", func(t *testing.T) {
		ft := newFakeTask(t, taskFixtures, 0)
		le.PutUint32(ft.infos, 1)
		infos, err := ReadDyldAllImageInfos(ft.mem, ft.infosAddr)
		if err != nil || infos.DyldImageLoadAddress != 0 || infos.SharedCacheSlide != 0 || infos.InfoArrayCount != 3 {
			t.Errorf("version 1: %+v %v", infos, err)
		}
		le.PutUint32(ft.infos, 12)
		infos, _ = ReadDyldAllImageInfos(ft.mem, ft.infosAddr)
		if infos.SharedCacheSlide != 0x4000 || infos.SharedCacheBaseAddress != 0 || infos.InfoArrayChangeTimestamp != 0 {
			t.Errorf("version 12: %+v", infos)
		}
		for _, v := range []uint32{0, 5000} {
			le.PutUint32(ft.infos, v)
			if _, err := ReadDyldAllImageInfos(ft.mem, ft.infosAddr); err == nil {
				t.Errorf("version %d accepted", v)
			}
		}
		if _, err := ReadDyldAllImageInfos(ft.mem, 0x10); err == nil {
			t.Error("unmapped infos accepted")
		}
	})
	t.Run("bad image", func(t *testing.T) {
		ft := newFakeTask(t, taskFixtures, 0)
		le.PutUint64(ft.array, 0x7ff100000) // points at the path strings
		imgs, _, err := DyldImages(ft.mem, ft.infosAddr, 0)
		var pe *DyldPartialError
		if len(imgs) != 3 || !errors.As(err, &pe) || pe.Total != 4 || !strings.Contains(err.Error(), "bad magic") {
			t.Errorf("%d images, %v", len(imgs), err)
		}
	})
}
