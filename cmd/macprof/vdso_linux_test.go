//go:build linux && (amd64 || arm64)

package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/macprof/macprof/internal/testprog"
)

// TestRecordChildInTheVDSO records, with --unwind cfi, a child of the
// command (sh -c) whose thread calls clock_gettime in a loop, in a program
// without frame pointers: its samples in the vDSO are named as the vDSO's
// (clock_gettime, [vdso]+offset), not left as raw addresses, and at least
// 95% of them are walked out of the vDSO to start_thread by the unwind
// tables alone.
func TestRecordChildInTheVDSO(t *testing.T) {
	macprof, _ := macprofBinary(t)
	bin := testprog.BuildCNoFP(t, "vdsoloop.c")
	out := filepath.Join(t.TempDir(), "v.folded")
	cmd := exec.Command(macprof, "record", "-F", "999", "--unwind", "cfi", "-o", out, "--", "sh", "-c", bin+" 1.5; true")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("macprof record: %v\n%s", err, stderr.String())
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var inVDSO, named, walked, raw int64
	var bad []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		i := strings.LastIndexByte(line, ' ')
		stack := line[:max(i, 0)]
		n, err := strconv.ParseInt(line[i+1:], 10, 64)
		if err != nil {
			t.Fatalf("folded line %q: %v", line, err)
		}
		frames := strings.Split(stack, ";")
		switch leaf := frames[len(frames)-1]; {
		case strings.HasPrefix(leaf, "0x"):
			raw += n // in no known image
			bad = append(bad, line)
		case strings.HasPrefix(leaf, "[vdso]"), leaf == "clock_gettime", leaf == "__vdso_clock_gettime":
			inVDSO += n
			if !strings.HasPrefix(leaf, "[vdso]") {
				named += n
			}
			if strings.Contains(stack, ";start_thread;") && strings.Contains(stack, ";clockloop;") && !strings.HasPrefix(stack, "[truncated]") {
				walked += n
			} else {
				bad = append(bad, line)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d samples in the vdso, %d in a named function, %d walked to start_thread; %d in no image", inVDSO, named, walked, raw)
	if len(bad) > 10 {
		bad = bad[:10]
	}
	if inVDSO < 50 {
		t.Fatalf("%d samples in the vdso in 1.5 s at 999 Hz, want 50 (%d in no image: %q)\n%s", inVDSO, raw, bad, stderr.String())
	}
	if named == 0 {
		t.Errorf("no sample in the vdso named by its function (clock_gettime)")
	}
	if raw*100 > inVDSO {
		t.Errorf("%d samples in no image (raw addresses), beside %d in the vdso: %q", raw, inVDSO, bad)
	}
	if walked < inVDSO*95/100 {
		t.Errorf("%d of %d samples in the vdso walked to start_thread, want 95%%: %q", walked, inVDSO, bad)
	}
}
