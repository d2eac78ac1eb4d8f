package symcache

import (
	"bufio"
	"bytes"
	"debug/elf"
	"debug/gosym"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/macprof/macprof/images"
)

const gopclntabProg = `package main

import (
	"fmt"
	"os"
)

//go:noinline
func leaf(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i * i
	}
	return s
}

// small is inlined into middle.
func small(n int) int { return n*3 + 1 }

//go:noinline
func middle(n int) int { return leaf(small(n)) + 1 }

type T struct{ v int }

//go:noinline
func (t *T) Method() int { return middle(t.v) }

func main() {
	t := &T{v: len(os.Args)}
	fmt.Println(t.Method())
}
`

// buildGo builds gopclntabProg with extra go build arguments for goos/goarch.
func buildGo(t *testing.T, dir, out, goos, goarch string, args ...string) string {
	t.Helper()
	goBin := goTool(t)
	if _, err := os.Stat(filepath.Join(dir, "main.go")); err != nil {
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(gopclntabProg), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module prog\n\ngo 1.21\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, out)
	cmd := exec.Command(goBin, append(append([]string{"build", "-o", path}, args...), ".")...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0", "GOFLAGS=", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %v: %v\n%s", args, err, out)
	}
	return path
}

// goTool finds the go command, which builds the test programs and is the
// oracle (go tool nm, go tool addr2line).
func goTool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build the test programs: %v", err)
	}
	return p
}

type goNMSym struct {
	name       string
	addr, size uint64
}

// goNM lists the text symbols with a size of an unstripped binary, with
// `go tool nm -size`.
func goNM(t *testing.T, bin string) []goNMSym {
	t.Helper()
	out, err := exec.Command(goTool(t), "tool", "nm", "-size", bin).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	var syms []goNMSym
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || (f[2] != "T" && f[2] != "t") {
			continue
		}
		addr, err1 := strconv.ParseUint(f[0], 16, 64)
		size, err2 := strconv.ParseUint(f[1], 10, 64)
		if err1 != nil || err2 != nil || size == 0 {
			continue
		}
		syms = append(syms, goNMSym{name: strings.Join(f[3:], " "), addr: addr, size: size})
	}
	return syms
}

// checkGoNames symbolizes an address inside every main.* and runtime.*
// function of nm through img (loaded with slide) and compares names.
func checkGoNames(t *testing.T, img *images.Image, nm []goNMSym, slide uint64) {
	t.Helper()
	c := New(Options{})
	checked, nmain := 0, 0
	for _, s := range nm {
		if !strings.HasPrefix(s.name, "main.") && !strings.HasPrefix(s.name, "runtime.") {
			continue
		}
		if s.name == "runtime.text" || s.name == "runtime.etext" {
			continue // markers, not functions
		}
		// The pclntab names assembly functions without the ABI0
		// suffix of their linker symbols, as tracebacks do.
		s.name = strings.TrimSuffix(s.name, ".abi0")
		for _, a := range []uint64{s.addr, s.addr + s.size/2, s.addr + s.size - 1} {
			fr := c.Symbolize(img, a+slide, false)
			if fr[len(fr)-1].Function != s.name {
				t.Errorf("%#x in %s: got %q", a, s.name, fr[len(fr)-1].Function)
			}
		}
		if strings.HasPrefix(s.name, "main.") {
			nmain++
		}
		checked++
	}
	if nmain < 4 || checked < 300 {
		t.Fatalf("checked only %d functions (%d main.*)", checked, nmain)
	}
	t.Logf("checked %d functions", checked)
}

func TestGopclntabELF(t *testing.T) {
	dir := t.TempDir()
	for _, mode := range []string{"exe", "pie"} {
		t.Run(mode, func(t *testing.T) {
			full := buildGo(t, dir, "full-"+mode, runtime.GOOS, runtime.GOARCH, "-buildmode="+mode)
			stripped := buildGo(t, dir, "stripped-"+mode, runtime.GOOS, runtime.GOARCH, "-buildmode="+mode, "-ldflags=-s -w")
			f, err := elf.Open(stripped)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Symbols(); err == nil {
				t.Fatal("the -s build still has .symtab")
			}
			f.Close()
			base := uint64(0)
			if mode == "pie" {
				base = 0x55d1c2a00000
			}
			img := execImage(t, stripped, base)
			checkGoNames(t, img, goNM(t, full), base)
			checkGoLines(t, img, full, base)
			// Unstripped: names from .symtab, lines from the pclntab
			// read lazily, go:func.* from .symtab.
			checkGoLines(t, execImage(t, full, base), full, base)
		})
	}
}

