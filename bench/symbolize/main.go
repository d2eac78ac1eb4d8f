// Command symbolize measures macprof's symbolization side by side with its
// peers, on the same 100,000 addresses of the same Mach-O binary:
//
//   - `macprof symbolize` against `llvm-symbolizer` (both as processes,
//     addresses on standard input), as a ratio;
//   - macprof's sorted table and binary search against a per-frame linear
//     scan of the symbol table (the approach of in-app backtrace libraries
//     such as BSBacktraceLogger), in process.
//
// The binary is a GOOS=darwin GOARCH=arm64 Go program built with -ldflags=-w
// (no DWARF), so that both tools answer from the same symbol table. Then,
// process against process only, ELF files (elf.go): the same program built
// for linux with DWARF, and libLLVM-14 and node where installed; and the
// released macOS binaries of swiftlint (Swift), sentry-cli and biome (Rust)
// and libvips (C/C++), fetched from the npm registry (npm.go, -npm=false to
// skip them).
//
// Usage (from the repository root):
//
//	go run ./bench/symbolize [-n 100000] [-runs 3] [-macprof PATH] [-before PATH] [-elf BIN,...] [-npm=false] [-save DIR]
//
// With -before, each target's output is compared with the older build's
// (a change meant to be faster only must print the same bytes); -save
// keeps each target's binary, addresses and outputs in DIR.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/symcache"
)

const program = `package main

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"text/template"
)

func main() {
	s := &http.Server{Addr: ":0", TLSConfig: &tls.Config{}}
	b, _ := json.Marshal(map[string]any{"a": regexp.MustCompile("x+").String()})
	template.Must(template.New("t").Parse("{{.}}")).Execute(os.Stdout, string(b))
	fmt.Println(s.Addr)
}
`

func main() {
	n := flag.Int("n", 100_000, "number of addresses")
	runs := flag.Int("runs", 3, "runs of each command, in turn (best and median wall, median and least CPU reported)")
	before := flag.String("before", "", "another macprof binary (an older build) timed in the same runs, for a before/after ratio")
	prebuilt := flag.String("macprof", "", "a macprof binary to measure (default: build ./cmd/macprof)")
	elfs := flag.String("elf", "", "comma-separated ELF binaries to measure besides a Go ELF with DWARF (default: libLLVM-14.so.1 and node where installed)")
	flag.StringVar(&saveDir, "save", "", "a directory to keep each target (a copy or, for an installed file, a symbolic link), its addresses and the outputs in")
	npm := flag.Bool("npm", true, "also measure the released macOS binaries of swiftlint, sentry-cli, libvips and biome, fetched once from the npm registry into the user's cache directory")
	flag.Parse()
	if err := bench(*n, *runs, *prebuilt, *before, *elfs, *npm); err != nil {
		fmt.Fprintln(os.Stderr, "bench/symbolize:", err)
		os.Exit(1)
	}
}

