package mach_test

import (
	"testing"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/fixture"
	"github.com/macprof/macprof/mach"
	"github.com/macprof/macprof/mach/machtest"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// TestImagesHitRereadsForUnknownPC: a library dlopen'ed after the Target
// read the image list is named and reported by ImagesHit, so that its
// symbols are read while the task lives: the first capture whose PCs lie
// outside every known image has the list read again and is taken under
// the new list. When that read finds dyld's list in use (infoArray NULL,
// another dlopen under way), the list is read again later, by ImagesHit
// or a capture, though the same pages are hit again.
func TestImagesHitRereadsForUnknownPC(t *testing.T) {
	for _, busy := range []bool{false, true} {
		name := "listed"
		if busy {
			name = "list in use at the first read"
		}
		t.Run(name, func(t *testing.T) {
			k := machtest.New()
			const libPath = "/usr/local/lib/libdemo.dylib"
			task := k.NewTask(t, "/Users/dev/prog", []fixture.TaskImage{{File: machoFixture("prog_arm64"), Path: "/Users/dev/prog", Slide: progSlide}})
			progSyms, libSyms := symbols(t, "prog_arm64"), symbols(t, "libdemo_arm64.dylib")
			main := task.AddThread("main")
			main.SetStacks(unwind.ArchARM64, stackTop, stackSize, &machtest.Stack{PCs: chainA.pcs(t, progSyms, progSlide)})
			t.Cleanup(func() { k.Check(t) })
			tg, err := mach.AttachKernel(k, task.PID, target.Options{Continuous: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { tg.Release() })
			if _, err := tg.Images(); err != nil {
				t.Fatal(err)
			}
			c := target.NewCapture(64, 16<<10)
			capture := func(i int) {
				t.Helper()
				ids, err := tg.Threads(nil)
				if err != nil || len(ids) <= i {
					t.Fatalf("Threads: %v, %v", ids, err)
				}
				if err := tg.Capture(ids[i], c); err != nil {
					t.Fatalf("Capture: %v", err)
				}
			}
			capture(0)
			if got := paths(tg.ImagesHit(nil)); len(got) != 1 || got[0] != "/Users/dev/prog" {
				t.Fatalf("ImagesHit after a capture in the program: %q", got)
			}

			// The program dlopens libdemo and a new thread runs in it.
			k.Dlopen(t, task, []fixture.TaskImage{{File: machoFixture("libdemo_arm64.dylib"), Path: libPath, Slide: libSlide}})
			inLib := task.AddThread("loader")
			libChain := append(chain{"lib_helper", "lib_entry"}.pcs(t, libSyms, libSlide), chainB.pcs(t, progSyms, progSlide)...)
			inLib.SetStacks(unwind.ArchARM64, stackTop-stackApart, stackSize, &machtest.Stack{PCs: libChain})
			if busy {
				k.SetInfoArrayUpdating(task, true)
			}
			before := k.Counts().Calls[machtest.CallTaskInfo]
			capture(1)
			if k.Counts().Calls[machtest.CallTaskInfo] == before {
				t.Fatal("a capture with a PC outside every image did not have the image list read")
			}
			if busy {
				if c.Images.Lookup(libChain[0]) != nil {
					t.Fatal("the library is named while dyld's list is in use: the test shows nothing")
				}
				if got := paths(tg.ImagesHit(nil)); len(got) != 0 {
					t.Fatalf("ImagesHit while the list is in use: %q", got)
				}
				k.SetInfoArrayUpdating(task, false)
				time.Sleep(60 * time.Millisecond) // past the least time between reads
				before = k.Counts().Calls[machtest.CallTaskInfo]
				if got := paths(tg.ImagesHit(nil)); len(got) != 0 {
					t.Fatalf("ImagesHit before a capture under the new list: %q", got)
				}
				if k.Counts().Calls[machtest.CallTaskInfo] == before {
					t.Fatal("ImagesHit did not read the list again after a failed read")
				}
				capture(1)
			}
			if im := c.Images.Lookup(libChain[0]); im == nil || im.Path != libPath {
				t.Errorf("the capture in the library names %v at its PC, want %s", im, libPath)
			}
			if got := paths(tg.ImagesHit(nil)); len(got) != 1 || got[0] != libPath {
				t.Errorf("ImagesHit after a capture in the dlopen'ed library: %q, want [%s]", got, libPath)
			}
		})
	}
}

// paths are the images' paths.
func paths(imgs []*images.Image) []string {
	var out []string
	for _, im := range imgs {
		out = append(out, im.Path)
	}
	return out
}
