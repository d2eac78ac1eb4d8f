package symbolize

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/macprof/macprof/demangle"
	"github.com/macprof/macprof/internal/testprog"
)

// tool finds an external program the test needs, or fails saying what is
// missing.
func tool(t *testing.T, names ...string) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	t.Fatalf("this test needs %s on PATH (scripts/install-deps.sh installs it)", strings.Join(names, " or "))
	return ""
}

// funcAddrs returns link-time addresses inside the named functions (every
// step bytes) of an unstripped ELF file; prefix selects by name prefix.
func funcAddrs(t *testing.T, bin, prefix string, step uint64) []uint64 {
	t.Helper()
	syms := testprog.ELFSymbols(t, bin)
	var out []uint64
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Size > 0 && strings.HasPrefix(s.Name, prefix) {
			for a := s.Value; a < s.Value+s.Size; a += step {
				out = append(out, a)
			}
		}
	}
	if len(out) < 20 {
		t.Fatalf("only %d addresses in %s* of %s", len(out), prefix, bin)
	}
	return out
}

// run symbolizes addrs with Run and returns the output lines.
func run(t *testing.T, cfg Config, addrs []uint64) []string {
	t.Helper()
	var in bytes.Buffer
	for _, a := range addrs {
		fmt.Fprintf(&in, "%#x\n", a)
	}
	var out bytes.Buffer
	if err := Run(cfg, nil, &in, &out); err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
}

const goProg = `package main

import (
	"fmt"
	"os"
)

func small(n int) int { return n*3 + 1 }

//go:noinline
func leaf(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += small(i)
	}
	return s
}

//go:noinline
func middle(n int) int { return leaf(small(n)) + 1 }

func main() { fmt.Println(middle(len(os.Args))) }
`

