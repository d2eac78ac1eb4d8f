package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// elfTargets returns the ELF binaries measured besides the Mach-O one: a
// Go program with DWARF (built into dir from the same source), and, when
// installed, libLLVM-14 (C++, .dynsym only) and node (C++, .symtab).
func elfTargets(dir string, extra string) ([]string, error) {
	bin := filepath.Join(dir, "target-linux")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building the linux target: %v\n%s", err, out)
	}
	targets := []string{bin}
	if extra != "" {
		return append(targets, strings.Split(extra, ",")...), nil
	}
	for _, pattern := range []string{"/usr/lib/*/libLLVM-14.so.1", "/usr/bin/node"} {
		if m, _ := filepath.Glob(pattern); len(m) > 0 {
			targets = append(targets, m[0])
		}
	}
	return targets, nil
}

// elfAddresses returns n random addresses in bin's .text, one a line.
func elfAddresses(bin string, n int) ([]byte, error) {
	f, err := elf.Open(bin)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	text := f.Section(".text")
	if text == nil {
		return nil, fmt.Errorf("%s: no .text", bin)
	}
	rng := rand.New(rand.NewSource(1))
	var in bytes.Buffer
	for range n {
		fmt.Fprintf(&in, "%#x\n", text.Addr+uint64(rng.Int63n(int64(text.Size))))
	}
	return in.Bytes(), nil
}

// benchELF times macprof symbolize and llvm-symbolizer on n addresses of
// each ELF target. llvm-symbolizer demangles (as macprof does) and prints
// file:line where there is DWARF, without inlined frames (macprof's default).
func benchELF(targets []string, n, runs int, macprof, before, llvm string) error {
	for _, bin := range targets {
		in, err := elfAddresses(bin, n)
		if err != nil {
			return err
		}
		if err := benchTarget(filepath.Base(bin), bin, in, runs, before,
			[]string{macprof, "symbolize", "-o", bin},
			[]string{llvm, "--obj=" + bin, "--no-inlines"}); err != nil {
			return err
		}
	}
	return nil
}

// benchTarget times the macprof command mp and the llvm-symbolizer command
// lv (and the before binary's, in mp's place) on the addresses in, checks
// the outputs, and prints a line of figures for the target named name.
func benchTarget(name, bin string, in []byte, runs int, before string, mpArgv, lvArgv []string) error {
	mp, lv, bf, err := timeWithBefore(runs, in, before, mpArgv, lvArgv)
	if err != nil {
		return err
	}
	agree, total := compare(mp.out, lv.out)
	if err := check(bin, in, mp, bf); err != nil {
		return err
	}
	fmt.Printf("%s: macprof best %.1f ms, median %.1f ms, CPU median %.1f ms, least %.1f ms; llvm-symbolizer best %.1f ms, median %.1f ms, CPU median %.1f ms, least %.1f ms; ratio %.1fx best wall, %.1fx median wall, %.1fx median CPU, %.1fx least CPU; names agree on %d of %d\n",
		name, ms(mp.best), ms(mp.median), ms(mp.cpu), ms(mp.cpuLeast), ms(lv.best), ms(lv.median), ms(lv.cpu), ms(lv.cpuLeast),
		float64(lv.best)/float64(mp.best), float64(lv.median)/float64(mp.median), ratio(lv.cpu, mp.cpu), ratio(lv.cpuLeast, mp.cpuLeast),
		agree, total)
	fmt.Println("  " + content(mp.out, lv.out))
	printBefore(before, bf, lv)
	if len(bf.walls) > 0 {
		fmt.Println("  " + sameOutput(mp.out, bf.out))
	}
	return nil
}