// checkGoLines compares, at every other byte of the main.* functions and
// every 97th of the others,
// the frames with `go tool addr2line` on the unstripped build: the
// innermost frame's file:line (in inlined code, the inlined body's) and the
// physical function's name. Inlined code must get its inlined frames.
func checkGoLines(t *testing.T, img *images.Image, full string, base uint64) {
	t.Helper()
	checkGoLinesWith(t, New(Options{}), img, full, base, false)
}

// checkGoLinesWith is checkGoLines through cache c. With dwarf, an
// address may have no line where Go's DWARF has no row (autogenerated
// functions; a few function entries, whose sequence starts one
// instruction in), if the function is right.
func checkGoLinesWith(t *testing.T, c *Cache, img *images.Image, full string, base uint64, dwarf bool) {
	t.Helper()
	var addrs []uint64
	for _, s := range goNM(t, full) {
		step := uint64(97) // and a sample of every other function
		if strings.HasPrefix(s.name, "main.") {
			step = 2
		}
		for a := s.addr; a < s.addr+s.size; a += step {
			addrs = append(addrs, a)
		}
	}
	var in bytes.Buffer
	for _, a := range addrs {
		fmt.Fprintf(&in, "%#x\n", a)
	}
	cmd := exec.Command(goTool(t), "tool", "addr2line", full)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go tool addr2line: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2*len(addrs) {
		t.Fatalf("addr2line gave %d lines for %d addresses", len(lines), len(addrs))
	}
	inlined, bad, noRow := 0, 0, 0
	for i, a := range addrs {
		if lines[2*i] == "?" || lines[2*i] == "go:buildid" {
			continue // not a function in the pclntab
		}
		fr := c.Symbolize(img, a+base, false)
		got := fmt.Sprintf("%s:%d", fr[0].File, fr[0].Line)
		fn := fr[len(fr)-1].Function
		if dwarf && len(fr) == 1 && fr[0].Line == 0 && fn == lines[2*i] {
			if !strings.HasPrefix(lines[2*i+1], "<autogenerated>:") {
				noRow++
			}
			continue
		}
		if strings.HasSuffix(lines[2*i+1], ":-1") {
			// No line (padding after the function's code): none here
			// either.
			if len(fr) != 1 || fr[0].Line != 0 || fn != lines[2*i] {
				t.Errorf("%#x: got %+v, addr2line %s with no line", a, fr, lines[2*i])
			}
			continue
		}
		if want := lines[2*i+1]; got != want || fn != lines[2*i] {
			if bad++; bad <= 10 {
				t.Errorf("%#x: got %s %s (%d frames), addr2line %s %s", a, fn, got, len(fr), lines[2*i], want)
			}
		}
		for j, f := range fr {
			if f.Inlined != (j < len(fr)-1) || f.Function == "" || f.File == "" || f.Line <= 0 {
				t.Errorf("%#x: frame %d of %d: %+v", a, j, len(fr), f)
			}
		}
		if len(fr) > 1 {
			inlined++
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d addresses disagree with go tool addr2line", bad, len(addrs))
	}
	if inlined == 0 {
		t.Errorf("none of %d addresses is in inlined code: the program inlines main.small", len(addrs))
	}
	if noRow > len(addrs)/100 {
		t.Errorf("%d of %d addresses have no DWARF line", noRow, len(addrs))
	}
	t.Logf("%d addresses agree with go tool addr2line, %d with inlined frames", len(addrs), inlined)
}

func TestGopclntabMachO(t *testing.T) {
	dir := t.TempDir()
	for _, arch := range []string{"arm64", "amd64"} {
		t.Run(arch, func(t *testing.T) {
			full := buildGo(t, dir, "full-"+arch, "darwin", arch)
			stripped := buildGo(t, dir, "stripped-"+arch, "darwin", arch, "-ldflags=-s -w")
			const slide = 0x1c000
			img, f, err := images.MachOImageFromFile(stripped, "", 0)
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
			img.Start += slide
			img.Limit += slide
			nm := goNM(t, full)
			// The stripped image must not name these from its own
			// symbol table.
			m, err := images.OpenMachO(stripped, "")
			if err != nil {
				t.Fatal(err)
			}
			tab, err := MachOTable("x", m.MachO, m.R, m.Size, nil)
			m.Close()
			if err != nil {
				t.Fatal(err)
			}
			if tab.lines == nil {
				t.Fatal("no pclntab LineSource: the stripped table did not use __gopclntab")
			}
			checkGoNames(t, img, nm, slide)
			checkGoLines(t, img, full, slide)
			fimg, ff, err := images.MachOImageFromFile(full, "", 0)
			if err != nil {
				t.Fatal(err)
			}
			ff.Close()
			fimg.Start += slide
			fimg.Limit += slide
			checkGoLines(t, fimg, full, slide)
			// The same lines from the file's own __DWARF segment.
			dw := New(Options{Loaders: map[images.Format]Loader{images.FormatMachO: MachOLoader(MachOOptions{DWARFOnly: true})}})
			tab, err = dw.Table(fimg)
			if err != nil {
				t.Fatal(err)
			}
			ll, ok := tab.lines.(*lazyLines)
			if !ok {
				t.Fatalf("lines %T, want lazily read __DWARF", tab.lines)
			}
			if _, isDWARF := ll.source().(*DWARFLines); !isDWARF {
				t.Fatalf("lines %T (%v), want DWARF", ll.source(), ll.Err())
			}
			checkGoLinesWith(t, dw, fimg, full, slide, true)
		})
	}
}

// TestGopclntabAgreesWithGosym compares every function of the running
// test binary's own pclntab (read from its file) with debug/gosym.
func TestGopclntabAgreesWithGosym(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := f.Section(".gopclntab")
	if s == nil {
		s = f.Section(".data.rel.ro.gopclntab")
	}
	if s == nil {
		t.Fatal("test binary has no pclntab section")
	}
	data, err := s.Data()
	if err != nil {
		t.Fatal(err)
	}
	text := f.Section(".text").Addr
	gt, err := gosym.NewTable(nil, gosym.NewLineTable(data, text))
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseGopclntab(data, text)
	if err != nil {
		t.Fatal(err)
	}
	syms := p.Symbols(nil)
	if len(syms) != len(gt.Funcs) {
		t.Fatalf("%d symbols, gosym %d", len(syms), len(gt.Funcs))
	}
	lines := 0
	for i, fn := range gt.Funcs {
		if s := syms[i]; s.Name != fn.Name || s.Start != fn.Entry || s.Start+s.Size != fn.End {
			t.Fatalf("function %d: %+v, gosym %s %#x-%#x", i, s, fn.Name, fn.Entry, fn.End)
		}
		for _, pc := range []uint64{fn.Entry, (fn.Entry + fn.End) / 2} {
			if fr := p.Lines(pc); fr != nil {
				file, line, _ := gt.PCToLine(pc)
				if fr[0].File != file || fr[0].Line != line {
					t.Fatalf("%#x: %s:%d, gosym %s:%d", pc, fr[0].File, fr[0].Line, file, line)
				}
				lines++
			}
		}
	}
	t.Logf("%d functions, %d lines agree with debug/gosym", len(syms), lines)
}

func TestGopclntabLinesDoNotAllocateMuch(t *testing.T) {
	exe, _ := os.Executable()
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := f.Section(".gopclntab").Data()
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseGopclntab(data, f.Section(".text").Addr)
	if err != nil {
		t.Fatal(err)
	}
	syms := p.Symbols(nil)
	pc := syms[len(syms)/2].Start
	if n := testing.AllocsPerRun(100, func() { p.Lines(pc) }); n > 1 {
		t.Fatalf("Lines allocates %v times, want at most the returned slice", n)
	}
}

func FuzzGopclntab(f *testing.F) {
	exe, err := os.Executable()
	if err == nil {
		if ef, err := elf.Open(exe); err == nil {
			if s := ef.Section(".gopclntab"); s != nil {
				if d, err := s.Data(); err == nil {
					f.Add(d[:min(len(d), 4096)], uint64(0x401000))
				}
			}
			ef.Close()
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, text uint64) {
		p, err := ParseGopclntab(data, text)
		if err != nil {
			return
		}
		syms := p.Symbols(nil)
		if len(syms) > p.Len() {
			t.Fatalf("%d symbols from %d functions", len(syms), p.Len())
		}
		for i, s := range syms {
			if i > 64 {
				break
			}
			p.Lines(s.Start)
			p.Lines(s.Start + s.Size/2)
		}
		p.Lines(text)
	})
}

// tinyPclntab builds a Go 1.20 pclntab by hand: main.a at text+0 and
// main.b at text+16, 16 bytes each, both at a.go:10.
func tinyPclntab() []byte {
	le := binary.LittleEndian
	b := make([]byte, 72)
	le.PutUint32(b, go120Magic)
	b[6], b[7] = 1, 8
	b = append(b, "main.a\x00main.b\x00"...)    // 72
	b = le.AppendUint32(b, 0)                   // cutab at 86
	b = append(b, "a.go\x00"...)                // filetab at 90
	b = append(b, 0, 22, 16, 0, 2, 16, 0, 0, 0) // pctab at 95: pcln at 1, pcfile at 4
	ft := len(b)                                // functab at 104
	for _, v := range []uint32{0, 20, 16, 64, 32} {
		b = le.AppendUint32(b, v)
	}
	for i, name := range []uint32{0, 7} {
		b = le.AppendUint32(b, uint32(16*i))
		b = le.AppendUint32(b, name)
		b = append(b, make([]byte, 12)...)
		b = le.AppendUint32(b, 4) // pcfile
		b = le.AppendUint32(b, 1) // pcln
		b = append(b, make([]byte, 16)...)
	}
	for i, v := range []uint64{2, 1, 0x401000, 72, 86, 90, 95, uint64(ft)} {
		le.PutUint64(b[8+8*i:], v)
	}
	return b
}

func TestGopclntabTiny(t *testing.T) {
	p, err := ParseGopclntab(tinyPclntab(), 0)
	if err != nil {
		t.Fatal(err)
	}
	syms := p.Symbols(nil)
	want := []Symbol{{"main.a", 0x401000, 16}, {"main.b", 0x401010, 16}}
	if fmt.Sprint(syms) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", syms, want)
	}
	if fr := p.Lines(0x401017); len(fr) != 1 || fr[0].File != "a.go" || fr[0].Line != 10 {
		t.Fatalf("Lines = %+v", fr)
	}
	if fr := p.Lines(0x401020); fr != nil {
		t.Fatalf("Lines past the end = %+v", fr)
	}
	// Every truncation fails or parses without panicking.
	d := tinyPclntab()
	for n := range d {
		if p, err := ParseGopclntab(d[:n], 0); err == nil {
			p.Symbols(nil)
			p.Lines(0x401008)
		}
	}
}

// BenchmarkGoLineCursorSorted answers a batch as `macprof symbolize` does:
// random addresses over the test binary's text, a dozen per function,
// sorted, each asked of one goLineCursor in turn (ns/op is per address).
func BenchmarkGoLineCursorSorted(b *testing.B) {
	p, syms := testBinaryPclntab(b)
	lo, hi := syms[0].Start, syms[len(syms)-1].Start+syms[len(syms)-1].Size
	r := rand.New(rand.NewPCG(1, 2))
	addrs := make([]uint64, 12*len(syms))
	for i := range addrs {
		addrs[i] = lo + r.Uint64N(hi-lo)
	}
	slices.Sort(addrs)
	for b.Loop() {
		c := goLineCursor{t: p}
		for _, a := range addrs {
			c.outerLine(a)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(addrs)), "ns/addr")
}
