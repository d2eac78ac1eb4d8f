package symcache

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/testprog"
)

// buildInlineC compiles testprog/src/inlineother.c with gcc -O2 -g (DWARF 5 line tables and
// inlined subroutines) and returns the binary.
func buildInlineC(t *testing.T, extra ...string) string {
	t.Helper()
	return buildInlineCB(t, extra...)
}

// buildInlineCB is buildInlineC for benchmarks too.
func buildInlineCB(t testing.TB, extra ...string) string {
	t.Helper()
	src := filepath.Join(testprog.Dir(), "inlineother.c")
	bin := filepath.Join(t.TempDir(), "inl")
	args := append([]string{"-O2", "-g", "-o", bin, src}, extra...)
	if out, err := exec.Command(tool(t, "gcc"), args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %v: %v\n%s", args, err, out)
	}
	return bin
}

// elfFuncAddrs returns every address of the named functions of bin
// (link-time), from .symtab.
func elfFuncAddrs(t *testing.T, bin string, names ...string) []uint64 {
	t.Helper()
	syms := testprog.ELFSymbols(t, bin)
	var out []uint64
	for _, s := range syms {
		for _, n := range names {
			if s.Name == n && s.Size > 0 {
				for a := s.Value; a < s.Value+s.Size; a++ {
					out = append(out, a)
				}
			}
		}
	}
	if len(out) < 50 {
		t.Fatalf("only %d addresses in %v", len(out), names)
	}
	return out
}

// TestELFDWARFAgreesWithLLVMSymbolizer compares every frame (inlined
// ones included), file and line at every byte of the C program's own
// functions with llvm-symbolizer, loaded at a PIE base.
func TestELFDWARFAgreesWithLLVMSymbolizer(t *testing.T) {
	bin := buildInlineC(t)
	const base = 0x555555554000
	img := execImage(t, bin, base)
	addrs := elfFuncAddrs(t, bin, "worker", "other", "main")
	want := llvmSymbolize(t, bin, "", addrs, true)
	c := New(Options{})
	bad, inlined := 0, 0
	for i, a := range addrs {
		got := c.Symbolize(img, base+a, false)
		w := want[i]
		ok := len(got) == len(w)
		for j := 0; ok && j < len(w); j++ {
			ok = got[j].Function == w[j].FunctionName && got[j].File == w[j].FileName && got[j].Line == w[j].Line &&
				got[j].Inlined == (j < len(w)-1)
		}
		if len(got) > 1 {
			inlined++
		}
		if !ok {
			if bad++; bad <= 5 {
				t.Errorf("%#x: got %+v, llvm-symbolizer %+v", a, got, w)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d addresses disagree", bad, len(addrs))
	}
	if inlined == 0 {
		t.Error("no address had inlined frames: gcc -O2 should inline sq and sum_sq")
	}
	t.Logf("%d addresses agree with llvm-symbolizer, %d with inlined frames", len(addrs), inlined)
}

// TestELFDebugFileLines strips the C program into a separate debug file
// found by build ID (DIR/.build-id/xx/rest.debug) and checks that its
// DWARF still gives the unstripped program's frames.
func TestELFDebugFileLines(t *testing.T) {
	bin := buildInlineC(t, "-Wl,--build-id")
	id, err := images.ELFBuildID(bin)
	if err != nil || len(id) < 4 {
		t.Fatalf("build ID of %s: %q, %v", bin, id, err)
	}
	dir := t.TempDir()
	dbg := filepath.Join(dir, ".build-id", id[:2], id[2:]+".debug")
	if err := os.MkdirAll(filepath.Dir(dbg), 0o755); err != nil {
		t.Fatal(err)
	}
	objcopy := tool(t, "objcopy", "llvm-objcopy")
	stripped := filepath.Join(t.TempDir(), "inl")
	for _, args := range [][]string{
		{"--only-keep-debug", bin, dbg},
		{"--strip-debug", bin, stripped},
	} {
		if out, err := exec.Command(objcopy, args...).CombinedOutput(); err != nil {
			t.Fatalf("objcopy %v: %v\n%s", args, err, out)
		}
	}
	old := DebugDirs
	DebugDirs = []string{dir}
	t.Cleanup(func() { DebugDirs = old })

	addrs := elfFuncAddrs(t, bin, "worker")
	full := New(Options{})
	split := New(Options{})
	fimg, simg := execImage(t, bin, 0), execImage(t, stripped, 0)
	fimg.BuildID = id
	if simg.BuildID, err = images.ELFBuildID(stripped); err != nil || simg.BuildID != id {
		t.Fatalf("stripped build ID %q (%v), want %q", simg.BuildID, err, id)
	}
	withLine := 0
	for _, a := range addrs {
		want := full.Symbolize(fimg, a, false)
		got := split.Symbolize(simg, a, false)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%#x: debug file gives %+v, the unstripped file %+v", a, got, want)
		}
		if got[0].Line > 0 {
			withLine++
		}
	}
	if withLine < len(addrs)/2 {
		t.Fatalf("only %d of %d addresses have a line", withLine, len(addrs))
	}
}
