package symcache

import (
	"debug/elf"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/macprof/macprof/images"
)

// libpythonDebug is a python built with -g by pyenv (23 MB with
// .debug_info), present on the project VM.
const libpythonDebug = "/root/.pyenv/versions/3.11.7/lib/libpython3.11.so.1.0"

// libcDebugFile returns glibc's separate debug file (libc6-dbg), found by
// the build ID of the running system's libc, or "" with why it is absent.
func libcDebugFile() (string, string) {
	const libc = "/lib/x86_64-linux-gnu/libc.so.6"
	id, err := images.ELFBuildID(libc)
	if err != nil || len(id) < 4 {
		return "", "no build ID in " + libc + " (not an amd64 Debian system?)"
	}
	p := filepath.Join("/usr/lib/debug/.build-id", id[:2], id[2:]+".debug")
	if _, err := os.Stat(p); err != nil {
		return "", "libc's debug file " + p + " is absent (Debian: apt-get install libc6-dbg)"
	}
	return p, ""
}

// largeDWARFObject is an object with a large DWARF for the benchmarks and
// the lazy-index test.
type largeDWARFObject struct {
	name, path, absent string
}

func largeDWARFObjects() []largeDWARFObject {
	libc, why := libcDebugFile()
	objs := []largeDWARFObject{{name: "libc", path: libc, absent: why}}
	py := largeDWARFObject{name: "libpython", path: libpythonDebug}
	if _, err := os.Stat(libpythonDebug); err != nil {
		py.path, py.absent = "", libpythonDebug+" is absent (pyenv install 3.11.7 with CFLAGS=-g)"
	}
	return append(objs, py)
}

// spreadFuncAddrs returns n addresses spread evenly over the functions of
// f's .symtab (sorted by address), one inside each chosen function (a
// function is chosen again when there are fewer than n).
func spreadFuncAddrs(tb testing.TB, f *elf.File, n int) []uint64 {
	tb.Helper()
	syms, err := f.Symbols()
	if err != nil {
		tb.Fatal(err)
	}
	var funcs []elf.Symbol
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Size > 0 && s.Value != 0 {
			funcs = append(funcs, s)
		}
	}
	if len(funcs) == 0 {
		tb.Fatal("no functions in .symtab")
	}
	sort.Slice(funcs, func(i, j int) bool { return funcs[i].Value < funcs[j].Value })
	addrs := make([]uint64, n)
	for i := range addrs {
		s := funcs[i*len(funcs)/n]
		addrs[i] = s.Value + uint64(i*7)%s.Size
	}
	return addrs
}

// BenchmarkDWARFLinesLarge reads the DWARF of a large object (glibc's
// debug file, a libpython built with -g) and finds the frames of 300
// addresses spread over its functions: what the end of a recording costs
// per object with DWARF. "open" includes debug/elf's DWARF() (reading and
// decompressing the sections); "index" starts from its *dwarf.Data.
func BenchmarkDWARFLinesLarge(b *testing.B) {
	for _, o := range largeDWARFObjects() {
		b.Run(o.name, func(b *testing.B) {
			if o.path == "" {
				b.Skip(o.absent)
			}
			f, err := elf.Open(o.path)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			addrs := spreadFuncAddrs(b, f, 300)
			lookup := func(l *DWARFLines) {
				for _, a := range addrs {
					l.Lines(a)
				}
			}
			b.Run("open", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					d, err := f.DWARF()
					if err != nil {
						b.Fatal(err)
					}
					l, err := NewDWARFLines(d)
					if err != nil {
						b.Fatal(err)
					}
					lookup(l)
				}
			})
			b.Run("index", func(b *testing.B) {
				d, err := f.DWARF()
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					l, err := NewDWARFLines(d)
					if err != nil {
						b.Fatal(err)
					}
					lookup(l)
				}
			})
		})
	}
}
