package mach_test

import (
	"testing"

	"github.com/macprof/macprof/target"
)

// TestDyldInfoAskedAgain (issue 12, defect 1): dyld moves
// dyld_all_image_infos into the shared cache right after exec and unmaps
// the old copy, so the address TASK_DYLD_INFO gave is asked again on
// every Images, not cached: a Target that first asked while dyld was
// still on disk (infoArray NULL, list "in use") must find the images at
// the new address.
func TestDyldInfoAskedAgain(t *testing.T) {
	w := newWorld(t, "arm64", []chain{chainA})
	w.k.SetInfoArrayUpdating(w.task, true)
	tg := w.attach(t, target.Options{})
	if set, err := tg.Images(); err == nil && set != nil && set.Len() > 0 {
		t.Fatalf("images read while dyld's list is in use: %d, %v", set.Len(), err)
	}
	w.k.SetInfoArrayUpdating(w.task, false)
	w.k.MoveDyldInfos(w.task, 0x19f000000)
	set, err := tg.Images()
	if err != nil || set == nil || set.Len() != 2 {
		t.Fatalf("Images after dyld moved its list: %v, %v", set, err)
	}
	// And once more, for a Target that had read the list before.
	w.k.MoveDyldInfos(w.task, 0x1a0000000)
	set2, err := tg.Images()
	if err != nil || set2.Len() != 2 {
		t.Fatalf("Images after a second move: %v, %v", set2, err)
	}
}
