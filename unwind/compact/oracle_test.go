package compact

import (
	"bufio"
	"bytes"
	"debug/macho"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// fixtures are built by testdata/build.sh.
var fixtureArchs = []string{"arm64", "x86_64"}

func fixturePath(arch string) string { return filepath.Join("testdata", "prog_"+arch) }

// tool finds an external program the test needs, or fails saying what is
// missing.
func tool(t testing.TB, names ...string) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	t.Fatalf("this test needs %s on PATH (Debian: apt-get install llvm-14)", strings.Join(names, " or "))
	return ""
}

// objdumpUnwind is what llvm-objdump --unwind-info prints of a section.
type objdumpUnwind struct {
	version       uint32
	common        []uint32
	personalities []uint32
	index         []IndexEntry // Kind left zero
	lsda          []LSDAEntry
	entries       []Entry
}

var (
	reHex      = `0x([0-9a-fA-F]+)`
	reVersion  = regexp.MustCompile(`^\s*Version:\s+` + reHex)
	reCommon   = regexp.MustCompile(`^\s*encoding\[(\d+)\]: ` + reHex + `$`)
	rePers     = regexp.MustCompile(`^\s*personality\[(\d+)\]: ` + reHex + `$`)
	reIndex    = regexp.MustCompile(`^\s*\[(\d+)\]: function offset=` + reHex + `, 2nd level page offset=` + reHex + `, LSDA offset=` + reHex + `$`)
	reLSDA     = regexp.MustCompile(`^\s*\[(\d+)\]: function offset=` + reHex + `, LSDA offset=` + reHex + `$`)
	reEntry    = regexp.MustCompile(`^\s*\[(\d+)\]: function offset=` + reHex + `, encoding(?:\[\d+\])?=` + reHex + `$`)
	reSections = regexp.MustCompile(`^\s*(Common encodings|Personality functions|Top level indices|LSDA descriptors|Second level indices)`)
)

func hexU32(t *testing.T, s string) uint32 {
	t.Helper()
	v, err := strconv.ParseUint(s, 16, 32)
	if err != nil {
		t.Fatalf("llvm-objdump printed %q: %v", s, err)
	}
	return uint32(v)
}

// runObjdump parses llvm-objdump-14 --unwind-info of path.
func runObjdump(t *testing.T, path string) objdumpUnwind {
	t.Helper()
	out, err := exec.Command(tool(t, "llvm-objdump-14", "llvm-objdump"), "--unwind-info", path).Output()
	if err != nil {
		t.Fatalf("llvm-objdump --unwind-info %s: %v", path, err)
	}
	var u objdumpUnwind
	part := ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if m := reSections.FindStringSubmatch(line); m != nil {
			part = m[1]
			continue
		}
		if m := reVersion.FindStringSubmatch(line); m != nil {
			u.version = hexU32(t, m[1])
			continue
		}
		switch part {
		case "Common encodings":
			if m := reCommon.FindStringSubmatch(line); m != nil {
				u.common = append(u.common, hexU32(t, m[2]))
			}
		case "Personality functions":
			if m := rePers.FindStringSubmatch(line); m != nil {
				u.personalities = append(u.personalities, hexU32(t, m[2]))
			}
		case "Top level indices":
			if m := reIndex.FindStringSubmatch(line); m != nil {
				u.index = append(u.index, IndexEntry{FunctionOffset: hexU32(t, m[2]), SecondLevelPage: hexU32(t, m[3]), LSDAIndexOffset: hexU32(t, m[4])})
			}
		case "LSDA descriptors":
			if m := reLSDA.FindStringSubmatch(line); m != nil {
				u.lsda = append(u.lsda, LSDAEntry{FunctionOffset: hexU32(t, m[2]), LSDAOffset: hexU32(t, m[3])})
			}
		case "Second level indices":
			if m := reEntry.FindStringSubmatch(line); m != nil {
				u.entries = append(u.entries, Entry{Start: hexU32(t, m[2]), Encoding: hexU32(t, m[3])})
			}
		}
	}
	if len(u.index) == 0 || len(u.entries) == 0 {
		t.Fatalf("llvm-objdump --unwind-info %s printed no index or entries:\n%s", path, out)
	}
	return u
}