func bench(n, runs int, macprof, before, elfs string, npm bool) error {
	llvm, err := lookPath("llvm-symbolizer", "llvm-symbolizer-14")
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "bench-symbolize")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	// The target binary and the macprof command.
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(program), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module target\n\ngo 1.21\n"), 0o644); err != nil {
		return err
	}
	bin := filepath.Join(dir, "target")
	cmd := exec.Command("go", "build", "-ldflags=-w", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=darwin", "GOARCH=arm64", "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building the darwin target: %v\n%s", err, out)
	}
	if macprof == "" {
		macprof = filepath.Join(dir, "macprof")
		if out, err := exec.Command("go", "build", "-o", macprof, "./cmd/macprof").CombinedOutput(); err != nil {
			return fmt.Errorf("building macprof (run from the repository root): %v\n%s", err, out)
		}
	}

	// n random addresses inside __text.
	f, err := images.OpenMachO(bin, "")
	if err != nil {
		return err
	}
	defer f.Close()
	var text *images.MachOSection
	for i := range f.Sections {
		if f.Sections[i].Name == "__text" {
			text = &f.Sections[i]
		}
	}
	if text == nil {
		return fmt.Errorf("%s: no __text", bin)
	}
	rng := rand.New(rand.NewSource(1))
	addrs := make([]uint64, n)
	var in bytes.Buffer
	for i := range addrs {
		addrs[i] = text.Addr + uint64(rng.Int63n(int64(text.Size)))
		fmt.Fprintf(&in, "%#x\n", addrs[i])
	}
	st, err := f.ReadSymbolTable(f.R, f.Size)
	if err != nil {
		return err
	}

	// Processes, side by side.
	mp, lv, bf, err := timeWithBefore(runs, in.Bytes(), before,
		[]string{macprof, "symbolize", "-o", bin},
		[]string{llvm, "--obj=" + bin, "--no-inlines", "--functions=linkage", "--no-demangle"})
	if err != nil {
		return err
	}
	agree, total := compare(mp.out, lv.out)
	if err := check(bin, in.Bytes(), mp, bf); err != nil {
		return err
	}

	// In process: the sorted table against a linear scan per frame.
	t0 := time.Now()
	img, mf, err := images.MachOImageFromFile(bin, "", 0)
	if err != nil {
		return err
	}
	mf.Close()
	tab, err := symcache.LoadMachO(img)
	if err != nil {
		return err
	}
	build := time.Since(t0)
	var sink uint64
	t0 = time.Now()
	for _, a := range addrs {
		_, start, _ := tab.Lookup(a)
		sink += start
	}
	lookups := time.Since(t0)
	t0 = time.Now()
	for _, a := range addrs {
		sink += linearScan(st, f.MachO, a)
	}
	linear := time.Since(t0)
	_ = sink

	fmt.Printf("binary: GOOS=darwin GOARCH=arm64 Go program, %d symbols (%d KiB __text), %d addresses, best of %d runs\n",
		st.Len(), text.Size>>10, n, runs)
	fmt.Printf("macprof symbolize: best %.1f ms, median %.1f ms wall (%.0f ns/address); CPU median %.1f ms, least %.1f ms\n",
		ms(mp.best), ms(mp.median), float64(mp.best.Nanoseconds())/float64(n), ms(mp.cpu), ms(mp.cpuLeast))
	fmt.Printf("llvm-symbolizer:   best %.1f ms, median %.1f ms wall (%.0f ns/address); CPU median %.1f ms, least %.1f ms\n",
		ms(lv.best), ms(lv.median), float64(lv.best.Nanoseconds())/float64(n), ms(lv.cpu), ms(lv.cpuLeast))
	fmt.Printf("ratio llvm-symbolizer/macprof: %.1fx (best wall), %.1fx (median wall), %.1fx (median CPU), %.1fx (least CPU)\n",
		float64(lv.best)/float64(mp.best), float64(lv.median)/float64(mp.median), ratio(lv.cpu, mp.cpu), ratio(lv.cpuLeast, mp.cpuLeast))
	printBefore(before, bf, lv)
	if len(bf.walls) > 0 {
		fmt.Println("  " + sameOutput(mp.out, bf.out))
	}
	fmt.Printf("function names agree on %d of %d addresses (the rest: .abi0 suffixes, which macprof drops as the Go runtime does, and aliases at one address)\n", agree, total)
	fmt.Println("  " + content(mp.out, lv.out))
	fmt.Printf("in process: table build %.2f ms + %d lookups %.2f ms; linear scan per frame %.1f ms; ratio %.0fx\n",
		ms(build), n, ms(lookups), ms(linear), float64(linear)/float64(build+lookups))
	targets, err := elfTargets(dir, elfs)
	if err != nil {
		return err
	}
	if err := benchELF(targets, n, runs, macprof, before, llvm); err != nil {
		return err
	}
	if npm {
		if err := benchNPM(n, runs, macprof, before, llvm); err != nil {
			return err
		}
	}
	fmt.Printf("machine: %s/%s, %d CPUs, %s\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), time.Now().UTC().Format(time.RFC3339))
	return nil
}

