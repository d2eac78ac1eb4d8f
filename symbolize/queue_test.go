package symbolize

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/macprof/macprof/demangle"
)

// TestResolveQueuesNamesUnread checks that resolve queues every named
// function it meets, mangled or not, without reading the name (the
// demangling reads a block of names at once; a name that is not mangled
// stays as it is), and that demangleQueued then leaves each name as
// demangle.Name gives it. (TestSymbolizeManyCXXNames has enough names for
// several goroutines.)
func TestResolveQueuesNamesUnread(t *testing.T) {
	cfg := Config{Binary: filepath.Join("..", "images", "testdata", "macho", "cxx_arm64")}
	s, err := open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	for a := s.img.Start; a < s.img.Limit; a += 4 {
		s.word(fmt.Appendf(nil, "%#x", a))
	}
	s.resolveInOrder()
	raw := slices.Clone(s.names)
	var named []int32
	plain := 0
	for i, n := range raw {
		if n != "" {
			named = append(named, int32(i))
			if !demangle.IsMangled(n) {
				plain++
			}
		}
	}
	if plain == 0 || plain == len(named) {
		t.Fatalf("names %q: want mangled ones and others", raw)
	}
	if queued := slices.Sorted(slices.Values(s.queued)); !slices.Equal(queued, named) {
		t.Fatalf("queued %v, want every named function %v (%q)", queued, named, raw)
	}
	s.demangleQueued()
	for i, n := range raw {
		if want := demangle.Name(n, demangle.Simplified); s.names[i] != want {
			t.Errorf("names[%d] = %q, want %q", i, s.names[i], want)
		}
	}
	if !slices.ContainsFunc(s.names, func(n string) bool { return strings.Contains(n, "geo::measure") }) {
		t.Errorf("no geo::measure among %q", s.names)
	}
}

// TestResolveWithoutLinesReadsNoName checks that resolve, in a table
// without lines, answers an address of a function already met from its
// slot alone: the name is not read again (names is emptied between the
// two lookups; a read of it would panic) and the answer has no file nor
// line name.
func TestResolveWithoutLinesReadsNoName(t *testing.T) {
	s := openWithoutLines(t)
	addr, err := ParseAddr("0x100000388") // geo::measure(Shape const&, int)
	if err != nil {
		t.Fatal(err)
	}
	first := unresolved
	s.resolve(&first, addr)
	if first.fn != 0 || len(s.names) != 1 || !strings.Contains(demangle.Name(s.names[0], demangle.Simplified), "geo::measure") {
		t.Fatalf("first answer %+v, names %q", first, s.names)
	}
	s.names = s.names[:0]
	again := unresolved
	s.resolve(&again, addr+8)
	if want := (found{fn: 0, name: -1, file: -1}); again != want {
		t.Errorf("second answer %+v, want %+v", again, want)
	}
}

// openWithoutLines opens the fixture cxx_arm64, whose table has no lines,
// to be closed at the test's end.
func openWithoutLines(t *testing.T) *symbolizer {
	t.Helper()
	s, err := open(Config{Binary: filepath.Join("..", "images", "testdata", "macho", "cxx_arm64")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	if s.table.HasLines() {
		t.Fatal("the fixture's table has lines")
	}
	return s
}
