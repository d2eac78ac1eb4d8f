package symcache

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/macprof/macprof/images"
)

// fixtures is where images/testdata/build.sh puts the Mach-O fixtures.
var fixtures = filepath.Join("..", "images", "testdata", "macho")

func fixture(name string) string { return filepath.Join(fixtures, name) }

// tool finds an external program the test needs, or fails saying what is
// missing.
func tool(t testing.TB, names ...string) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	t.Fatalf("this test needs %s on PATH (Debian: apt-get install llvm-14 clang-14 lld-14)", strings.Join(names, " or "))
	return ""
}

type llvmFrame struct {
	FileName     string
	FunctionName string
	Line         int
}

// llvmSymbolize runs llvm-symbolizer over addrs (link-time addresses) and
// returns its frames per address, innermost first.
func llvmSymbolize(t testing.TB, obj, arch string, addrs []uint64, inlines bool) [][]llvmFrame {
	t.Helper()
	args := []string{"--obj=" + obj, "--output-style=JSON"}
	if arch != "" {
		args = append(args, "--default-arch="+arch)
	}
	if !inlines {
		args = append(args, "--no-inlines")
	}
	var in bytes.Buffer
	for _, a := range addrs {
		fmt.Fprintf(&in, "%#x\n", a)
	}
	cmd := exec.Command(tool(t, "llvm-symbolizer", "llvm-symbolizer-14"), args...)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("llvm-symbolizer %v: %v", args, err)
	}
	var res [][]llvmFrame
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct {
			Address string
			Symbol  []llvmFrame
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("llvm-symbolizer output %q: %v", sc.Text(), err)
		}
		res = append(res, r.Symbol)
	}
	if len(res) != len(addrs) {
		t.Fatalf("llvm-symbolizer gave %d results for %d addresses", len(res), len(addrs))
	}
	return res
}

// textAddrs returns the link-time addresses inside the image's __text
// section, every step bytes.
func textAddrs(t testing.TB, m *images.MachO, step uint64) []uint64 {
	t.Helper()
	var out []uint64
	for _, s := range m.Sections {
		if s.Segment == "__TEXT" && s.Name == "__text" {
			for a := s.Addr; a < s.Addr+s.Size; a += step {
				out = append(out, a)
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no __text section")
	}
	return out
}

func openFixture(t testing.TB, name, arch string) (*images.Image, *images.MachOFile) {
	t.Helper()
	img, f, err := images.MachOImageFromFile(fixture(name), arch, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return img, f
}

func step(arch string) uint64 {
	if arch == "x86_64" {
		return 1
	}
	return 4
}

// TestMachONamesAgreeWithLLVMSymbolizer symbolizes every instruction
// address (every byte on x86_64) of the __text of each clang-built fixture
// and compares the function with llvm-symbolizer's (without inlining).
func TestMachONamesAgreeWithLLVMSymbolizer(t *testing.T) {
	cases := []struct{ file, arch string }{
		{"prog_arm64", ""}, {"prog_x86_64", ""},
		{"prog_universal", "arm64"}, {"prog_universal", "x86_64"},
		{"libdemo_arm64.dylib", ""}, {"libdemo_x86_64.dylib", ""},
		{"cxx_arm64", ""}, {"cxx_x86_64", ""},
		{"objc_arm64", ""}, {"objc_x86_64", ""},
	}
	total := 0
	for _, c := range cases {
		t.Run(c.file+"/"+c.arch, func(t *testing.T) {
			img, f := openFixture(t, c.file, c.arch)
			cache := New(Options{Loaders: map[images.Format]Loader{images.FormatMachO: MachOLoader(MachOOptions{NoDSYM: true})}})
			addrs := textAddrs(t, f.MachO, step(f.Arch()))
			want := llvmSymbolize(t, fixture(c.file), c.arch, addrs, false)
			bad := 0
			for i, a := range addrs {
				fr := cache.Symbolize(img, a, false)
				got := fr[len(fr)-1].Function
				w := ""
				if len(want[i]) > 0 && want[i][0].FunctionName != "??" {
					// llvm-symbolizer leaves Swift names mangled.
					w = llvmName(want[i][0].FunctionName)
				}
				if got != w {
					if bad++; bad <= 10 {
						t.Errorf("%#x: got %q, llvm-symbolizer %q", a, got, w)
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d addresses disagree", bad, len(addrs))
			}
			total += len(addrs)
		})
	}
	if total < 5000 {
		t.Errorf("compared only %d addresses", total)
	}
	t.Logf("compared %d addresses", total)
}
