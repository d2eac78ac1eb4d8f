package flamegraph

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// svgFrame is one drawn frame, as parsed back from the SVG.
type svgFrame struct {
	title string
	label string
	x, y  float64
	width float64
	fill  string
}

type svgDoc struct {
	width, height int
	texts         []string // texts outside frames (title, subtitle)
	frames        []svgFrame
	script        bool
}

// parseSVG decodes an SVG with encoding/xml, failing the test when it is
// not well-formed.
func parseSVG(t testing.TB, b []byte) svgDoc {
	t.Helper()
	var doc svgDoc
	d := xml.NewDecoder(bytes.NewReader(b))
	var cur *svgFrame
	var path []string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			path = append(path, tok.Name.Local)
			attr := func(name string) string {
				for _, a := range tok.Attr {
					if a.Name.Local == name {
						return a.Value
					}
				}
				return ""
			}
			f := func(name string) float64 {
				v, err := strconv.ParseFloat(attr(name), 64)
				if err != nil {
					t.Fatalf("<%s %s=%q>: %v", tok.Name.Local, name, attr(name), err)
				}
				return v
			}
			switch tok.Name.Local {
			case "svg":
				if tok.Name.Space != "http://www.w3.org/2000/svg" {
					t.Errorf("svg namespace %q", tok.Name.Space)
				}
				doc.width, doc.height = int(f("width")), int(f("height"))
			case "g":
				if attr("class") == "f" {
					doc.frames = append(doc.frames, svgFrame{})
					cur = &doc.frames[len(doc.frames)-1]
				}
			case "rect":
				if cur != nil {
					cur.x, cur.y, cur.width, cur.fill = f("x"), f("y"), f("width"), attr("fill")
				}
			case "script":
				doc.script = true
			case "image", "use", "link", "foreignObject":
				t.Errorf("SVG has a <%s> element: it must be self-contained", tok.Name.Local)
			}
			for _, a := range tok.Attr {
				if a.Name.Local == "href" {
					t.Errorf("SVG refers to %q: it must be self-contained", a.Value)
				}
			}
		case xml.EndElement:
			path = path[:len(path)-1]
			if tok.Name.Local == "g" {
				cur = nil
			}
		case xml.CharData:
			if len(path) == 0 {
				continue
			}
			switch el := path[len(path)-1]; {
			case cur != nil && el == "title":
				cur.title += string(tok)
			case cur != nil && el == "text":
				cur.label += string(tok)
			case cur == nil && el == "text":
				doc.texts = append(doc.texts, string(tok))
			}
		}
	}
	return doc
}

