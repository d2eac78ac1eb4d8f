// Command cfiagree checks macprof's stacks of programs built without frame
// pointers (Debian's python3, gzip, sqlite3) against perf's DWARF unwinding
// of the same workloads: how many of macprof's samples reach main, and how
// many of its stacks, matched with perf's by their leaf function, have a
// function sequence perf also recorded for that leaf.
//
//	go run ./bench/cfiagree [-F 999] [-unwind auto] [-only python,gzip,sqlite]
//
// It builds macprof itself, so run it from the repository root, as root (or
// with perf_event_paranoid low enough for perf record). Each workload runs
// twice, once under each profiler, so the two profiles are of runs of the
// same work, not of the same instants: a stack agrees when perf recorded
// the same sequence of functions (leaf to root) among its stacks with the
// same leaf. Names are compared after the differences of the two
// symbolizers are taken out: perf's symbol versions (@@GLIBC_2.34) and
// glibc's aliases, and a frame without a symbol becomes its object's name
// (perf's [unknown], macprof's object+0xOFFSET).
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

var verbose *bool

type workload struct {
	name  string
	setup func(dir string) error
	argv  func(dir string) []string
}

var pyLoop = `import hashlib
d = b"x" * 4096
h = hashlib.sha256()
for i in range(120000):
    h.update(d)
    hashlib.md5(d).digest()
print(h.hexdigest()[:8])`

var sqlQuery = `CREATE TABLE t(a INTEGER, b TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<600000)
INSERT INTO t SELECT x*7919 % 100003, hex(x*x) FROM c;
CREATE INDEX ta ON t(a);
SELECT count(*), sum(length(b)) FROM t WHERE a % 3 = 1;
SELECT a, count(*) FROM t GROUP BY a ORDER BY 2 DESC, 1 LIMIT 3;
SELECT count(*) FROM t x JOIN t y ON x.a = y.a WHERE x.b < y.b;`

var workloads = []workload{
	{"python", nil, func(string) []string { return []string{"/usr/bin/python3", "-c", pyLoop} }},
	{"gzip", func(dir string) error {
		// Text-like data that compresses slowly at -9: words drawn
		// from a small vocabulary by a fixed pseudo-random sequence.
		words := strings.Fields("the of and to in is was for on that with as by at from this be are or an which have not were but had")
		var b bytes.Buffer
		x := uint32(12345)
		for b.Len() < 24<<20 {
			x = x*1103515245 + 12345
			b.WriteString(words[(x>>16)%uint32(len(words))])
			if x%7 == 0 {
				fmt.Fprintf(&b, " %d\n", x%100000)
			} else {
				b.WriteByte(' ')
			}
		}
		return os.WriteFile(filepath.Join(dir, "data.txt"), b.Bytes(), 0o644)
	}, func(dir string) []string {
		return []string{"/usr/bin/gzip", "-9", "-c", filepath.Join(dir, "data.txt")}
	}},
	{"sqlite", nil, func(string) []string { return []string{"/usr/bin/sqlite3", ":memory:", sqlQuery} }},
}

func main() {
	hz := flag.Int("F", 999, "sampling rate for both profilers")
	method := flag.String("unwind", "auto", "macprof record --unwind")
	only := flag.String("only", "", "comma-separated workloads to run (default all: python,gzip,sqlite)")
	verbose = flag.Bool("v", false, "print perf's sequences for each leaf whose sequence differs")
	flag.Parse()
	if err := run(*hz, *method, *only); err != nil {
		fmt.Fprintln(os.Stderr, "cfiagree:", err)
		os.Exit(1)
	}
}

func run(hz int, method, only string) error {
	dir, err := os.MkdirTemp("", "cfiagree")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	macprof := filepath.Join(dir, "macprof")
	if out, err := exec.Command("go", "build", "-o", macprof, "./cmd/macprof").CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, out)
	}
	for _, w := range workloads {
		if only != "" && !strings.Contains(","+only+",", ","+w.name+",") {
			continue
		}
		if w.setup != nil {
			if err := w.setup(dir); err != nil {
				return err
			}
		}
		argv := w.argv(dir)
		folded := filepath.Join(dir, w.name+".folded")
		rec := append([]string{"record", "-q", "-F", strconv.Itoa(hz), "--unwind", method, "-o", folded, "--"}, argv...)
		if err := quiet(macprof, rec...); err != nil {
			return fmt.Errorf("%s: macprof record: %v", w.name, err)
		}
		ours, err := readFolded(folded)
		if err != nil {
			return err
		}
		perfData := filepath.Join(dir, w.name+".perf")
		prec := append([]string{"record", "-q", "-F", strconv.Itoa(hz), "--call-graph", "dwarf,16384", "-o", perfData, "--"}, argv...)
		if err := quiet("perf", prec...); err != nil {
			return fmt.Errorf("%s: perf record: %v", w.name, err)
		}
		theirs, err := readPerf(perfData, filepath.Base(argv[0]))
		if err != nil {
			return err
		}
		report(w.name, ours, theirs)
	}
	return nil
}

// quiet runs a command with its output discarded (the workloads print).
func quiet(name string, args ...string) error {
	cmd := exec.Command(name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%v: %s", err, stderr.Bytes())
	}
	return nil
}

// stack is a sequence of normalized function names, leaf first, and how
// many samples had it.
type stack struct {
	frames    []string
	n         int
	truncated bool
}

