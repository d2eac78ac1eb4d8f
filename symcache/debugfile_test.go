package symcache

import (
	"debug/dwarf"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/testprog"
)

// strippedWithDebugFile builds testprog/src/unnamedfdes.c, strips it of
// every symbol into a separate debug file in a directory of its own, found
// there by build ID (as Debian's -dbg packages install them), and returns
// the stripped program, that directory and the program's build ID.
func strippedWithDebugFile(t *testing.T) (stripped, dbgDir, id string) {
	t.Helper()
	src := filepath.Join(testprog.Dir(), "unnamedfdes.c")
	bin := filepath.Join(t.TempDir(), "p")
	if out, err := exec.Command(tool(t, "gcc"), "-O1", "-g", "-Wl,--build-id", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	id, err := images.ELFBuildID(bin)
	if err != nil || len(id) < 4 {
		t.Fatalf("build ID of %s: %q, %v", bin, id, err)
	}
	dbgDir = t.TempDir()
	dbg := filepath.Join(dbgDir, ".build-id", id[:2], id[2:]+".debug")
	if err := os.MkdirAll(filepath.Dir(dbg), 0o755); err != nil {
		t.Fatal(err)
	}
	stripped = filepath.Join(t.TempDir(), "p")
	objcopy := tool(t, "objcopy", "llvm-objcopy")
	for _, args := range [][]string{{"--only-keep-debug", bin, dbg}, {"--strip-all", bin, stripped}} {
		if out, err := exec.Command(objcopy, args...).CombinedOutput(); err != nil {
			t.Fatalf("objcopy %v: %v\n%s", args, err, out)
		}
	}
	return stripped, dbgDir, id
}

// debugFunctions returns the function symbols of the debug file in dbgDir
// of build ID id that have an address, and the address of helper.
func debugFunctions(t *testing.T, dbgDir, id string) (funcs int, helper uint64) {
	t.Helper()
	df, err := elf.Open(filepath.Join(dbgDir, ".build-id", id[:2], id[2:]+".debug"))
	if err != nil {
		t.Fatal(err)
	}
	syms, _ := df.Symbols()
	df.Close()
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 {
			funcs++
			if s.Name == "helper" {
				helper = s.Value
			}
		}
	}
	if helper == 0 {
		t.Fatal("no helper in the debug file's symbols")
	}
	return funcs, helper
}

// useDebugDir makes dir the only place debug files are looked for until
// the test ends.
func useDebugDir(t *testing.T, dir string) {
	old := DebugDirs
	DebugDirs = []string{dir}
	t.Cleanup(func() { DebugDirs = old })
}

// TestStrippedObjectTakesTheDebugFilesNames checks that the static
// function of a program stripped into a debug file is named from the debug
// file, though the stripped file's .eh_frame has more function starts than
// the debug file has symbols.
func TestStrippedObjectTakesTheDebugFilesNames(t *testing.T) {
	stripped, dbgDir, id := strippedWithDebugFile(t)
	// The premise: more FDE starts in the stripped file than function
	// symbols in the debug file.
	sf, err := elf.Open(stripped)
	if err != nil {
		t.Fatal(err)
	}
	starts, _ := ehFrameStarts(sf, nil)
	sf.Close()
	funcs, helper := debugFunctions(t, dbgDir, id)
	if len(starts) <= funcs {
		t.Fatalf("the stripped program has %d FDE starts, the debug file %d functions: the test needs more starts", len(starts), funcs)
	}

	useDebugDir(t, dbgDir)
	img := execImage(t, stripped, 0)
	img.BuildID = id
	got := New(Options{}).Symbolize(img, helper, false)
	if len(got) == 0 || got[0].Function != "helper" {
		t.Fatalf("helper's address in the stripped program symbolizes as %+v, want helper from the debug file", got)
	}
}

