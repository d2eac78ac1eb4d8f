package symcache

import (
	"bufio"
	"bytes"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/macprof/macprof/demangle"
	"github.com/macprof/macprof/images"
)

// TestMachODSYMAgreesWithLLVMSymbolizer compares every frame (inlined ones
// included), file and line with llvm-symbolizer, which reads the same dSYM.
func TestMachODSYMAgreesWithLLVMSymbolizer(t *testing.T) {
	for _, name := range []string{"prog_arm64", "prog_x86_64"} {
		t.Run(name, func(t *testing.T) {
			img, f := openFixture(t, name, "")
			cache := New(Options{}) // LoadMachO finds <file>.dSYM
			addrs := textAddrs(t, f.MachO, step(f.Arch()))
			want := llvmSymbolize(t, fixture(name), "", addrs, true)
			bad, inlined := 0, 0
			for i, a := range addrs {
				got := cache.Symbolize(img, a, false)
				w := want[i]
				ok := len(got) == len(w)
				for j := 0; ok && j < len(w); j++ {
					ok = got[j].Function == llvmName(w[j].FunctionName) && got[j].File == w[j].FileName && got[j].Line == w[j].Line &&
						got[j].Inlined == (j < len(w)-1)
				}
				if len(got) > 1 {
					inlined++
				}
				if !ok {
					if bad++; bad <= 5 {
						t.Errorf("%#x: got %+v, llvm-symbolizer %+v", a, got, w)
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d addresses disagree", bad, len(addrs))
			}
			if inlined == 0 {
				t.Error("no address had inlined frames: the fixture should have some")
			}
			t.Logf("%d addresses, %d with inlined frames", len(addrs), inlined)
		})
	}
}

// llvmName evens out one artefact of the fixture: the Swift and Rust names
// come from asm labels, which keep the Mach-O underscore in
// DW_AT_linkage_name, and llvm-symbolizer prints such inlined frames raw
// ("_$s4main...", "__RNv..."), and llvm-symbolizer does not demangle Swift.
// macprof drops the underscore and demangles, as it does for the same names
// in the symbol table.
func llvmName(n string) string {
	if strings.HasPrefix(n, "_$") || strings.HasPrefix(n, "__R") {
		n = n[1:]
	}
	return demangle.Name(n, demangle.Simplified)
}

// TestMachOStripped checks that a stripped image names its functions
// image+0xSTART (its link-time address) from LC_FUNCTION_STARTS, with the same function bounds as
// the unstripped image, and never after __mh_execute_header.
func TestMachOStripped(t *testing.T) {
	for _, arch := range []string{"arm64", "x86_64"} {
		img, f := openFixture(t, "prog_"+arch+"_stripped", "")
		full, _ := openFixture(t, "prog_"+arch, "")
		if f.Symtab == nil || f.FunctionStarts == nil {
			t.Fatalf("%s: fixture lacks LC_SYMTAB or LC_FUNCTION_STARTS", arch)
		}
		cache := New(Options{})
		st, err := cache.Table(img)
		if err != nil {
			t.Fatal(err)
		}
		// A cache of its own: the stripped file has the full one's UUID.
		ft, err := New(Options{}).Table(full)
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]uint64{} // frame name -> function start
		for _, a := range textAddrs(t, f.MachO, step(arch)) {
			fr := cache.Symbolize(img, a, false)
			if len(fr) != 1 || fr[0].Function != "" || !fr[0].Anonymous || !fr[0].Named() {
				t.Fatalf("%s %#x: got %+v, want an anonymous frame", arch, a, fr)
			}
			_, s1, ok1 := st.Lookup(a)
			_, s2, ok2 := ft.Lookup(a)
			if !ok1 || !ok2 || s1 != s2 {
				t.Fatalf("%s %#x: stripped start %#x (%v), unstripped %#x (%v)", arch, a, s1, ok1, s2, ok2)
			}
			// Named by the function's link-time start (what atos -o
			// takes), the offset inside it.
			want := "prog_" + arch + "_stripped+0x" + strconv.FormatUint(s1, 16)
			if fr[0].Start != s1 || fr[0].Offset != a-s1 || fr[0].Name() != want {
				t.Fatalf("%s %#x: frame %+v named %q, want %q + %d", arch, a, fr[0], fr[0].Name(), want, a-s1)
			}
			if s, dup := names[want]; dup && s != s1 {
				t.Fatalf("%s: %q names starts %#x and %#x", arch, want, s, s1)
			}
			names[want] = s1
		}
		if len(names) < 5 {
			t.Errorf("%s: only %d functions", arch, len(names))
		}
		// atos's address: llvm-symbolizer on the unstripped file, given
		// the address each name prints, finds the function there.
		var starts []uint64
		for _, s := range names {
			starts = append(starts, s)
		}
		slices.Sort(starts)
		for i, fr := range llvmSymbolize(t, fixture("prog_"+arch), arch, starts, false) {
			name, _, _ := ft.Lookup(starts[i])
			if len(fr) == 0 || llvmName(fr[0].FunctionName) != demangle.Name(name, demangle.Simplified) {
				t.Errorf("%s: llvm-symbolizer at %#x: %+v, want %q", arch, starts[i], fr, name)
			}
		}
		// The header itself is no function.
		if fr := cache.Symbolize(img, img.Start, false); fr[0].Function != "" {
			t.Errorf("%s: header resolved to %q", arch, fr[0].Function)
		}
	}
}

// TestMachONames checks the name forms: C without its underscore, C++ and
// Rust and Swift demangled (Swift simplified, as profiles show it),
// Objective-C kept.
func TestMachONames(t *testing.T) {
	want := map[string][]string{
		"cxx_arm64": {"geo::measure(geo::Shape const&, int)", "geo::measure(geo::Shape const&, double)",
			"geo::Vec<int>::dot(geo::Vec<int> const&) const", "geo::Shape::area(int) const", "int unroll<3>(int)", "main"},
		"objc_arm64": {"-[Widget spin:]", "-[Widget spin:times:]", "+[Widget make]", "main"},
		"prog_arm64": {"func_42", "local_42", "leaf", "greet(_:)", "mycrate::example", "main"},
	}
	for file, names := range want {
		img, f := openFixture(t, file, "")
		cache := New(Options{Loaders: map[images.Format]Loader{images.FormatMachO: MachOLoader(MachOOptions{NoDSYM: true})}})
		seen := map[string]bool{}
		for _, a := range textAddrs(t, f.MachO, 4) {
			fr := cache.Symbolize(img, a, false)
			seen[fr[len(fr)-1].Function] = true
		}
		for _, n := range names {
			if !seen[n] {
				t.Errorf("%s: no frame named %q", file, n)
			}
		}
		for n := range seen {
			if strings.Contains(n, "mh_execute_header") || strings.HasPrefix(n, "_Z") || strings.HasPrefix(n, "_main") {
				t.Errorf("%s: frame named %q", file, n)
			}
		}
	}
	if !demangle.IsMangled("$s4main5greetyySiF") {
		t.Error("IsMangled does not recognise the fixture's Swift symbol")
	}
}

// TestMachOCallerAddress checks that a return address is looked up at the
// call instruction before it.
func TestMachOCallerAddress(t *testing.T) {
	img, f := openFixture(t, "prog_arm64", "")
	cache := New(Options{})
	tab, err := cache.Table(img)
	if err != nil {
		t.Fatal(err)
	}
	// The first address of a function, as a return address, belongs to
	// the function before it.
	for _, a := range textAddrs(t, f.MachO, 4)[1:] {
		_, start, _ := tab.Lookup(a)
		if start != a {
			continue
		}
		_, prev, _ := tab.Lookup(a - 1)
		fr := cache.Symbolize(img, a, true)
		fn, _, _ := tab.Lookup(prev)
		if got := fr[len(fr)-1].Function; got != demangle.Name(fn, demangle.Simplified) {
			t.Fatalf("caller %#x: got %q, want %q", a, got, fn)
		}
		return
	}
	t.Fatal("no function start found")
}

// TestMachOGoBinary builds a GOOS=darwin Go program and compares, over
// thousands of random __text addresses, the function with the nearest
// preceding text symbol that llvm-nm lists.
func TestMachOGoBinary(t *testing.T) {
	for _, goarch := range []string{"arm64", "amd64"} {
		t.Run(goarch, func(t *testing.T) {
			bin := buildGoDarwin(t, goarch)
			img, f, err := images.MachOImageFromFile(bin, "", 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			nm := nmText(t, bin)
			cache := New(Options{})
			rng := rand.New(rand.NewSource(1))
			addrs := textAddrs(t, f.MachO, 1)
			const n = 5000
			bad := 0
			for k := 0; k < n; k++ {
				a := addrs[rng.Intn(len(addrs))]
				i := sort.Search(len(nm), func(i int) bool { return nm[i].addr > a }) - 1
				if i < 0 {
					t.Fatalf("%#x: below every llvm-nm symbol", a)
				}
				// Any of the names at that address will do.
				ok := false
				fr := cache.Symbolize(img, a, false)
				got := fr[len(fr)-1].Function
				for j := i; j >= 0 && nm[j].addr == nm[i].addr; j-- {
					// Go's ABI suffix is dropped, as Go's tools do, and
					// names are the pclntab's, which spells "·" where
					// the symbol table has "." (autogenerated functions).
					ok = ok || strings.ReplaceAll(got, "·", ".") == strings.TrimSuffix(nm[j].name, ".abi0")
				}
				if !ok {
					if bad++; bad <= 10 {
						t.Errorf("%#x: got %q, llvm-nm %q at %#x", a, got, nm[i].name, nm[i].addr)
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d addresses disagree", bad, n)
			}
		})
	}
}

type nmSym struct {
	addr uint64
	name string
}

// nmText lists the text symbols of bin with llvm-nm, sorted, with the
// Mach-O underscore dropped.
func nmText(t testing.TB, bin string) []nmSym {
	t.Helper()
	out, err := exec.Command(tool(t, "llvm-nm", "llvm-nm-14"), "--defined-only", bin).Output()
	if err != nil {
		t.Fatalf("llvm-nm: %v", err)
	}
	var syms []nmSym
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fs := strings.SplitN(sc.Text(), " ", 3)
		if len(fs) != 3 || (fs[1] != "T" && fs[1] != "t") {
			continue
		}
		a, err := strconv.ParseUint(fs[0], 16, 64)
		if err != nil {
			t.Fatalf("llvm-nm line %q: %v", sc.Text(), err)
		}
		syms = append(syms, nmSym{a, strings.TrimPrefix(fs[2], "_")})
	}
	sort.SliceStable(syms, func(i, j int) bool { return syms[i].addr < syms[j].addr })
	if len(syms) < 1000 {
		t.Fatalf("llvm-nm listed only %d text symbols", len(syms))
	}
	return syms
}

const goProgram = `package main

import (
	"fmt"
	"os"
	"sort"
	"strings"
)

func main() {
	s := strings.Fields(strings.Repeat("b a c ", 10))
	sort.Strings(s)
	fmt.Fprintln(os.Stdout, s)
}
`

// buildGoDarwin builds a small GOOS=darwin program into a temporary
// directory and returns its path.
func buildGoDarwin(t testing.TB, goarch string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(goProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module prog\n\ngo 1.21\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "prog")
	cmd := exec.Command(tool(t, "go"), "build", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=darwin", "GOARCH="+goarch, "CGO_ENABLED=0", "GOFLAGS=", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build (darwin/%s): %v\n%s", goarch, err, out)
	}
	return bin
}

// TestLoadMachOMappedAgrees checks that a table read in place from a
// file's mapping (LoadMachOMapped) names every __text address, with its
// lines and inlined frames, as one read through the file (MachOLoader):
// thin and universal clang fixtures, with a dSYM and stripped, and Go
// binaries, whose lines come from the mapped __gopclntab.
func TestLoadMachOMappedAgrees(t *testing.T) {
	type target struct{ name, bin, arch string }
	targets := []target{
		{"prog_arm64", fixture("prog_arm64"), ""},
		{"prog_arm64_stripped", fixture("prog_arm64_stripped"), ""},
		{"prog_universal/x86_64", fixture("prog_universal"), "x86_64"},
		{"prog_universal/arm64", fixture("prog_universal"), "arm64"},
	}
	for _, goarch := range []string{"arm64", "amd64"} {
		targets = append(targets, target{"go/" + goarch, buildGoDarwin(t, goarch), ""})
	}
	for _, tc := range targets {
		t.Run(tc.name, func(t *testing.T) {
			img, f, err := images.MachOImageFromFile(tc.bin, tc.arch, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			want, err := MachOLoader(MachOOptions{})(img)
			if err != nil {
				t.Fatal(err)
			}
			got, unmap, err := LoadMachOMapped(img, MachOOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := unmap(); err != nil {
					t.Errorf("unmap: %v", err)
				}
			}()
			if got.HasLines() != want.HasLines() {
				t.Fatalf("HasLines %v, through the file %v", got.HasLines(), want.HasLines())
			}
			lined := 0
			for _, a := range textAddrs(t, f.MachO, step(f.Arch())) {
				gn, gs, gok := got.Lookup(a)
				wn, ws, wok := want.Lookup(a)
				if gn != wn || gs != ws || gok != wok {
					t.Fatalf("%#x: Lookup %q %#x %v, through the file %q %#x %v", a, gn, gs, gok, wn, ws, wok)
				}
				if !want.HasLines() {
					continue
				}
				gl, wl := got.lines.Lines(a), want.lines.Lines(a)
				if !slices.Equal(gl, wl) {
					t.Fatalf("%#x: lines %+v, through the file %+v", a, gl, wl)
				}
				if len(wl) > 0 && wl[0].Line > 0 {
					lined++
				}
			}
			if want.HasLines() && lined == 0 {
				t.Error("no address has a line: nothing was compared")
			}
		})
	}
}

// TestMapMachOSlice checks that the mapped image of a universal file's
// slice holds the slice's bytes, not the file's from its start.
func TestMapMachOSlice(t *testing.T) {
	data, err := os.ReadFile(fixture("prog_universal"))
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range []string{"x86_64", "arm64"} {
		f, err := images.OpenMachO(fixture("prog_universal"), arch)
		if err != nil {
			t.Fatal(err)
		}
		m, image := mapMachO(f)
		if m == nil {
			t.Fatalf("%s: not mapped", arch)
		}
		want := make([]byte, f.Size)
		if _, err := f.R.ReadAt(want, 0); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(image, want) || bytes.Equal(image[:64], data[:64]) {
			t.Errorf("%s: the mapped image is not the slice's bytes", arch)
		}
		m.Close()
		f.Close()
	}
}
