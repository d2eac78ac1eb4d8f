package symcache

import (
	"debug/elf"
	"fmt"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/macprof/macprof/internal/testprog"
)

// buildInlineCpp compiles testprog/src/inline.cpp with g++ -O2 -g (C++:
// namespaces, classes with member functions, DW_AT_specification) and
// returns the binary.
func buildInlineCpp(t testing.TB, extra ...string) string {
	t.Helper()
	src := filepath.Join(testprog.Dir(), "inline.cpp")
	bin := filepath.Join(t.TempDir(), "inlcpp")
	args := append([]string{"-O2", "-g", "-o", bin, src}, extra...)
	if out, err := exec.Command(tool(t, "g++"), args...).CombinedOutput(); err != nil {
		t.Fatalf("g++ %v: %v\n%s", args, err, out)
	}
	return bin
}

// TestDWARFEntriesAgreeWithDebugDWARF checks that the units found from
// .debug_info's unit headers are those debug/dwarf's reader finds, and
// that every unit indexed by going over .debug_info's bytes (dwarfInfo)
// is the index debug/dwarf's
// reader gives, in both depths (OuterLine's and Lines'), line rows (run by
// lineRows) included: C and C++ programs
// built here (DWARF 5 and 4, assembly units, cold parts in their own
// ranges), and node, glibc's debug file and a -g libpython where present.
func TestDWARFEntriesAgreeWithDebugDWARF(t *testing.T) {
	objects := map[string]string{
		"multicu":    buildMultiCU(t),
		"inlineC":    buildInlineC(t),
		"inlineC4":   buildInlineC(t, "-gdwarf-4"),
		"inlineCpp":  buildInlineCpp(t),
		"inlineCpp4": buildInlineCpp(t, "-gdwarf-4"),
	}
	for _, o := range largeDWARFObjects() {
		if o.path != "" {
			objects[o.name] = o.path
		}
	}
	if _, err := exec.LookPath(nodeBinary); err == nil {
		objects["node"] = nodeBinary
	}
	for name, path := range objects {
		t.Run(name, func(t *testing.T) {
			f, err := elf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			d, info, err := elfDWARFUnrelocated(f)
			if err != nil {
				t.Fatal(err)
			}
			if info == nil {
				t.Fatal("no dwarfInfo: its unit headers did not read")
			}
			fast, err := newDWARFLines(d, info, false)
			if err != nil {
				t.Fatal(err)
			}
			slow, err := newDWARFLines(d, nil, false)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(fast.tops, slow.tops) || !reflect.DeepEqual(fast.code, slow.code) ||
				!reflect.DeepEqual(fast.spans, slow.spans) || len(fast.units) != len(slow.units) || len(fast.rest) != len(slow.rest) {
				t.Fatalf("units: %d tops, %d spans, %d units, %d without ranges; debug/dwarf %d, %d, %d, %d",
					len(fast.tops), len(fast.spans), len(fast.units), len(fast.rest),
					len(slow.tops), len(slow.spans), len(slow.units), len(slow.rest))
			}
			funcs, nodes, rows := 0, 0, 0
			for i := range fast.units {
				u := &fast.units[i]
				if u.cu.Offset != slow.units[i].cu.Offset || u.order != slow.units[i].order {
					t.Fatalf("unit %d at %#x (order %d); debug/dwarf's at %#x (%d)", i, u.cu.Offset, u.order,
						slow.units[i].cu.Offset, slow.units[i].order)
				}
				if c, ok := fast.cursor(u.cu); !ok || c.r != nil {
					t.Fatalf("unit %d at %#x is read through debug/dwarf (ok %v)", i, u.cu.Offset, ok)
				}
				if lr, err := d.LineReader(u.cu); err == nil && lr != nil {
					var x unitIndex
					left := fast.rowsLeft
					ran := fast.lineRows(&x, lr, u.cu, func(string) int32 { return 0 })
					fast.rowsLeft = left
					if !ran {
						t.Fatalf("unit %d at %#x: its line program is run by debug/dwarf", i, u.cu.Offset)
					}
					rows += len(x.rows)
				}
				for _, what := range []int{indexOuter, indexFull} {
					got := fast.index(u.cu, u.order, what, nil)
					want := slow.index(slow.units[i].cu, slow.units[i].order, what, nil)
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("unit %d at %#x (depth %d): %d funcs, %d nodes; debug/dwarf %d, %d",
							i, u.cu.Offset, what, len(got.funcs), len(got.nodes), len(want.funcs), len(want.nodes))
					}
					funcs += len(got.funcs)
					nodes += len(got.nodes)
				}
			}
			if funcs == 0 || nodes == 0 || rows == 0 {
				t.Fatalf("%d funcs, %d nodes, %d rows: the comparison saw nothing", funcs, nodes, rows)
			}
			if fast.nodesLeft != slow.nodesLeft || fast.rangesLeft != slow.rangesLeft || fast.rowsLeft != slow.rowsLeft {
				t.Errorf("budgets left %d %d %d, debug/dwarf %d %d %d", fast.nodesLeft, fast.rangesLeft, fast.rowsLeft,
					slow.nodesLeft, slow.rangesLeft, slow.rowsLeft)
			}
			t.Logf("%d units, %d funcs, %d nodes, %d rows", len(fast.units), funcs, nodes, rows)
		})
	}
}

// TestDWARFUnitLineTableReadOnce checks that a unit whose line table was
// read for an address past its ranges is not read again for its outer or
// full index, and that those give the frames of a DWARFLines that read
// them first, at every byte of .text of a program of several units.
func TestDWARFUnitLineTableReadOnce(t *testing.T) {
	f, err := elf.Open(buildMultiCU(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	open := func() *DWARFLines {
		d, info, err := elfDWARF(f)
		if err != nil {
			t.Fatal(err)
		}
		l, err := newDWARFLines(d, info, false)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	l := open()
	for i := range l.units {
		l.unit(int32(i), indexRows)
	}
	left := l.rowsLeft
	if left == maxLineRows {
		t.Fatal("no unit has a line row")
	}
	for i := range l.units {
		l.unit(int32(i), indexOuter)
		l.unit(int32(i), indexFull)
	}
	if l.rowsLeft != left {
		t.Errorf("outer and full indexes read %d rows again", left-l.rowsLeft)
	}
	fresh := open()
	for _, a := range textSection(t, f, 1) {
		if got, want := fmt.Sprint(l.Lines(a)), fmt.Sprint(fresh.Lines(a)); got != want {
			t.Fatalf("%#x: %s, read first: %s", a, got, want)
		}
		fn, file, line, ok := l.OuterLine(a)
		fn2, file2, line2, ok2 := fresh.OuterLine(a)
		if fn != fn2 || file != file2 || line != line2 || ok != ok2 {
			t.Fatalf("%#x: OuterLine %q %q %d %v, read first: %q %q %d %v", a, fn, file, line, ok, fn2, file2, line2, ok2)
		}
	}
}