var (
	version  = regexp.MustCompile(`@@?[A-Z_0-9.]+$`)
	noSymbol = regexp.MustCompile(`^(.*)\+0x[0-9a-f]+$`)
	// glibc's aliases, which the two symbolizers pick differently.
	aliases = map[string]string{
		"__libc_start_main_impl": "__libc_start_main",
		"cfree":                  "free",
		"__libc_free":            "free",
		"__libc_malloc":          "malloc",
		"__libc_calloc":          "calloc",
		"__libc_realloc":         "realloc",
	}
)

// norm takes the symbolizers' differences out of a function name.
func norm(name, dso string) string {
	name = version.ReplaceAllString(name, "")
	if a, ok := aliases[name]; ok {
		name = a
	}
	if m := noSymbol.FindStringSubmatch(name); m != nil {
		return "[" + m[1] + "]"
	}
	if name == "[unknown]" {
		return "[" + filepath.Base(dso) + "]"
	}
	return name
}

// readFolded reads macprof's folded stacks (root first), without the
// [unsampled] and [lost: ...] pseudo stacks: CPU time no sample was
// taken of has no stack to reach main or not.
func readFolded(path string) ([]stack, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []stack
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		n, err := strconv.Atoi(line[i+1:])
		if err != nil {
			return nil, fmt.Errorf("%s: %q", path, line)
		}
		names := strings.Split(line[:i], ";")
		if names[0] == "[unsampled]" || strings.HasPrefix(names[0], "[lost") {
			continue
		}
		s := stack{n: n}
		if names[0] == "[truncated]" {
			s.truncated = true
			names = names[1:]
		}
		for j := len(names) - 1; j >= 0; j-- {
			s.frames = append(s.frames, norm(names[j], ""))
		}
		out = append(out, s)
	}
	return out, nil
}

// readPerf reads perf's samples of the workload's command (user frames
// only, leaf first).
func readPerf(path, comm string) ([]stack, error) {
	out, err := exec.Command("perf", "script", "-i", path, "--no-inline", "-F", "comm,tid,ip,sym,dso").Output()
	if err != nil {
		return nil, fmt.Errorf("perf script: %v", err)
	}
	frame := regexp.MustCompile(`^\s+[0-9a-f]+ (.*) \((.*)\)$`)
	var stacks []stack
	var cur *stack
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			cur = nil
			continue
		}
		if line[0] != ' ' && line[0] != '\t' {
			stacks = append(stacks, stack{n: 1})
			cur = &stacks[len(stacks)-1]
			continue
		}
		m := frame.FindStringSubmatch(line)
		if m == nil || cur == nil || m[2] == "[kernel.kallsyms]" {
			continue
		}
		cur.frames = append(cur.frames, norm(m[1], m[2]))
	}
	var kept []stack
	for _, s := range stacks {
		if len(s.frames) > 0 {
			kept = append(kept, s)
		}
	}
	return kept, nil
}

// reachesMain reports whether a stack goes down to main, or to glibc's
// function that calls it (python3's main tail-calls Py_BytesMain, so
// neither profiler sees main itself there).
func reachesMain(s stack) bool {
	for _, f := range s.frames {
		if f == "main" || f == "__libc_start_call_main" {
			return true
		}
	}
	return false
}

func report(name string, ours, theirs []stack) {
	total, main, truncated := 0, 0, 0
	for _, s := range ours {
		total += s.n
		if reachesMain(s) {
			main += s.n
		}
		if s.truncated {
			truncated += s.n
		}
	}
	perfTotal, perfMain := 0, 0
	byLeaf := map[string]map[string]bool{}
	for _, s := range theirs {
		perfTotal += s.n
		if reachesMain(s) {
			perfMain += s.n
		}
		leaf := s.frames[0]
		if byLeaf[leaf] == nil {
			byLeaf[leaf] = map[string]bool{}
		}
		byLeaf[leaf][strings.Join(s.frames, ";")] = true
	}
	matched, agree := 0, 0
	disagree := map[string]int{}
	for _, s := range ours {
		seqs := byLeaf[s.frames[0]]
		if seqs == nil {
			continue
		}
		matched += s.n
		key := strings.Join(s.frames, ";")
		if seqs[key] {
			agree += s.n
		} else {
			disagree[key] += s.n
		}
	}
	pct := func(a, b int) float64 {
		if b == 0 {
			return 0
		}
		return 100 * float64(a) / float64(b)
	}
	fmt.Printf("%s: macprof %d samples, %.1f%% reach main, %.1f%% marked truncated; perf %d samples, %.1f%% reach main\n", name, total, pct(main, total), pct(truncated, total), perfTotal, pct(perfMain, perfTotal))
	fmt.Printf("%s: %d of macprof's samples have a leaf perf sampled too (%.1f%%); of those, %.1f%% have a function sequence perf recorded for that leaf\n",
		name, matched, pct(matched, total), pct(agree, matched))
	type kv struct {
		k string
		n int
	}
	var ds []kv
	for k, n := range disagree {
		ds = append(ds, kv{k, n})
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i].n > ds[j].n })
	for i, d := range ds {
		if i == 5 {
			break
		}
		k := d.k
		if len(k) > 300 {
			k = k[:300] + "..."
		}
		fmt.Printf("    differs (%d): %s\n", d.n, k)
		if *verbose {
			leaf, _, _ := strings.Cut(d.k, ";")
			for seq := range byLeaf[leaf] {
				if len(seq) > 300 {
					seq = seq[:300] + "..."
				}
				fmt.Printf("        perf: %s\n", seq)
			}
		}
	}
}