// openMachO opens a Mach-O file for the test's duration.
func openMachO(t testing.TB, path string) *macho.File {
	t.Helper()
	f, err := macho.Open(path)
	if err != nil {
		t.Fatalf("%v (rebuild with sh unwind/compact/testdata/build.sh)", err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func parseFixture(t *testing.T, arch string) (*macho.File, *Table, *Section) {
	t.Helper()
	f := openMachO(t, fixturePath(arch))
	tab, sec, err := FromMachO(f)
	if err != nil {
		t.Fatal(err)
	}
	return f, tab, sec
}

func eqSlices[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestParseMatchesObjdump compares every field of the fixtures'
// __unwind_info with what llvm-objdump --unwind-info prints.
//
// big_arm64 adds an __unwind_info of several second-level pages, the
// dwarf_ fixtures a DWARF-mode entry.
func TestParseMatchesObjdump(t *testing.T) {
	for _, name := range []string{"prog_arm64", "prog_x86_64", "big_arm64", "dwarf_arm64", "dwarf_x86_64"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", name)
			want := runObjdump(t, path)
			tab, sec, err := FromMachO(openMachO(t, path))
			if err != nil {
				t.Fatal(err)
			}
			if sec.Version != want.version {
				t.Errorf("version %d, objdump %d", sec.Version, want.version)
			}
			if !eqSlices(sec.CommonEncodings, want.common) {
				t.Errorf("common encodings %#x, objdump %#x", sec.CommonEncodings, want.common)
			}
			if !eqSlices(sec.Personalities, want.personalities) {
				t.Errorf("personalities %#x, objdump %#x", sec.Personalities, want.personalities)
			}
			index := make([]IndexEntry, len(sec.Index))
			for i, e := range sec.Index {
				e.Kind = 0
				index[i] = e
			}
			if !eqSlices(index, want.index) {
				t.Errorf("index %+v, objdump %+v", index, want.index)
			}
			if !eqSlices(sec.LSDA, want.lsda) {
				t.Errorf("LSDA %+v, objdump %+v", sec.LSDA, want.lsda)
			}
			if !eqSlices(sec.Entries, want.entries) {
				t.Errorf("entries %#x\nobjdump %#x", sec.Entries, want.entries)
			}
			for i, e := range want.entries {
				if i+1 < len(want.entries) && want.entries[i+1].Start == e.Start {
					continue // an empty range
				}
				if r, ok := tab.Lookup(e.Start); !ok || r.Start != e.Start || r.Encoding != e.Encoding {
					t.Errorf("Lookup(%#x) = %+v, %v; objdump lists encoding %#x", e.Start, r, ok, e.Encoding)
				}
			}
			if tab.Len() != len(want.entries) {
				t.Errorf("table of %d ranges, objdump lists %d entries", tab.Len(), len(want.entries))
			}
			// What each fixture is there to exercise.
			if name == "big_arm64" && len(sec.Index) < 3 {
				t.Errorf("big_arm64 has %d second-level pages, want several", len(sec.Index)-1)
			}
			if strings.HasPrefix(name, "dwarf_") {
				if r, ok := tab.Lookup(sec.Entries[0].Start); !ok || r.Kind != KindDWARF {
					t.Errorf("%s: first entry %+v, want odd's, in DWARF mode", name, r)
				}
				return
			}
			if name != "big_arm64" && (len(sec.Personalities) == 0 || len(sec.LSDA) == 0 || len(sec.CommonEncodings) == 0) {
				t.Errorf("%s has %d common encodings, %d personalities and %d LSDA entries, want some of each", name, len(sec.CommonEncodings), len(sec.Personalities), len(sec.LSDA))
			}
		})
	}
}