func (d svgDoc) frame(t testing.TB, name string) svgFrame {
	t.Helper()
	var found []svgFrame
	for _, f := range d.frames {
		if strings.HasPrefix(f.title, name+" (") {
			found = append(found, f)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d frames named %q, want 1", len(found), name)
	}
	return found[0]
}

func render(t testing.TB, tr *Tree, o Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteSVG(&buf, tr, o); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestSVGSmall(t *testing.T) {
	var tr Tree
	tr.Add([]string{"main", "run", "compute"}, 60)
	tr.Add([]string{"main", "run", "io"}, 20)
	tr.Add([]string{"main", "gc"}, 20)
	tr.Add([]string{"main", "run", "compute"}, 0) // ignored
	tr.Add(nil, 5)                                // ignored
	if tr.Total() != 100 || tr.Len() != 6 {
		t.Fatalf("total %d, %d nodes", tr.Total(), tr.Len())
	}
	b := render(t, &tr, Options{Title: "Test <profile>", Period: 10 * time.Millisecond, Width: 1000})
	doc := parseSVG(t, b)
	if doc.width != 1000 || !doc.script {
		t.Errorf("width %d, script %v", doc.width, doc.script)
	}
	if len(doc.texts) < 2 || doc.texts[0] != "Test <profile>" || !strings.HasPrefix(doc.texts[1], "Total: 100 samples (1s at 100 Hz)") {
		t.Errorf("title and subtitle %q", doc.texts)
	}
	if len(doc.frames) != 6 {
		t.Fatalf("%d frames, want 6", len(doc.frames))
	}
	inner := 1000.0 - 2*padX
	all := doc.frame(t, "all")
	if all.title != "all (100 samples, 100.00%)" || math.Abs(all.width-inner) > 0.01 || all.x != padX {
		t.Errorf("root %+v", all)
	}
	want := map[string]float64{"main": 100, "run": 80, "compute": 60, "io": 20, "gc": 20}
	for name, n := range want {
		f := doc.frame(t, name)
		if math.Abs(f.width-inner*n/100) > 0.01 {
			t.Errorf("%s: width %.2f, want %.2f", name, f.width, inner*n/100)
		}
		wantTitle := fmt.Sprintf("%s (%d samples, %.2f%%)", name, int(n), n)
		if f.title != wantTitle {
			t.Errorf("title %q, want %q", f.title, wantTitle)
		}
		if f.label != name {
			t.Errorf("%s: label %q", name, f.label)
		}
	}
	// Flame layout: callers below callees, siblings by name, children
	// inside their parent.
	main, run, gc, compute, io := doc.frame(t, "main"), doc.frame(t, "run"), doc.frame(t, "gc"), doc.frame(t, "compute"), doc.frame(t, "io")
	if !(all.y > main.y && main.y > run.y && run.y > compute.y) || run.y != gc.y || compute.y != io.y {
		t.Errorf("rows: all %v main %v run %v gc %v compute %v io %v", all.y, main.y, run.y, gc.y, compute.y, io.y)
	}
	if !(gc.x < run.x && compute.x < io.x) || run.x+run.width > main.x+main.width+0.01 {
		t.Errorf("order: gc %v run %v compute %v io %v", gc.x, run.x, compute.x, io.x)
	}
	// Colours: deterministic by name, different names usually differ.
	if main.fill != color("main", false) || main.fill == run.fill || !strings.HasPrefix(main.fill, "rgb(") {
		t.Errorf("fills %q %q", main.fill, run.fill)
	}
	// Deterministic output.
	if !bytes.Equal(b, render(t, &tr, Options{Title: "Test <profile>", Period: 10 * time.Millisecond, Width: 1000})) {
		t.Error("two renderings differ")
	}
}

func TestSVGLabelsClipped(t *testing.T) {
	var tr Tree
	long := strings.Repeat("very_long_function_name_", 20)
	tr.Add([]string{long}, 10)
	tr.Add([]string{"tiny"}, 1)
	tr.Add([]string{"wide"}, 89)
	doc := parseSVG(t, render(t, &tr, Options{Width: 1200}))
	f := doc.frame(t, long)
	if !strings.HasSuffix(f.label, "..") || !strings.HasPrefix(long, strings.TrimSuffix(f.label, "..")) {
		t.Errorf("long label %q", f.label)
	}
	if float64(len(f.label))*charWidth > f.width {
		t.Errorf("label of %d chars overflows a %.1f px frame", len(f.label), f.width)
	}
	if tiny := doc.frame(t, "tiny"); tiny.label != "" {
		t.Errorf("label %q in a %.1f px frame", tiny.label, tiny.width)
	}
}

func TestFit(t *testing.T) {
	const goName = "github.com/macprof/macprof/exporter.(*pprofBuilder).location"
	for _, c := range []struct {
		name  string
		chars int
		want  string
	}{
		{goName, 100, goName},
		{goName, 40, "exporter.(*pprofBuilder).location"},
		{goName, 20, "exporter.(*pprofBu.."},
		{goName, 5, "exp.."},
		{goName, 4, ""},
		{"std::map<a/b, c>::find", 10, "std::map.."},
		{"main", 4, "main"},
		{"日本語の関数名です", 6, "日本語の.."},
	} {
		if got := fit(c.name, float64(c.chars)*charWidth+6.01); got != c.want {
			t.Errorf("fit(%q, %d chars) = %q, want %q", c.name, c.chars, got, c.want)
		}
	}
}

// TestSVGLarge merges thousands of random stacks and checks that narrow
// frames are dropped and what is drawn stays proportional.
func TestSVGLarge(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var tr Tree
	var total int64
	for i := 0; i < 5000; i++ {
		depth := 5 + rng.IntN(40)
		frames := make([]string, depth)
		for j := range frames {
			frames[j] = fmt.Sprintf("pkg%d.func%d", j%7, rng.IntN(4+j))
		}
		n := int64(1 + rng.IntN(100))
		total += n
		tr.Add(frames, n)
	}
	if tr.Total() != total {
		t.Fatalf("total %d, want %d", tr.Total(), total)
	}
	b := render(t, &tr, Options{Width: 1200})
	doc := parseSVG(t, b)
	inner := 1200.0 - 2*padX
	minWidth := inner * 0.001
	if len(doc.frames) < 50 || len(doc.frames) >= tr.Len() {
		t.Errorf("%d frames drawn of %d", len(doc.frames), tr.Len())
	}
	for _, f := range doc.frames {
		if f.width < minWidth-0.01 {
			t.Fatalf("frame %q is %.3f px wide, under 0.1%%", f.title, f.width)
		}
		// The title's count agrees with the width.
		var name string
		var n int64
		i := strings.LastIndex(f.title, " (")
		name = f.title[:i]
		if _, err := fmt.Sscanf(strings.ReplaceAll(f.title[i:], ",", ""), " (%d samples", &n); err != nil {
			t.Fatalf("title %q: %v", f.title, err)
		}
		if math.Abs(f.width-inner*float64(n)/float64(total)) > 0.01 {
			t.Fatalf("%s: width %.2f for %d of %d samples", name, f.width, n, total)
		}
	}
	if len(b) > 4<<20 {
		t.Errorf("SVG of %d bytes", len(b))
	}
}

func TestSVGEmpty(t *testing.T) {
	var tr Tree
	doc := parseSVG(t, render(t, &tr, Options{}))
	if len(doc.frames) != 0 || !strings.HasPrefix(doc.texts[1], "Total: 0 samples") {
		t.Errorf("empty graph: %d frames, texts %q", len(doc.frames), doc.texts)
	}
}

func TestSVGHostileNames(t *testing.T) {
	var tr Tree
	names := []string{"a<b>&\"c'", "line\nbreak\r\t", "bad\xff\xfeutf8", "nul\x00byte", "]]></script><script>alert(1)</script>", "\u2028sep", "0x7fff1234", "libc.so.6+0x1f00", "[truncated]"}
	for i, n := range names {
		tr.Add([]string{"root", n}, int64(10+i))
	}
	doc := parseSVG(t, render(t, &tr, Options{}))
	if len(doc.frames) != len(names)+2 {
		t.Fatalf("%d frames, want %d", len(doc.frames), len(names)+2)
	}
	doc.frame(t, "a<b>&\"c'")
	doc.frame(t, "line break  ")
	doc.frame(t, "bad\uFFFDutf8")
	doc.frame(t, "nul byte")
	if f := doc.frame(t, "0x7fff1234"); !strings.HasPrefix(f.fill, "rgb(") || f.fill[4:7] != f.fill[8:11] {
		t.Errorf("unknown address not grey: %s", f.fill)
	}
}

func FuzzSVG(f *testing.F) {
	f.Add("main", "a<b>", int64(3))
	f.Add("x\xff", "]]>", int64(1))
	f.Fuzz(func(t *testing.T, a, b string, n int64) {
		var tr Tree
		tr.Add([]string{a, b}, n)
		tr.Add([]string{b}, 1)
		doc := parseSVG(t, render(t, &tr, Options{}))
		if len(doc.frames) == 0 {
			t.Fatal("no frames")
		}
	})
}

func TestGroup(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := group(n); got != want {
			t.Errorf("group(%d) = %q, want %q", n, got, want)
		}
	}
}

func BenchmarkSVG(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	var tr Tree
	for i := 0; i < 10000; i++ {
		frames := make([]string, 5+rng.IntN(40))
		for j := range frames {
			frames[j] = fmt.Sprintf("pkg%d.func%d", j%7, rng.IntN(4+j))
		}
		tr.Add(frames, int64(1+rng.IntN(100)))
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := WriteSVG(io.Discard, &tr, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestDiffSVG(t *testing.T) {
	var base, cur Tree
	base.Add([]string{"main", "grows"}, 50)
	base.Add([]string{"main", "shrinks"}, 50)
	cur.Add([]string{"main", "grows"}, 150)
	cur.Add([]string{"main", "shrinks"}, 25)
	cur.Add([]string{"main", "added"}, 25)
	var buf bytes.Buffer
	if err := WriteDiffSVG(&buf, &base, &cur, Options{Title: "diff"}); err != nil {
		t.Fatal(err)
	}
	doc := parseSVG(t, buf.Bytes())
	if !doc.script {
		t.Error("no zoom script")
	}
	for name, want := range map[string]struct{ fill, title string }{
		"grows":   {"rgb(255,", "grows (150 samples, 75.00%; base 50.00%, 25.00 pp)"},
		"shrinks": {"rgb(", "shrinks (25 samples, 12.50%; base 50.00%, -37.50 pp)"},
		"added":   {"rgb(255,55,55)", "added (25 samples, 12.50%; base 0.00%, 12.50 pp)"},
		"main":    {"rgb(255,255,255)", "main (200 samples, 100.00%; base 100.00%, 0.00 pp)"},
	} {
		f := doc.frame(t, name)
		if f.title != want.title || !strings.HasPrefix(f.fill, want.fill) {
			t.Errorf("%s: title %q fill %q, want %q and a fill starting %q", name, f.title, f.fill, want.title, want.fill)
		}
	}
	// Shrinking frames are blue: their blue channel stays full.
	if f := doc.frame(t, "shrinks"); !strings.HasSuffix(f.fill, ",255)") || strings.HasPrefix(f.fill, "rgb(255,") {
		t.Errorf("shrinking frame's fill %q is not blue", f.fill)
	}
}
