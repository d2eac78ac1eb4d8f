package flamegraph

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"math/rand/v2"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// highlight is the fill the script gives matched frames (flamegraph.pl's).
const highlight = "rgb(230,0,230)"

// xmlNode is an SVG element as the node harness builds its DOM from.
type xmlNode struct {
	Name     string            `json:"name"`
	Attrs    map[string]string `json:"attrs"`
	Text     string            `json:"text,omitempty"`
	Children []*xmlNode        `json:"children,omitempty"`
}

// parseTree parses an SVG into elements and returns them and the text of
// its script, failing when the SVG is not well-formed XML.
func parseTree(t *testing.T, b []byte) (*xmlNode, string) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	var stack []*xmlNode
	var root *xmlNode
	var script string
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
			n := &xmlNode{Name: tok.Name.Local, Attrs: map[string]string{}}
			for _, a := range tok.Attr {
				n.Attrs[a.Name.Local] = a.Value
			}
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				p.Children = append(p.Children, n)
			} else {
				root = n
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) == 0 {
				continue
			}
			n := stack[len(stack)-1]
			if n.Name == "script" {
				script += string(tok)
			} else if len(n.Children) == 0 {
				n.Text += string(tok)
			}
		}
	}
	if root == nil || script == "" {
		t.Fatal("the SVG has no root element or no script")
	}
	return root, script
}

// nodeBinary finds node (Debian's nodejs package), which runs the flame
// graph's script in these tests, or fails saying how to install it.
func nodeBinary(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"node", "nodejs"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("node is needed to run the flame graph's JavaScript: apt-get install nodejs (scripts/install-deps.sh installs it)")
	return ""
}

type action map[string]any

// jsState is what the harness reports of the graph.
type jsState struct {
	Frames []struct {
		Fill, Display, Opacity, Label string
		X, Width                      float64
	}
	Matched, Search, Unzoom, Details string
	Prompts                          int
}

// runScript runs svg's script in node on a DOM built from svg, performs
// the actions and returns each one's result.
func runScript(t *testing.T, svg []byte, actions ...action) []json.RawMessage {
	t.Helper()
	node := nodeBinary(t)
	tree, script := parseTree(t, svg)
	in, err := json.Marshal(map[string]any{"tree": tree, "script": script, "actions": actions})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "testdata/harness.js")
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	var res []json.RawMessage
	if err := json.Unmarshal(out, &res); err != nil || len(res) != len(actions) {
		t.Fatalf("harness output %q: %v", out, err)
	}
	return res
}

func state(t *testing.T, raw json.RawMessage) jsState {
	t.Helper()
	var s jsState
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func number(t *testing.T, raw json.RawMessage) int64 {
	t.Helper()
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		t.Fatalf("want a number, got %s", raw)
	}
	return n
}

// stack is one folded stack and its count, the tests' input and oracle.
type stack struct {
	frames []string
	count  int64
}

func treeOf(stacks []stack) *Tree {
	var tr Tree
	for _, s := range stacks {
		tr.Add(s.frames, s.count)
	}
	return &tr
}

// wantMatched is flamegraph.pl's "Matched" from the stacks themselves: the
// samples with at least one frame (the root "all" included) that re
// matches, so a sample under nested matches counts once.
func wantMatched(stacks []stack, re *regexp.Regexp) int64 {
	var n int64
	for _, s := range stacks {
		hit := re.MatchString("all")
		for _, f := range s.frames {
			hit = hit || re.MatchString(f)
		}
		if hit {
			n += s.count
		}
	}
	return n
}

// names returns the function of each frame of the document, in order.
func names(doc svgDoc) []string {
	out := make([]string, len(doc.frames))
	for i, f := range doc.frames {
		out[i] = f.title[:strings.LastIndex(f.title, " (")]
	}
	return out
}

var searchStacks = []stack{
	{[]string{"main", "a", "b", "a"}, 10}, // a under a: counted once
	{[]string{"main", "c", "a"}, 20},
	{[]string{"main", "c", "d"}, 30},
	{[]string{"main", "ab"}, 5},
	{[]string{"other", "x"}, 35},
}

