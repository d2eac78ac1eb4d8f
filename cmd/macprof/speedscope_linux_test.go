//go:build linux && (amd64 || arm64)

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	pprof "github.com/google/pprof/profile"

	"github.com/macprof/macprof/exporter"
	"github.com/macprof/macprof/exporter/speedscope"
	"github.com/macprof/macprof/internal/testprog"
)

// speedscopeVersion is the speedscope npm package scripts/install-deps.sh
// installs into speedscopeCache, where the browser test looks for it.
const (
	speedscopeVersion = "1.25.0"
	speedscopeCache   = ".cache/macprof/speedscope"
)

// TestRecordSpeedscopeShowsWhenThreadsRan: record -o FILE.speedscope.json
// of gophases (one thread busy in the first half, another in the second)
// writes one timeline per thread that pprof has samples of, each weighing
// the thread's samples, and the early thread's busy samples are centred
// well before the late thread's: the samples keep the kernel's times, not
// the time they were read, whether the command is sampled through inherited
// events (read once it exited: the previous code bunched them at the end)
// or thread by thread (--unwind cfi, read every 100 ms to 1 s; ptrace's
// drainAll checks their times). The file then opens in speedscope, in
// headless Chromium, which lists one profile per thread.
func TestRecordSpeedscopeShowsWhenThreadsRan(t *testing.T) {
	for _, unwind := range []string{"auto", "cfi"} {
		t.Run(unwind, func(t *testing.T) { testRecordSpeedscope(t, unwind, unwind == "auto") })
	}
}

func testRecordSpeedscope(t *testing.T, unwind string, browser bool) {
	macprof, _ := macprofBinary(t)
	phases := testprog.BuildGo(t, "gophases")
	dir := t.TempDir()
	ss, pb := filepath.Join(dir, "run.speedscope.json"), filepath.Join(dir, "run.pb.gz")
	const hz = 199
	out, err := exec.Command(macprof, "record", "-q", "--unwind", unwind, "-F", strconv.Itoa(hz), "-o", ss, "-o", pb, "--", phases, "0.4").CombinedOutput()
	if err != nil {
		t.Fatalf("record: %v\n%s", err, out)
	}
	b, err := os.ReadFile(ss)
	if err != nil {
		t.Fatal(err)
	}
	var f speedscope.File
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if err := f.Check(); err != nil {
		t.Fatal(err)
	}

	// The threads pprof has samples of, and their weight (ns).
	pf, err := os.Open(pb)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	prof, err := pprof.Parse(pf)
	if err != nil {
		t.Fatal(err)
	}
	wantNs := map[int64]int64{}
	for _, s := range prof.Sample {
		if s.Value[0] > 0 {
			tid := int64(0) // CPU time of threads never listed has no thread
			if l := s.NumLabel[exporter.LabelThreadID]; len(l) > 0 {
				tid = l[0]
			}
			wantNs[tid] += s.Value[1]
		}
	}
	tidOf := regexp.MustCompile(`\(tid (\d+)\)$`)
	type phase struct {
		first, last time.Duration // start of its first busy sample, end of its last
		ns          int64
		mid         float64 // the sum of its samples' middles times their weights
	}
	busyIn := map[string]*phase{}
	gotNs := map[int64]int64{}
	for _, p := range f.Profiles {
		m := tidOf.FindStringSubmatch(p.Name)
		var tid int64 // 0: threads gone before listed
		switch {
		case m != nil:
			tid, _ = strconv.ParseInt(m[1], 10, 64)
		case !strings.HasSuffix(p.Name, exporter.GoneThreadsName):
			t.Fatalf("profile %q names no thread", p.Name)
		}
		if _, dup := gotNs[tid]; dup {
			t.Errorf("two profiles of thread %d", tid)
		}
		gotNs[tid] = 0
		var at time.Duration
		for i, st := range p.Samples {
			w := time.Duration(p.Weights[i])
			if len(st) > 0 {
				gotNs[tid] += p.Weights[i]
			}
			for _, fr := range st {
				name := f.Shared.Frames[fr].Name
				if name != "main.earlyPhase" && name != "main.latePhase" {
					continue
				}
				ph := busyIn[name]
				if ph == nil {
					ph = &phase{first: at}
					busyIn[name] = ph
				}
				ph.last, ph.ns = at+w, ph.ns+p.Weights[i]
				ph.mid += float64(at+w/2) * float64(w)
				break
			}
			at += w
		}
	}
	if fmt.Sprint(gotNs) != fmt.Sprint(wantNs) {
		t.Errorf("speedscope's threads and their busy ns %v, pprof's %v: want one timeline per thread, weighing its samples", gotNs, wantNs)
	}
	early, late := busyIn["main.earlyPhase"], busyIn["main.latePhase"]
	if early == nil || late == nil {
		t.Fatalf("no samples in earlyPhase (%v) or latePhase (%v)", early, late)
	}
	earlyMid, lateMid := time.Duration(early.mid/float64(early.ns)), time.Duration(late.mid/float64(late.ns))
	t.Logf("earlyPhase busy %v from %v to %v (centre %v); latePhase busy %v from %v to %v (centre %v)",
		time.Duration(early.ns), early.first, early.last, earlyMid, time.Duration(late.ns), late.first, late.last, lateMid)
	// The early thread stops spinning when the late one starts, 0.4 s
	// after it started: their busy time is centred about 0.4 s apart (at
	// least half that on a machine that starves them), where samples timed
	// when they were read would bunch together. (CPU time a thread used
	// short of a period is counted when it ends, at that time.)
	if lateMid-earlyMid < 200*time.Millisecond {
		t.Errorf("earlyPhase's samples are centred at %v, latePhase's at %v: want them 0.2 s apart or more (the timeline lost the samples' times)", earlyMid, lateMid)
	}

	if !browser {
		return
	}
	// speedscope itself lists one profile per thread.
	dom := openInSpeedscope(t, b)
	count := regexp.MustCompile(`\((\d+)/(\d+)\)`).FindStringSubmatch(dom)
	if count == nil || count[2] != strconv.Itoa(len(f.Profiles)) {
		t.Errorf("speedscope shows profile %v, want N/%d:\n%s", count, len(f.Profiles), dom)
	}
	if !strings.Contains(dom, "<title>"+f.Name) {
		t.Errorf("speedscope's title is not the file's name %q:\n%s", f.Name, dom)
	}
	for _, p := range f.Profiles {
		if !strings.Contains(dom, ">"+p.Name+"<") {
			t.Errorf("speedscope does not list %q:\n%s", p.Name, dom)
		}
	}
}

