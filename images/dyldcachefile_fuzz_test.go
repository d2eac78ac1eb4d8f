package images_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/macprof/macprof/images"
)

// FuzzDyldCache parses arbitrary bytes as a dyld shared cache's main file
// and, for every subcache it names, sub as that file; then looks every
// image up and reads its header through the cache's Memory: nothing may
// panic, hang or allocate beyond what the files hold. Seeds in
// testdata/fuzz/FuzzDyldCache: the synthetic cache's main file and
// subcache, the main file with a subcache of another cache, and a header
// alone.
func FuzzDyldCache(f *testing.F) {
	f.Fuzz(func(t *testing.T, main, sub []byte) {
		c, err := images.OpenDyldCache(bytes.NewReader(main), int64(len(main)), func(string) (io.ReaderAt, int64, error) {
			return bytes.NewReader(sub), int64(len(sub)), nil
		})
		if err != nil {
			return
		}
		if len(c.Images)*32 > len(main) {
			t.Fatalf("%d images from %d bytes", len(c.Images), len(main))
		}
		mem := c.Memory(0x4000)
		for _, im := range c.Images {
			if len(im.Path) > 1024 {
				t.Fatalf("path of %d bytes", len(im.Path))
			}
			images.ReadMachOFromMemory(mem, im.Address+0x4000)
		}
		if len(c.Images) > 0 {
			c.FindImage("/nowhere", "00112233445566778899aabbccddeeff")
		}
	})
}