// TestScriptSearch runs the SVG's own search in node: the frames that
// match are highlighted, the others keep their colour, and "Matched: N%"
// is the share of samples under matched frames, nested matches once.
func TestScriptSearch(t *testing.T) {
	svg := render(t, treeOf(searchStacks), Options{})
	doc := parseSVG(t, svg)
	fn := names(doc)
	for _, c := range []struct {
		re      string
		matched string
	}{
		{"^a$", "Matched: 30.0%"},
		{"^(b|d)$", "Matched: 40.0%"},
		{"^c$", "Matched: 50.0%"},
		{"a", "Matched: 100%"}, // "all" is a frame too, as in flamegraph.pl
		{"^ab?$", "Matched: 35.0%"},
		{"zzz", "Matched: 0.0%"},
		{"^A$", "Matched: 0.0%"}, // case matters until Ctrl-I
	} {
		res := runScript(t, svg, action{"op": "search", "arg": c.re}, action{"op": "state"}, action{"op": "resetSearch"}, action{"op": "state"})
		re := regexp.MustCompile(c.re)
		if got, want := number(t, res[0]), wantMatched(searchStacks, re); got != want {
			t.Errorf("search(%q) = %d samples, want %d", c.re, got, want)
		}
		s := state(t, res[1])
		if s.Matched != c.matched || s.Search != "Reset Search" {
			t.Errorf("search(%q): %q, button %q; want %q", c.re, s.Matched, s.Search, c.matched)
		}
		for i, f := range s.Frames {
			want := doc.frames[i].fill
			if re.MatchString(fn[i]) {
				want = highlight
			}
			if f.Fill != want {
				t.Errorf("search(%q): frame %q fill %q, want %q", c.re, fn[i], f.Fill, want)
			}
		}
		r := state(t, res[3])
		for i, f := range r.Frames {
			if f.Fill != doc.frames[i].fill {
				t.Errorf("after reset: frame %q fill %q, want %q", fn[i], f.Fill, doc.frames[i].fill)
			}
		}
		if strings.TrimSpace(r.Matched) != "" || r.Search != "Search" {
			t.Errorf("after reset: matched %q, button %q", r.Matched, r.Search)
		}
	}

	// A term that is not a regular expression says so and changes nothing.
	res := runScript(t, svg, action{"op": "search", "arg": "("}, action{"op": "state"})
	if s := state(t, res[1]); number(t, res[0]) != -1 || s.Matched != "Not a regular expression: (" || s.Search != "Search" {
		t.Errorf("search(\"(\") = %s, %q, %q", res[0], s.Matched, s.Search)
	}
}

// TestScriptKeys: Ctrl-F, Cmd-F, F3 and / open the prompt, a second one
// (or Escape) resets, Ctrl-I toggles case, the Search button works as the
// keys do, and hovering shows a frame's details.
func TestScriptKeys(t *testing.T) {
	svg := render(t, treeOf(searchStacks), Options{})
	res := runScript(t, svg,
		action{"op": "key", "key": "f", "ctrl": true, "answer": "^d$"}, // 0
		action{"op": "state"},
		action{"op": "key", "key": "/"}, // resets
		action{"op": "state"},
		action{"op": "key", "key": "F3", "answer": nil}, // cancelled prompt
		action{"op": "state"},
		action{"op": "key", "key": "f", "meta": true, "answer": "^A$"}, // 6
		action{"op": "key", "key": "i", "ctrl": true},
		action{"op": "state"},
		action{"op": "key", "key": "Escape"}, // 9
		action{"op": "state"},
		action{"op": "key", "key": "x"}, // 11: other keys are left alone
		action{"op": "clickId", "id": "search"},
		action{"op": "state"},
		action{"op": "hover", "frame": 0},
		action{"op": "state"},
	)
	want := []struct {
		i               int
		matched, button string
		prompts         int
	}{
		{1, "Matched: 30.0%", "Reset Search", 1},
		{3, " ", "Search", 1},
		{5, " ", "Search", 2},
		{8, "Matched: 30.0%", "Reset Search", 3},
		{10, " ", "Search", 3},
		{13, " ", "Search", 4}, // the button prompts; the answer is nil
	}
	for _, w := range want {
		s := state(t, res[w.i])
		if s.Matched != w.matched || s.Search != w.button || s.Prompts != w.prompts {
			t.Errorf("step %d: matched %q, button %q, %d prompts; want %q, %q, %d", w.i, s.Matched, s.Search, s.Prompts, w.matched, w.button, w.prompts)
		}
	}
	for _, i := range []int{0, 2, 4, 6, 7} {
		if string(res[i]) != "true" {
			t.Errorf("step %d: the key's default action was not prevented", i)
		}
	}
	if string(res[11]) != "false" {
		t.Error("a plain x key was taken from the browser")
	}
	if s := state(t, res[15]); s.Details != "all (100 samples, 100.00%)" {
		t.Errorf("hovering the root shows %q", s.Details)
	}
}

