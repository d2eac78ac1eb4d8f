package symcache

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/testprog"
)

// TestDebugFileMustCarryTheBuildID puts at a program's build-ID debug path
// the debug file of another build of it, whose helper (at the same
// address) is called TOPSEC: a path in a target's tree can name any file,
// so the debug file is used only if it carries the program's build ID.
func TestDebugFileMustCarryTheBuildID(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(testprog.Dir(), "unnamedfdes.c")
	gcc, objcopy := tool(t, "gcc"), tool(t, "objcopy", "llvm-objcopy")
	bin, other := filepath.Join(dir, "p"), filepath.Join(dir, "other")
	for _, args := range [][]string{{"-o", bin}, {"-Dhelper=TOPSEC", "-o", other}} {
		args = append([]string{"-O1", "-g", "-Wl,--build-id", src}, args...)
		if out, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %v: %v\n%s", args, err, out)
		}
	}
	id, err := images.ELFBuildID(bin)
	if err != nil || len(id) < 4 {
		t.Fatalf("build ID of %s: %q, %v", bin, id, err)
	}
	helper := testprog.ELFSymbol(t, bin, "helper")
	if a := testprog.ELFSymbol(t, other, "TOPSEC"); a != helper {
		t.Fatalf("fixture: TOPSEC at %#x, helper at %#x; the test needs one address", a, helper)
	}
	dbgDir := t.TempDir()
	dbg := filepath.Join(dbgDir, ".build-id", id[:2], id[2:]+".debug")
	if err := os.MkdirAll(filepath.Dir(dbg), 0o755); err != nil {
		t.Fatal(err)
	}
	stripped := filepath.Join(dir, "p-stripped")
	for _, args := range [][]string{{"--only-keep-debug", other, dbg}, {"--strip-all", bin, stripped}} {
		if out, err := exec.Command(objcopy, args...).CombinedOutput(); err != nil {
			t.Fatalf("objcopy %v: %v\n%s", args, err, out)
		}
	}
	old := DebugDirs
	DebugDirs = []string{dbgDir}
	t.Cleanup(func() { DebugDirs = old })
	img := execImage(t, stripped, 0)
	img.BuildID = id
	got := New(Options{}).Symbolize(img, helper, false)
	if len(got) == 0 || got[0].Function == "TOPSEC" || !got[0].Anonymous {
		t.Fatalf("helper's address symbolizes as %+v, want an unnamed function (the debug file is another build's)", got)
	}
}
