package demangle

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"hash/fnv"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// cxxCorpusLibs are the Debian LLVM 14 family's shared libraries the C++
// corpus is drawn from (packages libllvm14, libclang-cpp14, libstdc++6),
// as patterns of their paths on any architecture.
var cxxCorpusLibs = []string{
	"/usr/lib/*/libLLVM-14.so.1",
	"/usr/lib/llvm-14/lib/libclang-cpp.so.14",
	"/usr/lib/*/libstdc++.so.6",
}

// cxxCorpusSize is how many symbols the corpus test compares.
const cxxCorpusSize = 20_000

// cxxCorpus returns cxxCorpusSize distinct Itanium names defined in the
// dynamic symbol tables of cxxCorpusLibs (what `llvm-nm -D --defined-only`
// lists), chosen by a hash of the name so that the sample is the same on
// every run and spread over every library.
func cxxCorpus(t testing.TB) []string {
	t.Helper()
	seen := map[string]bool{}
	for _, pattern := range cxxCorpusLibs {
		libs, _ := filepath.Glob(pattern)
		if len(libs) == 0 {
			t.Fatalf("C++ corpus: no %s (install libllvm14, libclang-cpp14 and libstdc++6: scripts/install-deps.sh)", pattern)
		}
		lib := libs[0]
		f, err := elf.Open(lib)
		if err != nil {
			t.Fatalf("C++ corpus: %v", err)
		}
		syms, err := f.DynamicSymbols()
		f.Close()
		if err != nil {
			t.Fatalf("C++ corpus: %s: %v", lib, err)
		}
		for _, s := range syms {
			if s.Section != elf.SHN_UNDEF && strings.HasPrefix(s.Name, "_Z") {
				// Drop a symbol version ("@@GLIBCXX_3.4"): not part of the name.
				name, _, _ := strings.Cut(s.Name, "@")
				seen[name] = true
			}
		}
	}
	if len(seen) < cxxCorpusSize {
		t.Fatalf("C++ corpus: only %d names in %v", len(seen), cxxCorpusLibs)
	}
	type keyed struct {
		key  uint64
		name string
	}
	all := make([]keyed, 0, len(seen))
	for n := range seen {
		h := fnv.New64a()
		h.Write([]byte(n))
		all = append(all, keyed{h.Sum64(), n})
	}
	slices.SortFunc(all, func(a, b keyed) int {
		if a.key != b.key {
			if a.key < b.key {
				return -1
			}
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	names := make([]string, cxxCorpusSize)
	for i := range names {
		names[i] = all[i].name
	}
	return names
}

// cxxfilt demangles names with one c++filt process, one name a line.
func cxxfilt(t *testing.T, names []string) []string {
	t.Helper()
	path, err := exec.LookPath("c++filt")
	if err != nil {
		t.Fatalf("needs c++filt (GNU binutils) on PATH: scripts/install-deps.sh installs it")
	}
	cmd := exec.Command(path)
	cmd.Stdin = strings.NewReader(strings.Join(names, "\n") + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("c++filt: %v\n%s", err, stderr.String())
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) != len(names) {
		t.Fatalf("c++filt answered %d lines for %d names", len(lines), len(names))
	}
	return lines
}

// TestCxxCorpus compares the full form of 20,000 C++ names of LLVM's,
// Clang's and libstdc++'s libraries with c++filt's: at least 99.9% must
// be equal, and each difference is listed.
func TestCxxCorpus(t *testing.T) {
	names := cxxCorpus(t)
	want := cxxfilt(t, names)
	var diff []string
	for i, n := range names {
		if got := Name(n, Full); got != want[i] {
			diff = append(diff, fmt.Sprintf("%s\n   got %s\n  want %s", n, got, want[i]))
		}
	}
	equal := len(names) - len(diff)
	t.Logf("%d of %d equal to c++filt (%.2f%%)", equal, len(names), 100*float64(equal)/float64(len(names)))
	if equal*1000 < len(names)*999 {
		for _, d := range diff[:min(len(diff), 20)] {
			t.Error(d)
		}
		t.Fatalf("%d of %d differ from c++filt (goal: at most 0.1%%)", len(diff), len(names))
	}
	for _, d := range diff {
		t.Log("differs:", d)
	}
}
