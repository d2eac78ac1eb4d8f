package symcache

import (
	"debug/elf"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/macprof/macprof/internal/testprog"
)

// TestUnnamedByLinkAddress checks that a stripped ELF's unnamed functions
// are named by the address addr2line takes, not by their file offset, in
// programs whose text lies at another address than its file offset (a
// non-PIE executable, a PIE linked at a non-zero base): addr2line -f on the
// unstripped file, given the printed address, names the function the
// sample was in.
func TestUnnamedByLinkAddress(t *testing.T) {
	addr2line := tool(t, "addr2line", "llvm-addr2line")
	for _, link := range [][]string{{"-no-pie"}, {"-pie", "-fPIE", "-Wl,-Ttext-segment=0x10000"}} {
		t.Run(link[0], func(t *testing.T) {
			bin := buildInlineC(t, append([]string{"-fno-inline"}, link...)...)
			stripped := filepath.Join(t.TempDir(), "inl-stripped")
			if out, err := exec.Command(tool(t, "strip", "llvm-strip"), "--strip-all", "-o", stripped, bin).CombinedOutput(); err != nil {
				t.Fatalf("strip: %v\n%s", err, out)
			}
			syms := testprog.ELFSymbols(t, bin)
			img := execImage(t, stripped, 0)
			if img.Start == img.Offset {
				t.Fatalf("fixture: text at %#x is at the same file offset; the test needs them apart", img.Start)
			}
			c := New(Options{})
			var names []string
			var want []string
			for _, s := range syms {
				if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Size < 2 || s.Section == elf.SHN_UNDEF {
					continue
				}
				fr := c.Symbolize(img, s.Value+1, false)
				g := fr[len(fr)-1]
				if !g.Anonymous {
					continue // named from .dynsym
				}
				if g.Start != s.Value || g.Name() != fmt.Sprintf("inl-stripped+0x%x", s.Value) {
					t.Fatalf("%s at %#x: frame %+v named %s, want inl-stripped+0x%x", s.Name, s.Value, g, g.Name(), s.Value)
				}
				names = append(names, g.Name())
				want = append(want, s.Name)
			}
			if len(names) < 3 {
				t.Fatalf("only %d unnamed functions in the stripped file", len(names))
			}
			// The oracle: addr2line on the unstripped file, given the
			// address after the + of each printed name.
			args := []string{"-f", "-e", bin}
			for _, n := range names {
				args = append(args, n[strings.LastIndex(n, "+")+1:])
			}
			out, err := exec.Command(addr2line, args...).Output()
			if err != nil {
				t.Fatalf("%s %v: %v", addr2line, args, err)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if len(lines) != 2*len(names) {
				t.Fatalf("addr2line printed %d lines for %d addresses:\n%s", len(lines), len(names), out)
			}
			for i, n := range names {
				if got := lines[2*i]; got != want[i] {
					addr, _ := strconv.ParseUint(n[strings.LastIndex(n, "+")+3:], 16, 64)
					t.Errorf("%s (in %s): addr2line names %#x %q", n, want[i], addr, got)
				}
			}
		})
	}
}
