package symcache

import (
	"debug/elf"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/objfile"
	"github.com/macprof/macprof/internal/testprog"
)

// pcObjects are real ELF objects of each kind loadELFAt reads: libc (a
// stripped library whose debug file names it, when installed), the python3
// on PATH and its libpython (with .symtab, or stripped with .eh_frame
// starts), the system's stripped python3, and a C test program.
func pcObjects(t *testing.T) []string {
	t.Helper()
	objs := []string{testprog.BuildC(t, "spinexit.c")}
	for _, p := range []string{"/lib/x86_64-linux-gnu/libc.so.6", "/lib/aarch64-linux-gnu/libc.so.6", "/usr/lib64/libc.so.6", "/usr/bin/python3"} {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			objs = append(objs, r)
		}
	}
	out, err := exec.Command("python3", "-c", "import sys, sysconfig; print(sys.executable); print(sysconfig.get_config_var('LIBDIR') or '', sysconfig.get_config_var('LDLIBRARY') or '')").Output()
	if err != nil {
		t.Fatalf("python3 is needed (on PATH) for real objects to compare: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if r, err := filepath.EvalSymlinks(lines[0]); err == nil {
		objs = append(objs, r)
	}
	if f := strings.Fields(lines[len(lines)-1]); len(f) == 2 && strings.HasSuffix(f[1], ".so") || len(f) == 2 && strings.Contains(f[1], ".so.") {
		if r, err := filepath.EvalSymlinks(filepath.Join(f[0], f[1])); err == nil {
			objs = append(objs, r)
		}
	}
	if !slices.ContainsFunc(objs, func(p string) bool { return strings.Contains(filepath.Base(p), "libc.so") }) {
		t.Fatalf("no libc.so.6 found in %v", objs)
	}
	slices.Sort(objs)
	return slices.Compact(objs)
}

// pcOffsets picks n file offsets of f's executable segments: at, around
// and inside the starts and ends of full's functions, and anywhere.
func pcOffsets(f *elf.File, full *Table, r *rand.Rand, n int) []uint64 {
	var offs []uint64
	for len(offs) < n {
		switch r.IntN(3) {
		case 0:
			for _, p := range f.Progs {
				if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 && p.Filesz > 0 {
					offs = append(offs, p.Off+r.Uint64N(p.Filesz))
				}
			}
		default:
			if full.Len() == 0 {
				continue
			}
			i := r.IntN(full.Len())
			_, start := full.Symbol(i)
			a := start + uint64(r.IntN(3)) - 1
			if full.ends != nil && full.ends[i] != 0 && r.IntN(2) == 0 {
				a = full.ends[i] - uint64(r.IntN(2))
			}
			if o, ok := full.FileOffset(a); ok {
				offs = append(offs, o)
			}
		}
	}
	return offs
}

// openPCObject maps the object at path as an image and returns it, the
// Table LoadELF builds of it, and the file opened (closed when the test
// ends).
func openPCObject(t *testing.T, path string) (*images.Image, *Table, *elf.File) {
	t.Helper()
	img := &images.Image{Path: path, Format: images.FormatELF, Start: 0x10000000, Limit: 0x10000000 + 1<<40}
	full, err := LoadELF(img)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return img, full, f
}

// TestELFAtAsLoadELF checks that the Table loadELFAt builds for a few
// addresses names each of them as LoadELF's whole Table does, on real
// objects, while holding a few symbols rather than the whole table.
func TestELFAtAsLoadELF(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 6))
	for _, path := range pcObjects(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			img, full, f := openPCObject(t, path)
			compared := 0
			for batch := 0; batch < 12; batch++ {
				offs := pcOffsets(f, full, r, 1+r.IntN(80))
				few, err := loadELFAt(img, offs)
				if err != nil {
					t.Fatal(err)
				}
				if f.Section(".gopclntab") == nil && few.Len() > 2*len(offs) {
					t.Errorf("loadELFAt kept %d symbols for %d addresses (LoadELF: %d)", few.Len(), len(offs), full.Len())
				}
				for _, o := range offs {
					wa, wok := full.Address(o)
					ga, gok := few.Address(o)
					if wa != ga || wok != gok {
						t.Fatalf("offset %#x: address %#x %v, want %#x %v", o, ga, gok, wa, wok)
					}
					wn, ws, wok := full.Lookup(wa)
					gn, gs, gok := few.Lookup(ga)
					if wn != gn || ws != gs || wok != gok {
						t.Errorf("%#x: loadELFAt names %q at %#x (%v), LoadELF %q at %#x (%v)", wa, gn, gs, gok, wn, ws, wok)
					}
					compared++
				}
			}
			t.Logf("%d addresses, LoadELF: %d symbols", compared, full.Len())
		})
	}
}

// TestCacheExpect checks that a Cache told the addresses first (Expect)
// gives the frames a Cache not told gives, for those and for others, and
// that it loads only the symbols that name them.
func TestCacheExpect(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 28))
	for _, path := range pcObjects(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			img, full, f := openPCObject(t, path)
			offs := pcOffsets(f, full, r, 100)
			plain, told := New(Options{NoLines: true}), New(Options{NoLines: true})
			for i, o := range offs[:50] {
				told.Expect(img, img.Start+o, i%2 == 1)
			}
			for i, o := range offs {
				pc, caller := img.Start+o, i%2 == 1
				want, got := plain.Symbolize(img, pc, caller), told.Symbolize(img, pc, caller)
				if !slices.Equal(want, got) {
					t.Errorf("%#x (caller %v, expected %v): %+v, want %+v", pc, caller, i < 50, got, want)
				}
			}
			e := told.expected[img.Key()]
			if e == nil || e.entry.table == nil {
				t.Fatal("Expect loaded no table of its own")
			}
			if f.Section(".gopclntab") == nil && e.entry.table.Len() > 100 {
				t.Errorf("expected table has %d symbols for 50 addresses", e.entry.table.Len())
			}
		})
	}
}

// TestSymbolsAtOfTruncatedMapping reads the symbols of a copy of libc
// through its mapping after the file was cut to its first pages (a
// target rewriting a library it mapped): the read must fail with
// objfile.ErrFault, as loadELFAt's deferred recovery makes it, not crash.
func TestSymbolsAtOfTruncatedMapping(t *testing.T) {
	var lib string
	for _, p := range pcObjects(t) {
		if strings.Contains(filepath.Base(p), "libc.so") {
			lib = p
		}
	}
	data, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "libc.so.6")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	file, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	f, m, err := objfile.MapELF(file, maxELFRead)
	if err != nil || m == nil {
		t.Fatalf("MapELF: mapping %v, %v", m, err)
	}
	defer m.Close()
	s := f.SectionByType(elf.SHT_DYNSYM)
	if s == nil || s.Offset < 8192 {
		t.Fatalf("%s: no .dynsym past its first two pages", lib)
	}
	if err := file.Truncate(4096); err != nil {
		t.Fatal(err)
	}
	read := func() (err error) {
		defer objfile.RecoverFault(&err, objfile.PanicOnFault())
		_, err = elfSymbolsAt("libc", f, m, []uint64{s.Addr})
		return err
	}
	if err := read(); !errors.Is(err, objfile.ErrFault) {
		t.Fatalf("symbols of the truncated mapping: %v, want objfile.ErrFault", err)
	}
}