// linearScan returns the start of the text symbol nearest below addr by
// scanning the whole symbol table, as in-app backtrace libraries do for
// every frame.
func linearScan(st *images.MachOSymbolTable, m *images.MachO, addr uint64) uint64 {
	best := uint64(0)
	for i, n := 0, st.Len(); i < n; i++ {
		e := st.Entry(i)
		if e.Type&images.NStab != 0 || e.Type&images.NType != images.NSect || e.Sect == 0 || int(e.Sect) > len(m.Sections) {
			continue
		}
		if e.Value <= addr && e.Value > best && m.Sections[e.Sect-1].Instructions() {
			best = e.Value
		}
	}
	return best
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func lookPath(names ...string) (string, error) {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("needs %s on PATH (Debian: apt-get install llvm-14)", strings.Join(names, " or "))
}

// result is the timing of one command over several runs.
type result struct {
	best, median  time.Duration // wall time
	cpu, cpuLeast time.Duration // user+system time: median and least of the runs
	walls, cpus   []time.Duration
	out           []byte // the output of the last run
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(max(b, 1)) }

// timeAll runs each command runs times with stdin, one after the other
// in turn (so that a machine loaded by others weighs on all alike), and
// returns their timings.
func timeAll(runs int, stdin []byte, argvs ...[]string) ([]result, error) {
	rs := make([]result, len(argvs))
	for i := 0; i < runs; i++ {
		for j, argv := range argvs {
			if err := timeOnce(&rs[j], stdin, argv); err != nil {
				return nil, err
			}
		}
	}
	for j := range rs {
		rs[j] = rs[j].done()
	}
	return rs, nil
}

// timeWithBefore times macprof symbolize (argv mp) and llvm-symbolizer
// (lv) in turn, and the before binary (another macprof, given the same
// arguments) among them when there is one.
func timeWithBefore(runs int, stdin []byte, before string, mp, lv []string) (m, l, b result, err error) {
	argvs := [][]string{mp, lv}
	if before != "" {
		argvs = append(argvs, append([]string{before}, mp[1:]...))
	}
	rs, err := timeAll(runs, stdin, argvs...)
	if err != nil {
		return m, l, b, err
	}
	if before != "" {
		b = rs[2]
	}
	return rs[0], rs[1], b, nil
}

// printBefore prints the before binary's figures and ratios, if measured.
func printBefore(name string, b, lv result) {
	if len(b.walls) == 0 {
		return
	}
	fmt.Printf("  before (%s): best %.1f ms, median %.1f ms, CPU median %.1f ms, least %.1f ms; ratio %.1fx best wall, %.1fx median wall, %.1fx median CPU, %.1fx least CPU\n",
		name, ms(b.best), ms(b.median), ms(b.cpu), ms(b.cpuLeast),
		float64(lv.best)/float64(b.best), float64(lv.median)/float64(b.median), ratio(lv.cpu, b.cpu), ratio(lv.cpuLeast, b.cpuLeast))
}

// timeOnce runs argv once with stdin and adds its times to r.
func timeOnce(r *result, stdin []byte, argv []string) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = bytes.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %v\n%s", argv[0], err, e.String())
	}
	r.walls = append(r.walls, time.Since(t0))
	r.cpus = append(r.cpus, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
	r.out = o.Bytes()
	return nil
}

// saveDir is where check keeps the targets, addresses and outputs ("" for
// nowhere).
var saveDir string