// TestSymbolizeGoAgreesWithAddr2line checks every other byte of the main.*
// functions of an unstripped Go program: without -i, the function and
// file:line equal go tool addr2line's (the physical function, the
// innermost position); with -i, the last frame is that function and the
// first has that position, with inlined frames before it where the
// compiler inlined.
func TestSymbolizeGoAgreesWithAddr2line(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{"main.go": goProg, "go.mod": "module prog\n\ngo 1.21\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	goBin := tool(t, "go")
	bin := filepath.Join(dir, "prog")
	cmd := exec.Command(goBin, "build", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=", "GOWORK=off", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	addrs := funcAddrs(t, bin, "main.", 2)
	var in bytes.Buffer
	for _, a := range addrs {
		fmt.Fprintf(&in, "%#x\n", a)
	}
	a2l := exec.Command(goBin, "tool", "addr2line", bin)
	a2l.Stdin = &in
	b, err := a2l.Output()
	if err != nil {
		t.Fatalf("go tool addr2line: %v", err)
	}
	want := strings.Split(strings.TrimSpace(string(b)), "\n")
	got := run(t, Config{Binary: bin}, addrs)
	if len(got) != len(addrs) || len(want) != 2*len(addrs) {
		t.Fatalf("%d lines from symbolize, %d from addr2line, for %d addresses", len(got), len(want), len(addrs))
	}
	bad := 0
	for i, a := range addrs {
		fn, pos := want[2*i], want[2*i+1]
		w := fmt.Sprintf("%s (in prog) (%s)", fn, filepath.Base(pos))
		if strings.HasSuffix(pos, ":-1") || strings.HasSuffix(pos, ":0") {
			w = fn + " (in prog) + " // padding: no line
		}
		if !strings.HasPrefix(got[i], w) {
			if bad++; bad <= 10 {
				t.Errorf("%#x: symbolize %q, addr2line %s %s", a, got[i], fn, pos)
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d addresses disagree", bad, len(addrs))
	}
	// -i: one address at a time, so that its frames are known.
	inlined, small := 0, 0
	for i := 0; i < len(addrs); i += 3 {
		fr := run(t, Config{Binary: bin, Inline: true}, addrs[i:i+1])
		fn, pos := want[2*i], want[2*i+1]
		if strings.HasSuffix(pos, ":-1") {
			continue
		}
		if !strings.HasSuffix(fr[0], "("+filepath.Base(pos)+")") || !strings.HasPrefix(fr[len(fr)-1], fn+" (in prog) (") {
			t.Errorf("%#x -i: %q, addr2line %s %s", addrs[i], fr, fn, pos)
		}
		if len(fr) > 1 {
			inlined++
			switch {
			case strings.HasPrefix(fr[0], "main.small (in prog) (main.go:"):
				small++
			case strings.HasPrefix(fr[0], "fmt.Println (in prog) (print.go:"): // inlined into main.main
			default:
				t.Errorf("%#x -i: %q, want main.small or fmt.Println inlined first", addrs[i], fr)
			}
		}
	}
	if inlined == 0 || small == 0 {
		t.Errorf("%d addresses with inlined frames, %d in main.small, with -i: main.small is inlined", inlined, small)
	}
}

type llvmFrame struct {
	FileName     string
	FunctionName string
	Line         int
}

// TestSymbolizeCAgreesWithLLVMSymbolizer checks every byte of a gcc -O2 -g
// C program's worker and main: with -i, every frame's function and
// file:line equal llvm-symbolizer's (inlined frames included).
func TestSymbolizeCAgreesWithLLVMSymbolizer(t *testing.T) {
	checkLLVM(t, "gcc", "inline.c", "worker", "main")
}

// TestSymbolizeCXXAgreesWithLLVMSymbolizer is the same for C++ built with
// g++ -O2 -g: demangled names, a template method and a static function
// inlined.
func TestSymbolizeCXXAgreesWithLLVMSymbolizer(t *testing.T) {
	checkLLVM(t, "g++", "inline.cpp", "_ZN3geo7measure", "main")
}

// checkLLVM builds src (a file in testprog.Dir) with compiler -O2 -g and
// compares symbolize -i with llvm-symbolizer at every byte of the
// functions whose symbol names start with one of prefixes.
func checkLLVM(t *testing.T, compiler, src string, prefixes ...string) {
	src = filepath.Join(testprog.Dir(), src)
	bin := filepath.Join(t.TempDir(), "inl")
	if out, err := exec.Command(tool(t, compiler), "-O2", "-g", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", compiler, err, out)
	}
	var addrs []uint64
	for _, p := range prefixes {
		addrs = append(addrs, funcAddrs(t, bin, p, 1)...)
	}
	var in bytes.Buffer
	for _, a := range addrs {
		fmt.Fprintf(&in, "%#x\n", a)
	}
	cmd := exec.Command(tool(t, "llvm-symbolizer", "llvm-symbolizer-14"), "--obj="+bin, "--output-style=JSON")
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("llvm-symbolizer: %v", err)
	}
	var want [][]llvmFrame
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var r struct{ Symbol []llvmFrame }
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		want = append(want, r.Symbol)
	}
	if len(want) != len(addrs) {
		t.Fatalf("llvm-symbolizer: %d results for %d addresses", len(want), len(addrs))
	}
	// Without -i, one line: the outermost function with the innermost
	// file:line.
	one := run(t, Config{Binary: bin}, addrs)
	for i, a := range addrs {
		outer, inner := want[i][len(want[i])-1], want[i][0]
		if w := fmt.Sprintf("%s (in inl) (%s:%d)", outer.FunctionName, filepath.Base(inner.FileName), inner.Line); one[i] != w {
			t.Errorf("%#x: symbolize %q, llvm-symbolizer %q", a, one[i], w)
		}
	}
	inlined := 0
	for i, a := range addrs {
		got := run(t, Config{Binary: bin, Inline: true}, []uint64{a})
		var w []string
		for _, f := range want[i] {
			w = append(w, fmt.Sprintf("%s (in inl) (%s:%d)", f.FunctionName, filepath.Base(f.FileName), f.Line))
		}
		if strings.Join(got, "|") != strings.Join(w, "|") {
			t.Errorf("%#x: symbolize -i %q, llvm-symbolizer %q", a, got, w)
		}
		if len(w) > 1 {
			inlined++
		}
	}
	if inlined == 0 {
		t.Error("no inlined frames: gcc -O2 should inline sq and sum_sq")
	}
	t.Logf("%d addresses, %d with inlined frames", len(addrs), inlined)
}

// TestSymbolizeLinesNoAllocs checks that, once a function's name is
// demangled, answering another address of it with file:line allocates
// nothing: a batch of addresses costs lookups, not garbage.
func TestSymbolizeLinesNoAllocs(t *testing.T) {
	src := filepath.Join(testprog.Dir(), "inline.cpp")
	bin := filepath.Join(t.TempDir(), "inl")
	if out, err := exec.Command(tool(t, "g++"), "-O2", "-g", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, out)
	}
	s, err := open(Config{Binary: bin})
	if err != nil {
		t.Fatal(err)
	}
	addrs := append(funcAddrs(t, bin, "_ZN3geo7measure", 1), funcAddrs(t, bin, "main", 1)...)
	w := newOutput(io.Discard)
	var words [][]byte
	for _, a := range addrs {
		words = append(words, []byte(fmt.Sprintf("%#x", a)))
	}
	for i := 0; i < len(words); i += 2 {
		s.line(w, words[i]) // every function's name, demangled once
	}
	var b bytes.Buffer
	bw := newOutput(&b)
	s.line(bw, words[1])
	bw.Flush()
	if !strings.Contains(b.String(), ".cpp:") && !strings.Contains(b.String(), ".h:") {
		t.Fatalf("no file:line in %q", b.String())
	}
	next := 1
	allocs := testing.AllocsPerRun(len(words)/2-1, func() {
		s.line(w, words[next])
		next += 2
	})
	if allocs != 0 {
		t.Errorf("%v allocations per address", allocs)
	}
}

// TestSymbolizeSecondExecutableSegment checks an address in an ELF file's
// second executable PT_LOAD segment (node has three): it is in the file.
func TestSymbolizeSecondExecutableSegment(t *testing.T) {
	src := filepath.Join(testprog.Dir(), "farsection.c")
	bin := filepath.Join(t.TempDir(), "far")
	args := []string{"-O1", "-no-pie", "-o", bin, src, "-Wl,--section-start=farcode=0x900000"}
	if out, err := exec.Command(tool(t, "gcc"), args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	syms := testprog.ELFSymbols(t, bin)
	var mainAddr uint64
	for _, s := range syms {
		if s.Name == "main" {
			mainAddr = s.Value
		}
	}
	got := run(t, Config{Binary: bin}, []uint64{0x900004, mainAddr})
	if len(got) != 2 || got[0] != "far_away (in far) + 4" || got[1] != "main (in far) + 0" {
		t.Errorf("got %q, want far_away (in far) + 4 and main (in far) + 0", got)
	}
}

// TestSymbolizeManyCXXNames symbolizes the starts of 600 C++ functions
// in one batch, enough for the names to be demangled on several
// goroutines: each line must carry its own function's name, as
// demangling them one at a time gives.
func TestSymbolizeManyCXXNames(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	const n = 600
	var src strings.Builder
	src.WriteString("#include <vector>\n")
	for i := range n {
		fmt.Fprintf(&src, "namespace n%d { struct S { static int f(std::vector<int> const& v, char const* s); }; "+
			"int S::f(std::vector<int> const& v, char const* s) { return int(v.size()) + s[%d]; } }\n", i, i%7)
	}
	src.WriteString("typedef int (*fn)(std::vector<int> const&, char const*);\nfn table[] = {")
	for i := range n {
		fmt.Fprintf(&src, "n%d::S::f,", i)
	}
	src.WriteString("};\nint main(int argc, char** argv) { std::vector<int> v(argc); return table[argc](v, argv[0]); }\n")
	dir := t.TempDir()
	cpp, bin := filepath.Join(dir, "many.cpp"), filepath.Join(dir, "many")
	if err := os.WriteFile(cpp, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(tool(t, "g++"), "-O1", "-o", bin, cpp).CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, out)
	}
	syms := testprog.ELFSymbols(t, bin)
	var addrs []uint64
	var want []string
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Size > 0 && strings.HasPrefix(s.Name, "_ZN") && strings.Contains(s.Name, "1S1f") {
			addrs = append(addrs, s.Value)
			want = append(want, demangle.Name(s.Name, demangle.Simplified)+" (in many) + 0")
		}
	}
	if len(addrs) != n {
		t.Fatalf("%d functions S::f in the binary, want %d", len(addrs), n)
	}
	got := run(t, Config{Binary: bin}, addrs)
	for i := range addrs {
		if got[i] != want[i] {
			t.Fatalf("%#x: %q, want %q", addrs[i], got[i], want[i])
		}
	}
}
