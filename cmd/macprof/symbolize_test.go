package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/macprof/macprof/internal/testprog"
)

var machoFixtures = filepath.Join("..", "..", "images", "testdata", "macho")

func symbolizeRun(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	old := symbolizeStdin
	symbolizeStdin = strings.NewReader(stdin)
	defer func() { symbolizeStdin = old }()
	var out, errb bytes.Buffer
	st := run(append([]string{"symbolize"}, args...), &out, &errb)
	return out.String(), errb.String(), st
}

func TestSymbolizeMachO(t *testing.T) {
	prog := filepath.Join(machoFixtures, "prog_arm64") // has prog_arm64.dSYM beside it
	uni := filepath.Join(machoFixtures, "prog_universal")
	stripped := filepath.Join(machoFixtures, "prog_arm64_stripped")
	// Addresses from llvm-nm: _func_10 at 0x100000388, _leaf at
	// 0x1000003f8 (prog.c:18 at +8), __TEXT at 0x100000000.
	for _, c := range []struct {
		name   string
		stdin  string
		args   []string
		want   string
		status int
	}{
		{"symbol table", "", []string{"-o", uni, "--arch", "arm64", "0x100000388", "1000003b8"},
			"func_10 (in prog_universal) + 0\nfunc_10 (in prog_universal) + 48\n", 0},
		{"dSYM found beside", "", []string{"-o", prog, "0x100000400"}, "leaf (in prog_arm64) (prog.c:18)\n", 0},
		{"explicit dSYM", "", []string{"-o", prog, "--dsym", prog + ".dSYM", "0x100000400"}, "leaf (in prog_arm64) (prog.c:18)\n", 0},
		{"load address", "", []string{"-o", uni, "--arch", "arm64", "-l", "0x104a2c000", "0x104a2c3b8"}, "func_10 (in prog_universal) + 48\n", 0},
		{"stdin", " 0x100000388\n\t0x1000003b8  \n", []string{"-o", uni, "--arch=arm64"},
			"func_10 (in prog_universal) + 0\nfunc_10 (in prog_universal) + 48\n", 0},
		{"stripped", "", []string{"-o", stripped, "-l", "0x104000000", "0x104000400"}, "prog_arm64_stripped+0x1000003f8 (in prog_arm64_stripped) + 8\n", 0}, // named by the start of the unnamed function
		{"outside and bad", "", []string{"-o", uni, "--arch", "arm64", "0x10", "zz"},
			"0x10 (not in prog_universal)\n?? (not an address: zz)\n", 1},
		{"inlined", "", []string{"-o", prog, "-i", "0x100002e98"},
			"greet(_:) (in prog_arm64) (prog.c:36)\nmain (in prog_arm64) (prog.c:46)\n", 0},
		{"outer function without -i", "", []string{"-o", prog, "0x100002e98"}, "main (in prog_arm64) (prog.c:36)\n", 0},
	} {
		out, errs, st := symbolizeRun(t, c.stdin, c.args...)
		if out != c.want || st != c.status {
			t.Errorf("%s: got status %d, output\n%s(stderr %q), want status %d, output\n%s", c.name, st, out, errs, c.status, c.want)
		}
	}
}

func TestSymbolizeErrors(t *testing.T) {
	prog := filepath.Join(machoFixtures, "prog_arm64")
	for _, c := range []struct {
		args   []string
		want   string
		status int
	}{
		{[]string{"0x1"}, "-o BINARY is required", 2},
		{[]string{"-o", prog, "-l", "xyz", "0x1"}, "not a hexadecimal address", 2},
		{[]string{"-o", prog, "--dsym", filepath.Join(machoFixtures, "prog_x86_64.dSYM"), "0x1"}, "does not match UUID", 1},
		{[]string{"-o", prog, "--arch", "x86_64", "0x1"}, "does not match architecture x86_64", 1},
		{[]string{"-o", filepath.Join(machoFixtures, "nonexistent"), "0x1"}, "no such file", 1},
		{[]string{"-o", filepath.Join(machoFixtures, "src", "prog.c"), "0x1"}, "is neither a Mach-O nor an ELF file", 1},
	} {
		_, errs, st := symbolizeRun(t, "", c.args...)
		if st != c.status || !strings.Contains(errs, c.want) {
			t.Errorf("%v: status %d, stderr %q; want %d and %q", c.args, st, errs, c.status, c.want)
		}
	}
	out, _, st := symbolizeRun(t, "", "--help")
	if st != 0 {
		t.Errorf("--help: status %d", st)
	}
	_ = out
}

// TestSymbolizeELF builds a small C program (testprog/src/alphabeta.c)
// for Linux and symbolizes two of its functions, at link-time addresses
// and with a load bias (PIE).
func TestSymbolizeELF(t *testing.T) {
	cc, err := exec.LookPath("clang")
	if err != nil {
		t.Fatal("this test needs clang on PATH (Debian: apt-get install clang)")
	}
	src := filepath.Join(testprog.Dir(), "alphabeta.c")
	exe := filepath.Join(t.TempDir(), "p")
	if out, err := exec.Command(cc, "-O1", "-fPIE", "-pie", src, "-o", exe).CombinedOutput(); err != nil {
		t.Fatalf("clang: %v\n%s", err, out)
	}
	syms := testprog.ELFSymbols(t, exe)
	var args, pie, want []string
	for _, s := range syms {
		if (s.Name == "alpha" || s.Name == "beta") && s.Size > 4 {
			args = append(args, fmt.Sprintf("%#x", s.Value+4))
			pie = append(pie, fmt.Sprintf("%#x", 0x5555_5555_0000+s.Value+4))
			want = append(want, s.Name+" (in p) + 4")
		}
	}
	if len(args) != 2 {
		t.Fatalf("alpha and beta not found in %s", exe)
	}
	out, errs, st := symbolizeRun(t, "", append([]string{"-o", exe}, args...)...)
	if st != 0 || out != strings.Join(want, "\n")+"\n" {
		t.Errorf("status %d, output %q (stderr %q), want %q", st, out, errs, want)
	}
	out, errs, st = symbolizeRun(t, "", append([]string{"-o", exe, "-l", "0x555555550000"}, pie...)...)
	if st != 0 || out != strings.Join(want, "\n")+"\n" {
		t.Errorf("PIE: status %d, output %q (stderr %q), want %q", st, out, errs, want)
	}
}

// TestSymbolizeInteractive checks that each address read from a pipe that
// stays open is answered before the next one arrives.
func TestSymbolizeInteractive(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	old := symbolizeStdin
	symbolizeStdin = inR
	defer func() { symbolizeStdin = old }()
	done := make(chan int)
	go func() {
		done <- run([]string{"symbolize", "-o", filepath.Join(machoFixtures, "prog_universal"), "--arch", "arm64"}, outW, io.Discard)
		outW.Close()
	}()
	lines := bufio.NewReader(outR)
	for _, c := range []struct{ in, want string }{
		{"0x100000388\n", "func_10 (in prog_universal) + 0\n"},
		{"0x1000003b8\n", "func_10 (in prog_universal) + 48\n"},
	} {
		if _, err := io.WriteString(inW, c.in); err != nil {
			t.Fatal(err)
		}
		got, err := lines.ReadString('\n')
		if err != nil || got != c.want {
			t.Fatalf("after %q: got %q (%v), want %q", c.in, got, err, c.want)
		}
	}
	inW.Close()
	if st := <-done; st != 0 {
		t.Errorf("status %d", st)
	}
}
