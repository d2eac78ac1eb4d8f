package demangle

import (
	"debug/elf"
	"strings"
	"testing"
)

// BenchmarkCxxNames demangles every C++ name of a binary as symbolize
// does (Simplified, the fast path or else the full demangler): the C++
// corpus, node's .symtab where node is installed and libLLVM-14's
// dynamic symbol table where it is (the functions symbolize names in
// bench/symbolize's two C++ targets). ns/op and
// allocs/op are per name; "refused" is the share of names the fast path
// leaves to the full demangler.
func BenchmarkCxxNames(b *testing.B) {
	sets := []struct {
		name  string
		names func(testing.TB) []string
	}{
		{"corpus", cxxCorpus},
		{"node", nodeNames},
		{"libLLVM", libLLVMNames},
	}
	for _, set := range sets {
		b.Run(set.name, func(b *testing.B) {
			names := set.names(b)
			refused := 0
			for _, n := range names {
				if _, ok := cxxFast(n, Simplified); !ok {
					refused++
				}
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				cxx(names[i%len(names)], Simplified)
			}
			b.ReportMetric(100*float64(refused)/float64(len(names)), "%refused")
		})
	}
}

// nodeNames returns the C++ function names of node's symbol table, or
// skips the benchmark where there is no node.
func nodeNames(t testing.TB) []string {
	return cxxFunctionNames(t, "/usr/bin/node", (*elf.File).Symbols)
}

// libLLVMNames returns the C++ function names libLLVM-14 exports, or
// skips the benchmark where it is not installed.
func libLLVMNames(t testing.TB) []string {
	return cxxFunctionNames(t, "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1", (*elf.File).DynamicSymbols)
}

// cxxFunctionNames returns the distinct C++ names of the functions
// defined in the symbol table that symbols reads from the ELF file at
// path, or skips the benchmark where there is none.
func cxxFunctionNames(t testing.TB, path string, symbols func(*elf.File) ([]elf.Symbol, error)) []string {
	f, err := elf.Open(path)
	if err != nil {
		t.Skipf("no %s: %v", path, err)
	}
	defer f.Close()
	syms, err := symbols(f)
	if err != nil {
		t.Skipf("%s: %v", path, err)
	}
	seen := map[string]bool{}
	var names []string
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Section != elf.SHN_UNDEF && strings.HasPrefix(s.Name, "_Z") && !seen[s.Name] {
			seen[s.Name] = true
			names = append(names, s.Name)
		}
	}
	return names
}