// TestScriptZoom: a click widens a frame and its callees, dims its callers
// and hides the rest; Reset Zoom (or a click on the root) restores every
// frame; a search while zoomed still counts all samples.
func TestScriptZoom(t *testing.T) {
	svg := render(t, treeOf(searchStacks), Options{})
	doc := parseSVG(t, svg)
	fn := names(doc)
	idx := func(name string, depth int) int {
		for i := range doc.frames {
			if fn[i] == name && doc.frames[i].y == doc.frames[0].y-float64(depth*frameHeight) {
				return i
			}
		}
		t.Fatalf("no frame %q at depth %d", name, depth)
		return -1
	}
	c := idx("c", 2)
	res := runScript(t, svg,
		action{"op": "state"},
		action{"op": "click", "frame": c},
		action{"op": "state"},
		action{"op": "search", "arg": "^a$"},
		action{"op": "clickId", "id": "unzoom"},
		action{"op": "state"},
		action{"op": "click", "frame": c},
		action{"op": "click", "frame": 0},
		action{"op": "state"},
		action{"op": "click", "frame": idx("b", 3)},
		action{"op": "state"},
	)
	before, zoomed := state(t, res[0]), state(t, res[2])
	if before.Unzoom != "hidden" || zoomed.Unzoom != "visible" {
		t.Errorf("Reset Zoom is %q before, %q zoomed", before.Unzoom, zoomed.Unzoom)
	}
	full := float64(doc.width - 2*padX)
	// c is 50 of 100 samples: a (20) and d (30) share its full width.
	for name, w := range map[string]struct {
		depth        int
		x, width     float64
		display, opa string
	}{
		"all":   {0, padX, full, "", "0.6"},
		"main":  {1, padX, full, "", "0.6"},
		"c":     {2, padX, full, "", ""},
		"a":     {3, padX, full * 20 / 50, "", ""},
		"d":     {3, padX + full*20/50, full * 30 / 50, "", ""},
		"other": {1, 0, 0, "none", ""},
		"ab":    {2, 0, 0, "none", ""},
		"b":     {3, 0, 0, "none", ""},
	} {
		f := zoomed.Frames[idx(name, w.depth)]
		if f.Display != w.display || (w.display == "" && (abs(f.X-w.x) > 0.01 || abs(f.Width-w.width) > 0.01 || f.Opacity != w.opa)) {
			t.Errorf("zoomed on c: %s at x %.2f width %.2f display %q opacity %q; want %.2f, %.2f, %q, %q", name, f.X, f.Width, f.Display, f.Opacity, w.x, w.width, w.display, w.opa)
		}
	}
	// b's one callee is as wide as b: widened with it, not dimmed as a
	// caller.
	if f := state(t, res[10]).Frames[idx("a", 4)]; abs(f.Width-full) > 0.01 || f.Opacity != "" || f.Display != "" {
		t.Errorf("zoomed on b: its callee a %+v, want the full width, not dimmed", f)
	}
	if got := number(t, res[3]); got != 30 {
		t.Errorf("search while zoomed: %d samples, want 30 of all 100", got)
	}
	for _, i := range []int{5, 8} {
		s := state(t, res[i])
		for j, f := range s.Frames {
			b := before.Frames[j]
			if abs(f.X-b.X) > 0.01 || abs(f.Width-b.Width) > 0.01 || f.Display != "" || f.Opacity != "" || f.Label != doc.frames[j].label {
				t.Errorf("step %d, after reset: %s %+v, want %+v", i, fn[j], f, b)
			}
		}
		if s.Unzoom != "hidden" {
			t.Errorf("step %d: Reset Zoom still %q", i, s.Unzoom)
		}
	}
}

