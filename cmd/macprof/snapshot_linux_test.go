//go:build linux && (amd64 || arm64)

package main

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/snapshot"
)

func TestSnapshotJSONAndErrors(t *testing.T) {
	p := testprog.Start(t, testprog.BuildC(t, "deep.c"), "2", "6")
	var out, errb bytes.Buffer
	if code := run([]string{"snapshot", "--json", "-p", strconv.Itoa(p.PID)}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var snap snapshot.Snapshot
	if err := json.Unmarshal(out.Bytes(), &snap); err != nil {
		t.Fatalf("--json output does not decode: %v\n%s", err, out.String())
	}
	if snap.PID != p.PID || len(snap.Threads) != 3 || snap.StoppedNS <= 0 {
		t.Fatalf("snapshot = pid %d, %d threads, stopped %d ns", snap.PID, len(snap.Threads), snap.StoppedNS)
	}
	deep := 0
	for _, th := range snap.Threads {
		if len(th.Frames) >= 8 && th.Frames[0].Function == "spin" && th.Name == "deep" {
			deep++
		}
	}
	if deep != 2 {
		t.Errorf("%d threads with spin on top, want 2: %+v", deep, snap.Threads)
	}

	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"snapshot", "-p", "4194000"}, 1, "no process with PID 4194000"},
		{[]string{"snapshot"}, 2, "give the process as -p PID"},
		{[]string{"snapshot", "-p", "1", "--max-frames", "0"}, 2, "--max-frames"},
	} {
		var o, e bytes.Buffer
		if code := run(tc.args, &o, &e); code != tc.code || !strings.Contains(e.String(), tc.msg) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, e.String(), tc.code, tc.msg)
		}
	}
}