// sameOutput says whether macprof's output equals the before binary's,
// and where they first differ when not.
func sameOutput(mp, bf []byte) string {
	if bytes.Equal(mp, bf) {
		return fmt.Sprintf("output byte-identical to before's (%d bytes)", len(mp))
	}
	line := 1 + bytes.Count(mp[:commonPrefix(mp, bf)], []byte("\n"))
	return fmt.Sprintf("OUTPUT DIFFERS from before's: %d and %d bytes, first at line %d", len(mp), len(bf), line)
}

// commonPrefix is the length of what a and b begin with alike.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// check keeps bin (a copy, or a link to an installed file), its addresses
// and the outputs of macprof and the before binary in saveDir, when set.
func check(bin string, in []byte, mp, bf result) error {
	if saveDir == "" {
		return nil
	}
	if err := os.MkdirAll(saveDir, 0o755); err != nil {
		return err
	}
	name := filepath.Join(saveDir, filepath.Base(bin))
	os.Remove(name)
	if strings.HasPrefix(bin, os.TempDir()) {
		b, err := os.ReadFile(bin)
		if err != nil {
			return err
		}
		if err := os.WriteFile(name, b, 0o755); err != nil {
			return err
		}
	} else if err := os.Symlink(bin, name); err != nil {
		return err
	}
	files := map[string][]byte{".in": in, ".out": mp.out}
	if len(bf.walls) > 0 {
		files[".before.out"] = bf.out
	}
	for ext, b := range files {
		if err := os.WriteFile(name+ext, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// done computes r's best and medians from its runs.
func (r result) done() result {
	slices.Sort(r.walls)
	slices.Sort(r.cpus)
	r.best, r.median = r.walls[0], r.walls[len(r.walls)/2]
	r.cpuLeast, r.cpu = r.cpus[0], r.cpus[len(r.cpus)/2]
	return r
}

// content says what each tool printed for the addresses: how many got a
// function name (macprof names a function without a symbol by its start,
// image+0xSTART; llvm-symbolizer prints ??) and how many a file:line with
// a line (llvm-symbolizer prints "file:0:0" or "??:0:0" without one).
func content(mp, lv []byte) string {
	var mpNamed, mpLines int
	for _, line := range strings.Split(strings.TrimSuffix(string(mp), "\n"), "\n") {
		name, rest, _ := strings.Cut(line, " (in ")
		if name != "??" && !strings.Contains(name, "+0x") {
			mpNamed++
		}
		if _, fl, ok := strings.Cut(rest, ") ("); ok && strings.HasSuffix(fl, ")") && !strings.HasSuffix(fl, ":0)") {
			mpLines++
		}
	}
	var lvNamed, lvLines int
	for _, blk := range strings.Split(strings.TrimSpace(string(lv)), "\n\n") {
		name, loc, _ := strings.Cut(blk, "\n")
		if name != "??" {
			lvNamed++
		}
		if f := strings.Split(loc, ":"); len(f) >= 3 && f[len(f)-2] != "0" {
			lvLines++
		}
	}
	return fmt.Sprintf("content: macprof named %d by a symbol, %d with file:line; llvm-symbolizer named %d, %d with file:line", mpNamed, mpLines, lvNamed, lvLines)
}

// compare counts the addresses whose function names agree: macprof prints
// "name (in image) + off", llvm-symbolizer "name\nfile:line:col\n\n" with
// the Mach-O underscore kept when not demangling.
func compare(mp, lv []byte) (agree, total int) {
	var a []string
	sc := bufio.NewScanner(bytes.NewReader(mp))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.LastIndex(line, " (in "); i >= 0 {
			line = line[:i]
		}
		a = append(a, line)
	}
	var b []string
	blocks := strings.Split(strings.TrimSpace(string(lv)), "\n\n")
	for _, blk := range blocks {
		name, _, _ := strings.Cut(blk, "\n")
		b = append(b, strings.TrimPrefix(name, "_"))
	}
	total = min(len(a), len(b))
	for i := 0; i < total; i++ {
		if a[i] == b[i] {
			agree++
		}
	}
	return agree, max(len(a), len(b))
}