// TestScriptRandom compares the script's matched samples with the stacks'
// on random trees: names from a small alphabet nest and repeat.
func TestScriptRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 2))
	res := []string{"^f1$", "f[12]", "^f3$|^f0$", "1", ".", "^$"}
	for trial := range 4 {
		var stacks []stack
		for range 40 {
			fr := make([]string, 1+rng.IntN(8))
			for i := range fr {
				fr[i] = fmt.Sprintf("f%d", rng.IntN(5))
			}
			stacks = append(stacks, stack{fr, int64(1 + rng.IntN(9))})
		}
		// Wide enough that no frame is dropped: the oracle counts them all.
		svg := render(t, treeOf(stacks), Options{Width: 20000, MinFraction: 1e-9})
		var acts []action
		for _, r := range res {
			acts = append(acts, action{"op": "search", "arg": r})
		}
		out := runScript(t, svg, acts...)
		for i, r := range res {
			if got, want := number(t, out[i]), wantMatched(stacks, regexp.MustCompile(r)); got != want {
				t.Errorf("trial %d: search(%q) = %d samples, want %d", trial, r, got, want)
			}
		}
	}
}

// TestScriptDiffSVG: the differential graph has the same search and zoom.
func TestScriptDiffSVG(t *testing.T) {
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
	res := runScript(t, buf.Bytes(), action{"op": "search", "arg": "^(grows|added)$"}, action{"op": "state"},
		action{"op": "resetSearch"}, action{"op": "click", "frame": 2}, action{"op": "state"})
	s := state(t, res[1])
	if number(t, res[0]) != 175 || s.Matched != "Matched: 87.5%" {
		t.Errorf("diff search: %s samples, %q; want 175, Matched: 87.5%%", res[0], s.Matched)
	}
	z := state(t, res[4])
	if z.Unzoom != "visible" || abs(z.Frames[2].Width-float64(doc.width-2*padX)) > 0.01 || z.Frames[2].Fill != doc.frames[2].fill {
		t.Errorf("diff zoom on frame 2: %+v", z.Frames[2])
	}
}

// TestSVGControls checks, without running it, what the script relies on:
// the controls by id, each frame's sample range and depth, and the
// functions it defines.
func TestSVGControls(t *testing.T) {
	svg := render(t, treeOf(searchStacks), Options{})
	tree, script := parseTree(t, svg)
	ids := map[string]*xmlNode{}
	var frames []*xmlNode
	var walk func(n *xmlNode)
	walk = func(n *xmlNode) {
		if id := n.Attrs["id"]; id != "" {
			ids[id] = n
		}
		if n.Name == "g" && n.Attrs["class"] == "f" {
			frames = append(frames, n)
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(tree)
	for id, text := range map[string]string{"search": "Search", "unzoom": "Reset Zoom", "matched": " ", "details": " ", "title": "Flame graph"} {
		if n := ids[id]; n == nil || n.Name != "text" || n.Text != text {
			t.Errorf("control %q: %+v, want a text %q", id, n, text)
		}
	}
	if ids["unzoom"].Attrs["visibility"] != "hidden" || ids["search"].Attrs["class"] != "btn" {
		t.Errorf("unzoom %v, search %v", ids["unzoom"].Attrs, ids["search"].Attrs)
	}
	// data-x, data-w and data-d are each frame's first sample, samples and
	// depth: a child lies within its parent, one level deeper.
	type span struct{ x, w, d int64 }
	var spans []span
	for _, f := range frames {
		var s span
		for k, p := range map[string]*int64{"data-x": &s.x, "data-w": &s.w, "data-d": &s.d} {
			v, err := strconv.ParseInt(f.Attrs[k], 10, 64)
			if err != nil {
				t.Fatalf("frame %v: %s: %v", f.Attrs, k, err)
			}
			*p = v
		}
		spans = append(spans, s)
	}
	if spans[0] != (span{0, 100, 0}) {
		t.Errorf("root span %+v", spans[0])
	}
	for i, s := range spans[1:] {
		parent := false
		for _, p := range spans {
			if p.d == s.d-1 && p.x <= s.x && s.x+s.w <= p.x+p.w {
				parent = true
			}
		}
		if !parent || s.w <= 0 {
			t.Errorf("frame %d %+v lies in no frame one level up", i+1, s)
		}
	}
	for _, fn := range []string{"search", "resetSearch", "searchPrompt", "matchedSamples", "zoom", "resetZoom", "toggleCase", "onKey", "init"} {
		if !strings.Contains(script, "function "+fn+"(") {
			t.Errorf("the script does not define %s", fn)
		}
	}
	if strings.Contains(script, "http") || strings.Contains(script, "{{W}}") || !strings.Contains(script, "var W = 1200,") {
		t.Error("the script loads something, or its width was not filled in")
	}
}
