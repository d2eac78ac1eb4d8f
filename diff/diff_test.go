package diff

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestQuantiles(t *testing.T) {
	if got := normalQuantile(0.975); math.Abs(got-1.95996) > 1e-4 {
		t.Errorf("normalQuantile(0.975) = %.5f", got)
	}
}

// writeFolded writes a folded-stacks profile into dir and returns its path.
func writeFolded(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCompare(t *testing.T) {
	dir := t.TempDir()
	base := writeFolded(t, dir, "base.folded", "main;work;sort 8000\nmain;work;hash 2000\n")
	same := writeFolded(t, dir, "same.folded", "main;work;sort 7950\nmain;work;hash 2050\n")
	slow := writeFolded(t, dir, "slow.folded", "main;work;sort 8000\nmain;work;sort;extra 2400\nmain;work;hash 2000\n")
	longer := writeFolded(t, dir, "longer.folded", "main;work;sort 16000\nmain;work;hash 4000\n")

	r, err := Run(Config{Base: []string{base}, New: []string{same}})
	if err != nil || len(r.Regressions) != 0 {
		t.Fatalf("same build: %v, regressions %v", err, r.Regressions)
	}
	// Twice the samples at the same shares is no change.
	if r, err = Run(Config{Base: []string{base}, New: []string{longer}}); err != nil || len(r.Regressions) != 0 {
		t.Fatalf("longer profile: %v, regressions %v", err, r.Regressions)
	}
	r, err = Run(Config{Base: []string{base}, New: []string{slow}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Regressions) == 0 || r.Regressions[0] != "extra" {
		t.Fatalf("regressions %v, want extra first", r.Regressions)
	}
	f := r.Functions[0]
	if f.Name != "extra" || f.Flat.Base != 0 || math.Abs(f.Flat.New-100*2400.0/12400) > 1e-9 || f.Flat.Relative != nil {
		t.Errorf("extra: %+v", f)
	}
	// --ignore the new function: sort's cumulative share still rose (by
	// sampling alone: one profile a side and the prior run spread would
	// not call 4.5 points at 80%).
	r, _ = Run(Config{Base: []string{base}, New: []string{slow}, Ignore: regexp.MustCompile("^extra$"), RunSpread: -1})
	if len(r.Regressions) == 0 || r.Regressions[0] != "sort" {
		t.Errorf("ignoring extra: regressions %v, want sort", r.Regressions)
	}
	// --focus on hash only: nothing of hash rose.
	r, _ = Run(Config{Base: []string{base}, New: []string{slow}, Focus: regexp.MustCompile("hash")})
	if len(r.Regressions) != 0 || len(r.Functions) != 1 {
		t.Errorf("focus on hash: regressions %v, functions %d", r.Regressions, len(r.Functions))
	}
	// A threshold above the change passes.
	th, _ := ParseThresholds("flat:+30pp,cum:+30pp")
	if r, _ = Run(Config{Base: []string{base}, New: []string{slow}, FailOn: th}); len(r.Regressions) != 0 {
		t.Errorf("high thresholds: regressions %v", r.Regressions)
	}
	// total: the longer profile has twice the samples.
	th, _ = ParseThresholds("total:+10%")
	if r, _ = Run(Config{Base: []string{base}, New: []string{longer}, FailOn: th}); len(r.Regressions) != 1 || r.Regressions[0] != "total" {
		t.Errorf("total: regressions %v, total %+v", r.Regressions, r.Total)
	}

	for _, format := range []Format{Text, Markdown, JSON} {
		var b bytes.Buffer
		if err := r.Write(&b, format); err != nil || !strings.Contains(b.String(), "sort") {
			t.Errorf("%s report: %v\n%s", format, err, b.String())
		}
		if format == JSON {
			var back Report
			if err := json.Unmarshal(b.Bytes(), &back); err != nil || len(back.Regressions) != 1 {
				t.Errorf("JSON does not read back: %v %+v", err, back)
			}
		}
	}
}

func TestSpread(t *testing.T) {
	dir := t.TempDir()
	// Shares 50, 60, 40% a side: a 5-point rise that sampling alone (3,000
	// samples a side) would call significant, but the spread does not.
	var bs, ns []string
	for i, v := range []int{500, 600, 400} {
		bs = append(bs, writeFolded(t, dir, "b"+string(rune('0'+i)), "main;f "+itoa(v)+"\nmain;g "+itoa(1000-v)+"\n"))
		ns = append(ns, writeFolded(t, dir, "n"+string(rune('0'+i)), "main;f "+itoa(v+50)+"\nmain;g "+itoa(950-v)+"\n"))
	}
	r, err := Run(Config{Base: bs, New: ns})
	if err != nil || len(r.Regressions) != 0 {
		t.Fatalf("spread: %v, regressions %v", err, r.Regressions)
	}
	if r1, _ := Run(Config{Base: bs[:1], New: ns[:1]}); len(r1.Regressions) != 0 {
		t.Errorf("one a side, 5 points at 1,000 samples: regressions %v", r1.Regressions)
	}
	if !strings.Contains(r.Method, "spread measured between profiles") {
		t.Errorf("method %q", r.Method)
	}
}

func itoa(v int) string { return strconv.Itoa(v) }

func TestThresholds(t *testing.T) {
	good := map[string]string{
		"cum:+5%":                  "cum:+5%",
		"flat:2pp":                 "flat:+2pp",
		" total:+10% , cum:+0.5pp": "total:+10%,cum:+0.5pp",
	}
	for in, want := range good {
		th, err := ParseThresholds(in)
		var s []string
		for _, x := range th {
			s = append(s, x.String())
		}
		if err != nil || strings.Join(s, ",") != want {
			t.Errorf("ParseThresholds(%q) = %v, %v; want %s", in, s, err, want)
		}
	}
	for _, in := range []string{"", "cum", "cum:5", "self:+5%", "total:+5pp", "cum:-5%", "flat:+xpp", "cum:+NaN%", "cum:+Inf%"} {
		if _, err := ParseThresholds(in); err == nil {
			t.Errorf("ParseThresholds(%q) accepted", in)
		}
	}
}

func TestExpand(t *testing.T) {
	dir := t.TempDir()
	a := writeFolded(t, dir, "a.folded", "m 1\n")
	b := writeFolded(t, dir, "b.folded", "m 1\n")
	writeFolded(t, dir, ".hidden", "m 1\n")
	got, skipped, err := Expand([]string{dir, filepath.Join(dir, "*.folded"), a})
	want := []string{a, b, a, b, a}
	if err != nil || strings.Join(got, " ") != strings.Join(want, " ") || len(skipped) != 0 {
		t.Errorf("Expand = %v, %v, %v; want %v", got, skipped, err, want)
	}
	if _, _, err := Expand([]string{filepath.Join(dir, "*.pb.gz")}); err == nil {
		t.Error("a pattern that matches nothing expanded")
	}
	if _, _, err := Expand([]string{t.TempDir()}); err == nil {
		t.Error("an empty directory expanded")
	}
}

// TestExpandByContent: a directory as a CI job leaves it, profiles under
// any name beside `go test -bench` output and a test binary, gives the
// profiles and lists the others as skipped; a file named as a profile that
// does not read as one is an error, and so is a directory of no profile.
func TestExpandByContent(t *testing.T) {
	dir := t.TempDir()
	prof := writeFolded(t, dir, "cpu.out", "")
	if err := os.WriteFile(prof, synthetic(t, "cpu", map[string]int64{"a": 3}), 0o644); err != nil {
		t.Fatal(err)
	}
	bench := writeFolded(t, dir, "bench.txt", "goos: linux\ngoarch: amd64\npkg: example.com/work\nBenchmarkWork-2   \t    1375\t   1699851 ns/op\nPASS\nok  \texample.com/work\t3.2s\n")
	bin := writeFolded(t, dir, "work.test", "\x7fELF\x02\x01\x01\x00\x00\x00")
	folded := writeFolded(t, dir, "run2.txt", "main;a 5\n")
	got, skipped, err := Expand([]string{dir})
	if err != nil || strings.Join(got, " ") != prof+" "+folded || len(skipped) != 2 ||
		!strings.HasPrefix(skipped[0], bench+" (") || !strings.HasPrefix(skipped[1], bin+" (") {
		t.Errorf("Expand = %v, skipped %q, %v; want %s and %s, %s and %s skipped", got, skipped, err, prof, folded, bench, bin)
	}
	writeFolded(t, dir, "broken.pb.gz", "\x1f\x8b\x08")
	if _, _, err := Expand([]string{dir}); err == nil || !strings.Contains(err.Error(), "broken.pb.gz") {
		t.Errorf("a broken .pb.gz in the directory: %v, want its error", err)
	}
	other := t.TempDir()
	writeFolded(t, other, "bench.txt", "BenchmarkWork-2 1 2 ns/op\n")
	if _, _, err := Expand([]string{other}); err == nil || !strings.Contains(err.Error(), "not profiles: ") {
		t.Errorf("a directory without profiles: %v", err)
	}
}

// TestOneTestPerStatistic: a function that calls nothing has its cum share
// equal to its flat share, one statistic, so its rise in both is one test
// of the Bonferroni split, not two; a caller's cum share is another.
func TestOneTestPerStatistic(t *testing.T) {
	dir := t.TempDir()
	base := writeFolded(t, dir, "base.folded", "main;f 500\nmain;g 500\n")
	leaf := writeFolded(t, dir, "leaf.folded", "main;f 700\nmain;g 300\n")
	caller := writeFolded(t, dir, "caller.folded", "main;f 500\nmain;f;h 200\nmain;g 300\n")
	r, err := Run(Config{Base: []string{base}, New: []string{leaf}, RunSpread: -1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Tests != 1 || len(r.Regressions) != 1 || r.Regressions[0] != "f" || len(r.Functions[0].Failed) != 2 {
		t.Errorf("leaf f rose 20 points: %d tests, regressions %v, f failed %v; want 1 test, f failing flat and cum", r.Tests, r.Regressions, r.Functions[0].Failed)
	}
	// f's cum rose (h under it, new), h's flat and cum (one statistic).
	if r, err = Run(Config{Base: []string{base}, New: []string{caller}, RunSpread: -1}); err != nil || r.Tests != 2 {
		t.Errorf("f's cum and h: %v, %d tests, want 2", err, r.Tests)
	}
}

// TestLostSamplesAreSetApart: samples the kernel dropped ([lost: ...], a
// run's share of which follows the machine's load) are set apart, never
// judged: the same build with 3% of one run lost is no regression, and a
// 20% slower function is still found beside it.
func TestLostSamplesAreSetApart(t *testing.T) {
	dir := t.TempDir()
	var base, same, slow []string
	for i, n := range []int{0, 40, -30, 20, -10} {
		base = append(base, writeFolded(t, dir, "base"+itoa(i)+".folded",
			"main;alpha "+itoa(6700+n)+"\nmain;beta "+itoa(3300-n)+"\n"))
		lost := ""
		if i == 2 {
			lost = "[lost: no sample] 300\n"
		}
		same = append(same, writeFolded(t, dir, "same"+itoa(i)+".folded",
			"main;alpha "+itoa(6700-n)+"\nmain;beta "+itoa(3300+n)+"\n"+lost))
		slow = append(slow, writeFolded(t, dir, "slow"+itoa(i)+".folded",
			"main;alpha "+itoa(6700-n)+"\nmain;beta "+itoa(3960+n)+"\n"+lost))
	}
	r, err := Run(Config{Base: base, New: same})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Regressions) != 0 {
		t.Errorf("same build, one run 3%% lost: regressions %v", r.Regressions)
	}
	if len(r.LoadFollowing) != 1 || r.LoadFollowing[0].Name != "[lost: no sample]" {
		t.Errorf("set apart %+v, want [lost: no sample]", r.LoadFollowing)
	}
	if r, err = Run(Config{Base: base, New: slow}); err != nil || !slices.Contains(r.Regressions, "beta") {
		t.Errorf("beta 20%% slower beside lost samples: %v, regressions %v", err, r.Regressions)
	}
}
