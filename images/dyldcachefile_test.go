package images_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/images/dyldcachetest"
)

// openDiskCache opens the cache WriteCache wrote at main, its subcache
// opened beside it.
func openDiskCache(t *testing.T, main string) (*images.DyldCache, error) {
	t.Helper()
	b, err := os.ReadFile(main)
	if err != nil {
		t.Fatal(err)
	}
	return images.OpenDyldCache(bytes.NewReader(b), int64(len(b)), func(suffix string) (io.ReaderAt, int64, error) {
		s, err := os.ReadFile(main + suffix)
		if err != nil {
			return nil, 0, err
		}
		return bytes.NewReader(s), int64(len(s)), nil
	})
}

// TestDyldCacheOnDisk reads the synthetic cache's main file and subcache:
// each dylib is found by install path and by UUID, and its bytes read
// through Memory at the task's slide are the ones the task had mapped.
func TestDyldCacheOnDisk(t *testing.T) {
	c := buildCache(t)
	main := c.WriteCache(t, t.TempDir(), c.SubUUID())
	dc, err := openDiskCache(t, main)
	if err != nil {
		t.Fatal(err)
	}
	if len(dc.Files()) != 2 || len(dc.Images) != len(c.Dylibs) {
		t.Fatalf("%d files, %d images; want 2 and %d", len(dc.Files()), len(dc.Images), len(c.Dylibs))
	}
	for _, d := range c.Dylibs {
		for _, q := range [][2]string{{d.InstallPath, ""}, {"/elsewhere", d.MachO.UUIDString()}} {
			addr, err := dc.FindImage(q[0], q[1])
			if err != nil || addr != d.TextAddr {
				t.Errorf("FindImage(%q, %q) = %#x, %v; want %#x", q[0], q[1], addr, err, d.TextAddr)
			}
		}
		mem := dc.Memory(dyldcachetest.Slide)
		m, err := images.ReadMachOFromMemory(mem, d.Load)
		if err != nil {
			t.Fatal(err)
		}
		if m.UUIDString() != d.MachO.UUIDString() || m.Flags&images.MHDylibInCache == 0 {
			t.Errorf("%s: header from disk has UUID %s, flags %#x", d.InstallPath, m.UUIDString(), m.Flags)
		}
		got, want := make([]byte, d.TextSize), make([]byte, d.TextSize)
		if err := mem.ReadMemory(d.Load, got); err != nil {
			t.Fatal(err)
		}
		if err := c.Mem.ReadMemory(d.Load, want); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: __TEXT read from disk differs from the task's", d.InstallPath)
		}
	}
	if _, err := dc.FindImage("/nowhere", ""); !errors.Is(err, images.ErrDyldImageNotFound) {
		t.Errorf("FindImage of an unknown path: %v", err)
	}
	if err := dc.Memory(dyldcachetest.Slide).ReadMemory(dyldcachetest.Base+0x8000000+dyldcachetest.Slide, make([]byte, 8)); err == nil {
		t.Error("read of an unmapped address succeeded")
	}
}

// TestDyldCacheSubCacheMismatch: a subcache file whose UUID is not the one
// the main file names is refused.
func TestDyldCacheSubCacheMismatch(t *testing.T) {
	c := buildCache(t)
	var other [16]byte
	copy(other[:], "another-subcache")
	main := c.WriteCache(t, t.TempDir(), other)
	if _, err := openDiskCache(t, main); !errors.Is(err, images.ErrDyldSubCacheMismatch) {
		t.Fatalf("OpenDyldCache with a foreign subcache: %v, want ErrDyldSubCacheMismatch", err)
	}
}

// TestDyldCacheBadSuffix: a subcache suffix that could leave the cache's
// directory is refused before anything is opened.
func TestDyldCacheBadSuffix(t *testing.T) {
	c := buildCache(t)
	main := c.WriteCache(t, t.TempDir(), c.SubUUID())
	b, err := os.ReadFile(main)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte(dyldcachetest.SubCacheSuffix+"\x00"))
	if i < 0 {
		t.Fatal("no subcache suffix in the main file")
	}
	copy(b[i:], "/../x\x00")
	if err := os.WriteFile(main, b, 0o644); err != nil {
		t.Fatal(err)
	}
	opened := false
	_, err = images.OpenDyldCache(bytes.NewReader(b), int64(len(b)), func(string) (io.ReaderAt, int64, error) {
		opened = true
		return nil, 0, errors.New("not here")
	})
	if err == nil || opened {
		t.Fatalf("suffix /../x: err %v, opened %v", err, opened)
	}
}

// TestDyldCacheSubCacheV1: a header that ends before cacheSubType has
// dyld_subcache_entry_v1 entries, without a suffix: the subcache is named
// ".1" after its index (DyldSharedCache::mapCacheFiles), and is read.
func TestDyldCacheSubCacheV1(t *testing.T) {
	c := buildCache(t)
	main := c.WriteCache(t, t.TempDir(), c.SubUUID())
	b, err := os.ReadFile(main)
	if err != nil {
		t.Fatal(err)
	}
	// mappingOffset 456 (offsetof(cacheSubType)): the mapping moves there.
	le := binary.LittleEndian
	oldMap := le.Uint32(b[16:])
	copy(b[456:456+32], b[oldMap:oldMap+32])
	le.PutUint32(b[16:], 456)
	sub, err := os.ReadFile(main + dyldcachetest.SubCacheSuffix)
	if err != nil {
		t.Fatal(err)
	}
	var asked []string
	dc, err := images.OpenDyldCache(bytes.NewReader(b), int64(len(b)), func(suffix string) (io.ReaderAt, int64, error) {
		asked = append(asked, suffix)
		return bytes.NewReader(sub), int64(len(sub)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || asked[0] != ".1" {
		t.Fatalf("subcaches asked for: %q, want [.1]", asked)
	}
	d := c.Dylibs[0]
	if m, err := images.ReadMachOFromMemory(dc.Memory(dyldcachetest.Slide), d.Load); err != nil || m.UUIDString() != d.MachO.UUIDString() {
		t.Fatalf("header of %s through the v1 cache: %v", d.InstallPath, err)
	}
}
