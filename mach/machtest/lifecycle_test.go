package machtest

import (
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/macprof/macprof/internal/fixture"
)

// TestPlanDlopen: a planned dlopen maps the library, leaves dyld's list in
// use (infoArray NULL) for dlopenBusySteps steps, then stores the new
// count, a new array and the next infoArrayChangeTimestamp, frees the old
// array, and only then runs the code that uses the library.
func TestPlanDlopen(t *testing.T) {
	macho := func(name string) string { return filepath.Join("..", "..", "images", "testdata", "macho", name) }
	k := New()
	tk := k.NewTask(t, "/Users/dev/prog", []fixture.TaskImage{{File: macho("prog_arm64"), Path: "/Users/dev/prog", Slide: 0x4000}})
	le := binary.LittleEndian
	infos := func() (count uint32, array, stamp uint64) {
		b := tk.infosBytes()
		return le.Uint32(b[offInfoArrayCount:]), le.Uint64(b[offInfoArray:]), le.Uint64(b[offTimestamp:])
	}
	_, oldArray, oldStamp := infos()
	libEntry := fixture.MachOFunctions(t, macho("libdemo_arm64.dylib"))["lib_entry"] + 0x10_0000_0000
	ran := false
	const at = 5
	tk.PlanDlopen(t, at, []fixture.TaskImage{{File: macho("libdemo_arm64.dylib"), Path: "/usr/local/lib/libdemo.dylib", Slide: 0x10_0000_0000}}, func() { ran = true })
	for step := int64(1); step <= at+dlopenBusySteps; step++ {
		k.mu.Lock()
		k.step = step
		tk.advance(step)
		count, array, stamp := infos()
		mapped := tk.regionAt(libEntry) != nil
		k.mu.Unlock()
		switch {
		case step < at:
			if count != 1 || array != oldArray || mapped || ran {
				t.Fatalf("step %d, before the dlopen: count %d, array %#x, library mapped %v, code ran %v", step, count, array, mapped, ran)
			}
		case step < at+dlopenBusySteps:
			if array != 0 || !mapped || ran {
				t.Fatalf("step %d, dlopen under way: array %#x (want NULL), library mapped %v, code ran %v", step, array, mapped, ran)
			}
		default:
			if count != 2 || array == 0 || array == oldArray || stamp != oldStamp+1 || !ran {
				t.Fatalf("step %d, after the dlopen: count %d, array %#x (was %#x), stamp %d (was %d), code ran %v", step, count, array, oldArray, stamp, oldStamp, ran)
			}
			if tk.regionAt(oldArray) != nil {
				t.Error("the old image array is still mapped")
			}
		}
	}
}
