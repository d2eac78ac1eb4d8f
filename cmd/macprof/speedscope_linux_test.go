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
// the thread's samples, and the early thread's busy samples all come before
// the late thread's: the samples keep the kernel's times, not the time
// they were read at the end. The file then opens in speedscope, in headless
// Chromium, which lists one profile per thread.
func TestRecordSpeedscopeShowsWhenThreadsRan(t *testing.T) {
	macprof, _ := macprofBinary(t)
	phases := testprog.BuildGo(t, "gophases")
	dir := t.TempDir()
	ss, pb := filepath.Join(dir, "run.speedscope.json"), filepath.Join(dir, "run.pb.gz")
	const hz = 199
	out, err := exec.Command(macprof, "record", "-q", "-F", strconv.Itoa(hz), "-o", ss, "-o", pb, "--", phases, "0.4").CombinedOutput()
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
	}
	busyIn := map[string]*phase{}
	gotNs := map[int64]int64{}
	for _, p := range f.Profiles {
		m := tidOf.FindStringSubmatch(p.Name)
		if m == nil {
			t.Fatalf("profile %q names no thread", p.Name)
		}
		tid, _ := strconv.ParseInt(m[1], 10, 64)
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
	t.Logf("earlyPhase busy %v from %v to %v; latePhase busy %v from %v to %v",
		time.Duration(early.ns), early.first, early.last, time.Duration(late.ns), late.first, late.last)
	// The early thread stops spinning when the late one starts: its last
	// sample ends before the late thread's first starts (two periods of
	// slack for the read of the clock each spin makes).
	if slack := 2 * time.Second / hz; early.last > late.first+slack {
		t.Errorf("earlyPhase runs until %v, after latePhase starts at %v: the timeline lost the samples' times", early.last, late.first)
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
