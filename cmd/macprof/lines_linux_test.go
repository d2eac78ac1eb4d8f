//go:build linux && (amd64 || arm64)

package main

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	pprof "github.com/google/pprof/profile"

	"github.com/macprof/macprof/internal/testprog"
)

// TestRecordDemoPprofList records the demo as the README's main command
// does (record -- demo) and checks that `go tool pprof -list main.worker`
// shows its source lines with the time of the calls it makes: the
// profile's lines come from the unstripped Go binary's pclntab.
func TestRecordDemoPprofList(t *testing.T) {
	macprof, demo := macprofBinary(t)
	out := filepath.Join(t.TempDir(), "profile.pb.gz")
	cmd := exec.Command(macprof, "record", "-q", "-F", "99", "-o", out, "--", demo, "-threads", "2", "-duration", "1500ms")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("record: %v\n%s", err, b)
	}
	b, err := exec.Command("go", "tool", "pprof", "-list", "main.worker$", out).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -list: %v\n%s", err, b)
	}
	s := string(b)
	if strings.Contains(s, "No source information") || !strings.Contains(s, "ROUTINE ======================== main.worker in ") {
		t.Fatalf("go tool pprof -list main.worker shows no source:\n%s", s)
	}
	// A source line of worker with time on it: "  .  111.11ms  161:  computeChecksums(buf)".
	timed := regexp.MustCompile(`(?m)^\s+\S+\s+[0-9.]+[mµn]?s\s+\d+:\s+(computeChecksums|prepareReport)\(`)
	if !timed.MatchString(s) {
		t.Fatalf("no timed call line in main.worker:\n%s", s)
	}
}

// TestRecordCProfileLinesAgreeWithLLVMSymbolizer records an unstripped C
// test program (gcc -O0 -g, PIE) and compares every location of its
// executable in the pprof profile, frame by frame (function, file, line),
// with llvm-symbolizer at the same link-time address.
func TestRecordCProfileLinesAgreeWithLLVMSymbolizer(t *testing.T) {
	macprof, _ := macprofBinary(t)
	bin := testprog.BuildC(t, "deep.c")
	p := testprog.Start(t, bin, "2", "3")
	out := filepath.Join(t.TempDir(), "c.pb.gz")
	cmd := exec.Command(macprof, "record", "-q", "-p", strconv.Itoa(p.PID), "-F", "199", "-d", "1s", "-o", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("record: %v\n%s", err, b)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	prof, err := pprof.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	// Link-time address of each location of the executable.
	var locs []*pprof.Location
	var addrs []uint64
	for _, l := range prof.Location {
		if l.Mapping == nil || l.Mapping.File != bin {
			continue
		}
		off := l.Address - l.Mapping.Start + l.Mapping.Offset
		for _, ph := range ef.Progs {
			if ph.Type == elf.PT_LOAD && off >= ph.Off && off-ph.Off < ph.Filesz {
				locs = append(locs, l)
				addrs = append(addrs, off-ph.Off+ph.Vaddr)
			}
		}
	}
	if len(addrs) < 3 {
		t.Fatalf("only %d locations in %s", len(addrs), bin)
	}
	var in bytes.Buffer
	for _, a := range addrs {
		fmt.Fprintf(&in, "%#x\n", a)
	}
	sym, err := exec.LookPath("llvm-symbolizer")
	if err != nil {
		t.Fatal("llvm-symbolizer is the oracle: apt-get install llvm, or run scripts/install-deps.sh")
	}
	lc := exec.Command(sym, "--obj="+bin, "--output-style=JSON")
	lc.Stdin = &in
	b, err := lc.Output()
	if err != nil {
		t.Fatalf("llvm-symbolizer: %v", err)
	}
	type frame struct {
		FileName, FunctionName string
		Line                   int
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	for i, l := range locs {
		var r struct{ Symbol []frame }
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("llvm-symbolizer output: %v", err)
		}
		var got, want []string
		for _, ln := range l.Line {
			got = append(got, fmt.Sprintf("%s %s:%d", ln.Function.Name, ln.Function.Filename, ln.Line))
		}
		for _, f := range r.Symbol {
			want = append(want, fmt.Sprintf("%s %s:%d", f.FunctionName, f.FileName, f.Line))
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%#x (link %#x): profile %q, llvm-symbolizer %q", l.Address, addrs[i], got, want)
		}
	}
	for _, m := range prof.Mapping {
		if m.File == bin && !(m.HasFunctions && m.HasFilenames && m.HasLineNumbers) {
			t.Errorf("mapping %+v: want functions, files and lines", m)
		}
	}
	t.Logf("%d locations agree with llvm-symbolizer", len(addrs))
}

// TestRecordAppOnly records a C program (its threads start in libc) with
// --app-only: every folded frame is one of the program's functions,
// [system] (libc's thread start among them) or a pseudo frame; and --app-images
// without --app-only is refused.
func TestRecordAppOnly(t *testing.T) {
	macprof, _ := macprofBinary(t)
	bin := testprog.BuildC(t, "deep.c")
	p := testprog.Start(t, bin, "2", "3")
	out := filepath.Join(t.TempDir(), "app.folded")
	cmd := exec.Command(macprof, "record", "-q", "--app-only", "-p", strconv.Itoa(p.PID), "-F", "199", "-d", "1s", "-o", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("record: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// The program's functions, [system], and the pseudo frames of CPU
	// time without a stack, of lost samples and of cut stacks.
	own := map[string]bool{"spin": true, "recurse": true, "worker": true, "main": true, "[system]": true, "[unsampled]": true, "[truncated]": true}
	system := 0
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		stack := line[:strings.LastIndexByte(line, ' ')]
		for _, f := range strings.Split(stack, ";") {
			if !own[f] && !strings.HasPrefix(f, "[lost: ") {
				t.Errorf("frame %q in %q is neither the program's nor [system]", f, line)
			}
		}
		if strings.HasPrefix(stack, "[system];") {
			system++
		}
	}
	if system == 0 {
		t.Errorf("no stack starts in [system] (libc's thread start):\n%s", b)
	}
	bad := exec.Command(macprof, "record", "--app-images", "x", "-p", "1", "-o", filepath.Join(t.TempDir(), "x.folded"))
	if b, err := bad.CombinedOutput(); err == nil || !strings.Contains(string(b), "--app-images needs --app-only") {
		t.Errorf("--app-images alone: %v, %s", err, b)
	}
}
