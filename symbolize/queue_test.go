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