// openInSpeedscope serves speedscope (the npm package's release build) and
// file on a local port, opens file in it with headless Chromium
// (#profileURL=, which speedscope loads only over HTTP) and returns the
// page's DOM once loaded. Missing tools fail the test, saying how to get
// them.
func openInSpeedscope(t *testing.T, file []byte) string {
	t.Helper()
	var browser string
	for _, name := range []string{"chromium-headless-shell", "chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Fatal("no headless Chromium on PATH (chromium-headless-shell or chromium): run scripts/install-deps.sh, or apt-get install chromium-headless-shell")
	}
	home, _ := os.UserHomeDir()
	root := os.Getenv("MACPROF_SPEEDSCOPE_DIR")
	if root == "" {
		root = filepath.Join(home, speedscopeCache, "node_modules", "speedscope", "dist", "release")
	}
	if _, err := os.Stat(filepath.Join(root, "index.html")); err != nil {
		t.Fatalf("speedscope's release build is not at %s (%v): run scripts/install-deps.sh, or npm install --prefix ~/%s speedscope@%s, or set MACPROF_SPEEDSCOPE_DIR to its dist/release", root, err, speedscopeCache, speedscopeVersion)
	}
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir(root)))
	mux.HandleFunc("/profile.speedscope.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(file)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	// Chromium takes 2-3 s on an idle machine, and up to 14 s when the
	// machine ran 40 others.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--user-data-dir="+t.TempDir(),
		"--virtual-time-budget=2000", "--dump-dom", srv.URL+"/index.html#profileURL=/profile.speedscope.json")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", browser, err, stderr.String())
	}
	t.Logf("%s loaded speedscope in %v", filepath.Base(browser), time.Since(start).Round(time.Millisecond))
	// Text only: speedscope's inline styles and scripts are long.
	s := regexp.MustCompile(`(?s)<style.*?</style>|<script.*?</script>`).ReplaceAllString(string(dom), "")
	return s
}
