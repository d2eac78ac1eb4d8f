package symcache

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"testing"

	"github.com/macprof/macprof/internal/testprog"
)

// buildMultiCU compiles testprog/src/multicu with gcc and returns the
// binary. It is a C program of several compile units: inline functions of
// a shared header inlined in each, cold parts split into .text.unlikely (a
// unit and a subprogram with DW_AT_ranges), a function removed by
// --gc-sections, a unit in DWARF 4, one without debug information and, on
// amd64, three assembly units: s.S with what gas writes for it (s.c
// elsewhere), r.S with a hand-written unit that has a line program and a
// subprogram but no ranges of its own, and g.S with one whose line program
// goes on past its high_pc (as glibc's units do into their padding).
func buildMultiCU(t testing.TB) string {
	t.Helper()
	gcc := tool(t, "gcc")
	src, dir := filepath.Join(testprog.Dir(), "multicu"), t.TempDir()
	units := [][]string{
		{"a.c", "-O2", "-g", "-ffunction-sections"},
		{"b.c", "-O2", "-g"},
		{"d.c", "-O2", "-gdwarf-4"},
		{"e.c", "-O2"},
		{"main.c", "-O2", "-g"},
	}
	if runtime.GOARCH == "amd64" {
		units = append(units, []string{"s.S", "-g"}, []string{"r.S"}, []string{"g.S"})
	} else {
		units = append(units, []string{"s.c", "-O2"})
	}
	var objs []string
	for _, u := range units {
		obj := filepath.Join(dir, u[0]+".o")
		args := append([]string{"-c", "-o", obj, filepath.Join(src, u[0])}, u[1:]...)
		if out, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %v: %v\n%s", args, err, out)
		}
		objs = append(objs, obj)
	}
	bin := filepath.Join(dir, "multi")
	args := append([]string{"-Wl,--gc-sections", "-o", bin}, objs...)
	if out, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %v: %v\n%s", args, err, out)
	}
	return bin
}

// openDWARF returns the DWARF of the ELF file at path.
func openDWARF(t testing.TB, path string) (*elf.File, *dwarf.Data) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	d, err := f.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	return f, d
}

// loadedUnits counts the units of l with ranges whose index was built.
func loadedUnits(l *DWARFLines) int {
	n := 0
	for i := range l.units {
		if l.units[i].idx.Load() != nil {
			n++
		}
	}
	return n
}

// aliasOf reports whether got and want differ only in the outermost
// frame's function, both of them among aliases.
func aliasOf(got, want []Frame, aliases []string) bool {
	if len(got) == 0 || len(got) != len(want) {
		return false
	}
	g, w := got[len(got)-1], want[len(want)-1]
	g.Function, w.Function = "", ""
	return fmt.Sprint(got[:len(got)-1]) == fmt.Sprint(want[:len(want)-1]) && g == w &&
		slices.Contains(aliases, got[len(got)-1].Function) && slices.Contains(aliases, want[len(want)-1].Function)
}