// TestSystemLibcNamesFromItsDebugFile checks the same with the system's
// glibc and its libc6-dbg debug file, where it is installed: the local
// function __libc_start_call_main, which no .dynsym names, is named.
func TestSystemLibcNamesFromItsDebugFile(t *testing.T) {
	const libc = "/lib/x86_64-linux-gnu/libc.so.6"
	f, err := elf.Open(libc)
	if err != nil {
		t.Skipf("no %s here: %v", libc, err)
	}
	id := images.ELFFileBuildID(f)
	f.Close()
	dbg := filepath.Join("/usr/lib/debug/.build-id", id[:2], id[2:]+".debug")
	if _, err := os.Stat(dbg); err != nil {
		t.Skipf("glibc's debug file %s is absent (apt-get install libc6-dbg): %v", dbg, err)
	}
	df, err := elf.Open(dbg)
	if err != nil {
		t.Fatal(err)
	}
	syms, _ := df.Symbols()
	df.Close()
	var addr uint64
	for _, s := range syms {
		if s.Name == "__libc_start_call_main" && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			addr = s.Value + 4
		}
	}
	if addr == 0 {
		t.Skip("the debug file has no __libc_start_call_main")
	}
	img := execImage(t, libc, 0)
	img.BuildID = id
	got := New(Options{}).Symbolize(img, addr, false)
	if len(got) == 0 || !strings.Contains(got[0].Function, "__libc_start_call_main") {
		t.Fatalf("libc %#x symbolizes as %+v, want __libc_start_call_main from %s", addr, got, dbg)
	}
}

// TestDWARFNamesGlibcsHiddenAliasesByTheirName checks that a function whose
// DWARF linkage name is glibc's internal __GI_ alias is named by its
// DW_AT_name, the name users know (__libc_malloc, not
// __GI___libc_malloc).
func TestDWARFNamesGlibcsHiddenAliasesByTheirName(t *testing.T) {
	src := filepath.Join(testprog.Dir(), "glibchidden.c")
	bin := filepath.Join(t.TempDir(), "h")
	if out, err := exec.Command(tool(t, "gcc"), "-O1", "-g", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, _ := f.Symbols()
	var addr uint64
	for _, s := range syms {
		if s.Name == "__GI_work" {
			addr = s.Value
		}
	}
	if addr == 0 {
		t.Fatal("gcc wrote no __GI_work symbol")
	}
	d, err := f.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewDWARFLines(d)
	if err != nil {
		t.Fatal(err)
	}
	if fr := l.Lines(addr); len(fr) == 0 || fr[0].Function != "work" {
		t.Fatalf("frames at __GI_work: %+v, want work", fr)
	}
}

// TestDWARFNamesGlibcsAssemblerAliasesByTheirName: GNU as names a
// function of an assembler file by its first label, which in glibc's
// system call wrappers is the hidden __GI_ alias (libc6-dbg's getpid is
// __GI_getpid in DWARF, where llvm-symbolizer prints getpid): it is named
// by the name users know.
func TestDWARFNamesGlibcsAssemblerAliasesByTheirName(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "w.S")
	// The alias alone, as the wrapper's unit has it (work itself is
	// an alias of it elsewhere, as libc's symbols show).
	asm := ".text\n.type __GI_work,@function\n__GI_work:\n\tnop\n\tret\n.size __GI_work,.-__GI_work\n"
	if err := os.WriteFile(src, []byte(asm), 0o644); err != nil {
		t.Fatal(err)
	}
	obj := filepath.Join(dir, "w.o")
	if out, err := exec.Command(tool(t, "gcc"), "-g", "-c", "-o", obj, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	f, err := elf.Open(obj)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := f.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	var named string
	for r := d.Reader(); ; {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag == dwarf.TagSubprogram {
			named, _ = e.Val(dwarf.AttrName).(string)
		}
	}
	if named != "__GI_work" {
		t.Fatalf("the assembler named the function %q in DWARF, want __GI_work (the case this test is about)", named)
	}
	l, err := NewDWARFLines(d)
	if err != nil {
		t.Fatal(err)
	}
	if fr := l.Lines(0); len(fr) == 0 || fr[0].Function != "work" {
		t.Fatalf("frames at __GI_work: %+v, want work", fr)
	}
}
