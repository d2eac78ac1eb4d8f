package symcache

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/testprog"
)

// execImage maps the executable PT_LOAD segment of an ELF file at a
// PIE-style load address, the way /proc/PID/maps shows it.
func execImage(t *testing.T, path string, base uint64) *images.Image {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			pageOff := p.Off &^ 0xfff
			start := base + (p.Vaddr &^ 0xfff)
			return &images.Image{Path: path, Format: images.FormatELF, Start: start, Limit: start + p.Memsz + (p.Vaddr & 0xfff), Offset: pageOff}
		}
	}
	t.Fatalf("%s has no executable segment", path)
	return nil
}

// TestELFAgainstLLVMSymbolizer symbolizes every address of every function
// of a PIE C program loaded at a random-looking base and compares with
// llvm-symbolizer given the link-time address.
func TestELFAgainstLLVMSymbolizer(t *testing.T) {
	sym, err := exec.LookPath("llvm-symbolizer")
	if err != nil {
		t.Fatal("llvm-symbolizer is needed as the oracle: apt-get install llvm, or run scripts/install-deps.sh")
	}
	bin := testprog.BuildC(t, "deep.c")
	const base = 0x55d1c2a00000
	img := execImage(t, bin, base)
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	syms, _ := f.Symbols()
	f.Close()
	var addrs []uint64
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 && s.Size > 0 {
			for a := s.Value; a < s.Value+s.Size; a += 3 {
				addrs = append(addrs, a)
			}
		}
	}
	if len(addrs) < 100 {
		t.Fatalf("only %d addresses to check", len(addrs))
	}
	var in bytes.Buffer
	for _, a := range addrs {
		fmt.Fprintf(&in, "0x%x\n", a)
	}
	cmd := exec.Command(sym, "--obj="+bin, "--functions=linkage", "--no-inlines")
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for i := 0; sc.Scan(); i++ {
		if i%3 == 0 {
			want = append(want, sc.Text())
		}
	}
	c := New(Options{})
	bad := 0
	for i, a := range addrs {
		fr := c.Symbolize(img, base+a, false)
		if got := fr[len(fr)-1].Function; got != want[i] {
			bad++
			if bad < 10 {
				t.Errorf("%#x: got %q, llvm-symbolizer %q", a, got, want[i])
			}
		}
	}
	t.Logf("%d addresses compared", len(addrs))
}

// TestELFSharedLibraryBias symbolizes libc's exported functions through a
// mapping at an arbitrary base and checks name and offset.
func TestELFSharedLibraryBias(t *testing.T) {
	out, err := exec.Command("sh", "-c", "ldconfig -p | awk '/libc.so.6 .*x86-64|libc.so.6 .*AArch64/{print $NF; exit}'").Output()
	libc := strings.TrimSpace(string(out))
	if err != nil || libc == "" {
		t.Fatal("cannot find libc.so.6 with ldconfig -p")
	}
	const base = 0x7f0000000000
	img := execImage(t, libc, base)
	f, err := elf.Open(libc)
	if err != nil {
		t.Fatal(err)
	}
	dyn, _ := f.DynamicSymbols()
	f.Close()
	// Symbols only: this test is about the bias (the DWARF of a debug
	// file, when installed, names functions its own way).
	c := New(Options{Loaders: map[images.Format]Loader{images.FormatELF: func(img *images.Image) (*Table, error) {
		t, err := LoadELF(img)
		if t != nil {
			t.lines = nil
		}
		return t, err
	}}})
	checked := 0
	for _, s := range dyn {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Value == 0 || s.Size < 8 || elf.ST_BIND(s.Info) != elf.STB_GLOBAL {
			continue
		}
		fr := c.Symbolize(img, base+s.Value+5, false)
		// Aliases share an address; the chosen name must be one of them
		// at the same start.
		tab, _ := c.Table(img)
		name, start, _ := tab.Lookup(s.Value + 5)
		if start != s.Value || fr[0].Offset != 5 || fr[0].Function != name {
			t.Errorf("%s+5: got %q+%d (start %#x), want start %#x", s.Name, fr[0].Function, fr[0].Offset, start, s.Value)
		}
		checked++
	}
	if checked < 500 {
		t.Fatalf("checked only %d libc functions", checked)
	}
	t.Logf("checked %d libc functions", checked)
}

func TestFrameNameFallback(t *testing.T) {
	f := Frame{Image: "libfoo.so", Offset: 0x1a2b}
	if got := f.Name(); got != "libfoo.so+0x1a2b" {
		t.Fatalf("Name() = %q", got)
	}
	if s := strconv.Quote(Frame{Function: "main", Image: "x"}.Name()); s != `"main"` {
		t.Fatalf("Name() = %s", s)
	}
}
