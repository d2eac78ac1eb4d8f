// Package testprog builds and starts the small programs that tests profile:
// real processes with known stacks.
package testprog

import (
	"bufio"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Dir returns the directory that holds the programs' sources.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "src")
}

var (
	buildMu sync.Mutex
	built   = map[string]string{}
)

// CFlags are the flags test programs are built with: frame pointers in
// every function, leaves included. -O0, because at -O1 gcc drops the frame
// of a leaf that needs no stack even with -fno-omit-frame-pointer.
var CFlags = []string{"-O0", "-g", "-pthread", "-fno-omit-frame-pointer", "-mno-omit-leaf-frame-pointer"}

// BuildC compiles src (a file in Dir) with gcc and returns the binary's path.
// It fails the test when gcc is missing.
func BuildC(t testing.TB, src string) string {
	t.Helper()
	return build(t, "c:"+src, func(out string) *exec.Cmd {
		cc, err := exec.LookPath("gcc")
		if err != nil {
			t.Fatalf("gcc is needed to build test program %s: install it (apt-get install gcc, or run scripts/install-deps.sh)", src)
		}
		args := append(append([]string{}, CFlags...), "-o", out, filepath.Join(Dir(), src))
		return exec.Command(cc, args...)
	})
}

// BuildCNoFP compiles src (a file in Dir) with gcc -O2 and without frame
// pointers, and returns the binary's path: a program whose stacks can be
// walked only through its unwind tables.
func BuildCNoFP(t testing.TB, src string) string {
	t.Helper()
	return build(t, "nofp:"+strings.TrimSuffix(src, ".c")+"-nofp", func(out string) *exec.Cmd {
		cc, err := exec.LookPath("gcc")
		if err != nil {
			t.Fatalf("gcc is needed to build test program %s: install it (apt-get install gcc, or run scripts/install-deps.sh)", src)
		}
		return exec.Command(cc, "-O2", "-g", "-pthread", "-fomit-frame-pointer", "-o", out, filepath.Join(Dir(), src))
	})
}

// BuildCShared compiles src (a file in Dir) with gcc into a shared library
// named lib, with extra flags (such as -DNAME=x), once per test run, and
// returns its path.
// Libraries are built with -O2 and without frame pointers: code that is
// walked only through its unwind tables.
func BuildCShared(t testing.TB, src, lib string, flags ...string) string {
	t.Helper()
	return build(t, "so:"+lib, func(out string) *exec.Cmd {
		cc, err := exec.LookPath("gcc")
		if err != nil {
			t.Fatalf("gcc is needed to build test library %s: install it (apt-get install gcc, or run scripts/install-deps.sh)", lib)
		}
		args := append([]string{"-O2", "-g", "-fomit-frame-pointer", "-shared", "-fPIC", "-o", out}, flags...)
		return exec.Command(cc, append(args, filepath.Join(Dir(), src))...)
	})
}

// BuildGo builds the Go program in Dir()/pkg and returns the binary's path.
func BuildGo(t testing.TB, pkg string) string {
	t.Helper()
	return build(t, "go:"+pkg, func(out string) *exec.Cmd {
		cmd := exec.Command(GoTool(t), "build", "-o", out, ".")
		cmd.Dir = filepath.Join(Dir(), pkg)
		return cmd
	})
}

// BuildPkg builds a main package of this module, by import path (such as
// "github.com/macprof/macprof/cmd/macprof"), once per test run and returns
// the binary's path.
func BuildPkg(t testing.TB, path string) string {
	t.Helper()
	return build(t, "pkg:"+path, func(out string) *exec.Cmd {
		return exec.Command(GoTool(t), "build", "-o", out, path)
	})
}

func build(t testing.TB, key string, mk func(out string) *exec.Cmd) string {
	buildMu.Lock()
	defer buildMu.Unlock()
	if p, ok := built[key]; ok {
		return p
	}
	dir, err := os.MkdirTemp("", "macprof-testprog-")
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimSuffix(filepath.Base(strings.SplitN(key, ":", 2)[1]), ".c")
	out := filepath.Join(dir, name)
	cmd := mk(out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build test program %s: %v\n%s", key, err, b)
	}
	built[key] = out
	return out
}

// ELFSymbols returns the symbol table (.symtab) of the ELF file bin.
func ELFSymbols(t testing.TB, bin string) []elf.Symbol {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	return syms
}

// Proc is a started test program.
type Proc struct {
	Cmd *exec.Cmd
	PID int
}

// Start runs bin with args and waits until it prints "ready". The process
// is killed when the test ends.
func Start(t testing.TB, bin string, args ...string) *Proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	p := &Proc{Cmd: cmd, PID: cmd.Process.Pid}
	t.Cleanup(func() {
		cmd.Process.Kill()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			// A process whose thread is still traced by a live thread of
			// ours cannot finish exiting: a bug to report, not to hang on.
			t.Errorf("%s (PID %d) did not finish exiting 15 s after SIGKILL: is one of its threads still traced?", bin, p.PID)
		}
	})
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if sc.Text() == "ready" {
				ready <- nil
				io.Copy(io.Discard, stdout)
				return
			}
		}
		ready <- fmt.Errorf("%s exited before it was ready", bin)
	}()
	select {
	case err := <-ready:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s not ready after 30s", bin)
	}
	return p
}

// GoTool returns the path of the go command, failing the test when there is
// none on PATH.
func GoTool(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("the go command is needed on PATH to build test programs")
	}
	return p
}

// ELFSymbol returns the value of symbol name in the ELF file bin (its
// link-time address, for a function).
func ELFSymbol(t testing.TB, bin, name string) uint64 {
	t.Helper()
	for _, s := range ELFSymbols(t, bin) {
		if s.Name == name {
			return s.Value
		}
	}
	t.Fatalf("%s: no symbol %s", bin, name)
	return 0
}