// compareLazyEager looks up every address in addrs in the lazy index and
// in the eager one of the same DWARF and fails at the first few that
// differ, but for the choice between aliases (subprograms of the same
// start), which the eager index left to an unstable sort. It returns how
// many addresses had a line and inlined frames.
func compareLazyEager(t *testing.T, d *dwarf.Data, addrs []uint64) (withLine, inlined int) {
	t.Helper()
	lazy, err := NewDWARFLines(d)
	if err != nil {
		t.Fatal(err)
	}
	eager, err := newEagerDWARFLines(d, false)
	if err != nil {
		t.Fatal(err)
	}
	bad, alias := 0, 0
	for _, a := range addrs {
		got, want := lazy.Lines(a), eager.Lines(a)
		if len(want) > 0 && want[0].Line > 0 {
			withLine++
		}
		if len(want) > 1 {
			inlined++
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			if aliasOf(got, want, eager.aliases(a)) {
				alias++
			} else if bad++; bad <= 5 {
				t.Errorf("%#x: lazy %+v, eager %+v", a, got, want)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d addresses differ", bad, len(addrs))
	}
	if alias > 0 {
		t.Logf("%d addresses named after another alias of their function", alias)
	}
	return withLine, inlined
}

// textSection returns every address of f's .text, step bytes apart.
func textSection(t testing.TB, f *elf.File, step uint64) []uint64 {
	t.Helper()
	s := f.Section(".text")
	if s == nil {
		t.Fatal("no .text")
	}
	var out []uint64
	for a := s.Addr; a < s.Addr+s.Size; a += step {
		out = append(out, a)
	}
	return out
}

// TestDWARFLinesLazyMultiCU checks that reading units on first need gives
// the frames of an index of every unit read at once, at every byte of
// .text of a program of several units (and a little outside it), and
// that one lookup reads only the unit that covers it.
func TestDWARFLinesLazyMultiCU(t *testing.T) {
	f, d := openDWARF(t, buildMultiCU(t))
	l, err := NewDWARFLines(d)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.units) < 4 {
		t.Fatalf("%d units with ranges, want a.c, b.c, d.c, main.c", len(l.units))
	}
	if n := loadedUnits(l); n != 0 {
		t.Fatalf("%d units read before any lookup", n)
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == "fb" {
			if fr := l.Lines(s.Value); len(fr) == 0 || fr[len(fr)-1].Function != "fb" {
				t.Fatalf("frames at fb: %+v", fr)
			}
		}
	}
	if n := loadedUnits(l); n != 1 {
		t.Errorf("a lookup in fb read %d units, want 1", n)
	}
	// fe's unit (e.c) has no debug information: a lookup there reads
	// the line table of the unit before it, not its subprograms.
	past, err := NewDWARFLines(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == "fe" {
			if fr := past.Lines(s.Value); len(fr) != 0 {
				t.Errorf("frames at fe, in a unit without DWARF: %+v", fr)
			}
		}
	}
	if n := loadedUnits(past); n != 0 {
		t.Errorf("a lookup in fe read the subprograms of %d units, want none", n)
	}

	if runtime.GOARCH == "amd64" {
		// r.S's unit has no ranges: it is read at once and gives
		// norange_fn its lines.
		if len(l.rest) != 1 {
			t.Errorf("%d units without ranges read at once, want r.S's", len(l.rest))
		}
		// g.S's unit covers gap_fn's first instruction (3 bytes), its
		// line program all of it: past the unit, the line is still
		// given, from the unit that ends nearest before.
		for _, s := range syms {
			for a := s.Value; a < s.Value+s.Size; a++ {
				fr := l.Lines(a)
				switch {
				case s.Name == "norange_fn" && (len(fr) != 1 || fr[0].Function != "norange_fn" || fr[0].File != "norange.S" || fr[0].Line < 10 || fr[0].Line > 12):
					t.Errorf("%#x in norange_fn: %+v", a, fr)
				case s.Name == "gap_fn" && a < s.Value+3 && (len(fr) != 1 || fr[0].Function != "gap_fn" || fr[0].Line != 20):
					t.Errorf("%#x in gap_fn: %+v", a, fr)
				case s.Name == "gap_fn" && a >= s.Value+3 && (len(fr) != 1 || fr[0].Function != "" || fr[0].File != "gap.S" || fr[0].Line < 21):
					t.Errorf("%#x in gap_fn, past its unit: %+v", a, fr)
				}
			}
		}
	}

	addrs := textSection(t, f, 1)
	lo, hi := addrs[0], addrs[len(addrs)-1]
	for a := lo - 64; a < lo; a++ {
		addrs = append(addrs, a)
	}
	for a := hi + 1; a < hi+64; a++ {
		addrs = append(addrs, a)
	}
	addrs = append(addrs, 0, 1, ^uint64(0))
	withLine, inlined := compareLazyEager(t, d, addrs)
	if withLine < len(addrs)/4 || inlined == 0 {
		t.Errorf("%d addresses with a line, %d with inlined frames of %d: the program should have both", withLine, inlined, len(addrs))
	}
	t.Logf("%d addresses, %d with a line, %d with inlined frames", len(addrs), withLine, inlined)
}

// TestDWARFLinesLazyConcurrent looks up the program's addresses from
// several goroutines at once (units read by whichever comes first) and
// checks them against the eager index; run with -race.
func TestDWARFLinesLazyConcurrent(t *testing.T) {
	f, d := openDWARF(t, buildMultiCU(t))
	addrs := textSection(t, f, 1)
	eager, err := newEagerDWARFLines(d, false)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]string, len(addrs))
	for i, a := range addrs {
		want[i] = fmt.Sprint(eager.Lines(a))
	}
	l, err := NewDWARFLines(d)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each goroutine starts elsewhere so that they race for units.
			for k := range addrs {
				i := (k + g*len(addrs)/8) % len(addrs)
				if got := fmt.Sprint(l.Lines(addrs[i])); got != want[i] {
					errs <- fmt.Sprintf("%#x: %s, eager %s", addrs[i], got, want[i])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestDWARFLinesLazyLarge compares the lazy and the eager index at 3000
// addresses spread over the functions of glibc's debug file (libc6-dbg)
// and of a libpython built with -g, where present: thousands of units,
// most of them never read.
func TestDWARFLinesLazyLarge(t *testing.T) {
	for _, o := range largeDWARFObjects() {
		t.Run(o.name, func(t *testing.T) {
			if o.path == "" {
				t.Skip(o.absent)
			}
			f, d := openDWARF(t, o.path)
			addrs := spreadFuncAddrs(t, f, 3000)
			withLine, inlined := compareLazyEager(t, d, addrs)
			if withLine < len(addrs)/2 {
				t.Errorf("only %d of %d addresses have a line", withLine, len(addrs))
			}
			t.Logf("%d addresses, %d with a line, %d with inlined frames", len(addrs), withLine, inlined)
		})
	}
}

// nestedDWARFInfo returns DWARF 4 of one unit whose top entry (tag top)
// has a chain of n entries below it, each the only child of the one
// before, with no DW_AT_sibling and no null entries to end them, and its
// bytes as a dwarfInfo.
func nestedDWARFInfo(t *testing.T, top byte, n int) (*dwarf.Data, *dwarfInfo) {
	t.Helper()
	abbrev := []byte{1, top, 1, 0, 0, 2, byte(dwarf.TagStructType), 1, 0, 0, 0}
	body := []byte{4, 0, 0, 0, 0, 0, 8, 1} // version 4, abbrev offset 0, address size 8, entry 1
	body = append(body, bytes.Repeat([]byte{2}, n)...)
	info := append(binary.LittleEndian.AppendUint32(nil, uint32(len(body))), body...)
	d, err := dwarf.New(abbrev, nil, nil, info, nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	x := newDWARFInfo(info, abbrev, nil, binary.LittleEndian)
	if x == nil {
		t.Fatal("its unit header does not read")
	}
	return d, x
}

// TestDWARFLinesDeepNesting checks that entries nested a million deep in
// the last unit, under a compile unit or under a top entry that is not
// one, are read in a loop, not by debug/dwarf's SkipChildren, which
// recurses once per level (ten million levels overflow the 1 GB stack;
// the stack is limited to 8 MB here to show it with less); and so when
// they are gone over through .debug_info's bytes (dwarfInfo).
func TestDWARFLinesDeepNesting(t *testing.T) {
	old := debug.SetMaxStack(8 << 20)
	defer debug.SetMaxStack(old)
	for _, top := range []dwarf.Tag{dwarf.TagCompileUnit, dwarf.TagStructType} {
		for _, bytes := range []bool{false, true} {
			d, info := nestedDWARFInfo(t, byte(top), 1<<20)
			if !bytes {
				info = nil
			}
			l, err := newDWARFLines(d, info, false)
			if err != nil {
				t.Fatalf("%v (bytes %v): %v", top, bytes, err)
			}
			if fr := l.Lines(0x10); fr != nil {
				t.Errorf("%v (bytes %v): frames %+v from no code", top, bytes, fr)
			}
		}
	}
}
