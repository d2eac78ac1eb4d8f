package flamegraph

import (
	"bufio"
	_ "embed"
	"fmt"
	"hash/fnv"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Options controls the rendering. Zero values pick the defaults.
type Options struct {
	// Title is shown at the top (default "Flame graph").
	Title string
	// Period, when positive, is the time one sample stands for; the
	// subtitle then shows the total as time too.
	Period time.Duration
	// Width is the image width in pixels (default 1200).
	Width int
	// MinFraction drops frames narrower than this share of all samples
	// (default 0.001, i.e. 0.1%). Frames narrower than one pixel are
	// always dropped.
	MinFraction float64
}

// Layout constants, in pixels.
const (
	frameHeight = 16
	header      = 56
	footer      = 26 // the hovered frame's details and "Matched: N%"
	padX        = 10
	charWidth   = 6.6 // 11px monospace: 0.6em per character
	fontSize    = 11
)

// WriteSVG renders the tree as an SVG document. An empty tree renders a
// graph that says so. Its inline script (see script) zooms on a click and
// searches by regular expression, as flamegraph.pl's graphs do.
func WriteSVG(w io.Writer, t *Tree, o Options) error {
	return draw(w, t, nil, o)
}

// WriteDiffSVG renders a differential flame graph: frames as wide as in
// cur, each coloured by how its share of all samples changed from the same
// call path in base (red grew, blue shrank, white unchanged, the deepest
// colour at a doubling or halving and beyond), with both shares in its
// tooltip; zoom and search as in WriteSVG.
func WriteDiffSVG(w io.Writer, base, cur *Tree, o Options) error {
	if base == nil {
		base = &Tree{}
	}
	return draw(w, cur, base, o)
}

// draw renders t; with base, as a differential graph against it.
func draw(w io.Writer, t, base *Tree, o Options) error {
	if o.Title == "" {
		o.Title = "Flame graph"
	}
	if o.Width <= 2*padX+100 {
		o.Width = 1200
	}
	if o.MinFraction <= 0 {
		o.MinFraction = 0.001
	}
	total := t.Total()
	inner := float64(o.Width - 2*padX)
	minValue := o.MinFraction * float64(total)
	if px := float64(total) / inner; px > minValue {
		minValue = px
	}

	// Collect the frames to draw, depth first, with their sample offsets.
	type frame struct {
		n     int32
		depth int
		x     int64 // samples before this frame on its row
		b     int32 // the same call path in base, or -1
	}
	var frames []frame
	maxDepth := 0
	if total > 0 {
		type item struct {
			n     int32
			depth int
			x     int64
			b     int32
		}
		stack := []item{{0, 0, 0, base.find(0, "")}}
		var ch []int32
		for len(stack) > 0 {
			it := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			frames = append(frames, frame(it))
			if it.depth > maxDepth {
				maxDepth = it.depth
			}
			// Children in name order, left to right; pushed in reverse so
			// that they are also written in name order.
			ch = t.children(ch, it.n)
			x := it.x
			for _, c := range ch {
				x += t.nodes[c].value
			}
			for i := len(ch) - 1; i >= 0; i-- {
				v := t.nodes[ch[i]].value
				x -= v
				if float64(v) >= minValue {
					stack = append(stack, item{ch[i], it.depth + 1, x, base.find(it.b, t.nodes[ch[i]].name)})
				}
			}
		}
	}
	height := header + (maxDepth+1)*frameHeight + footer

	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	p(`<?xml version="1.0" encoding="UTF-8" standalone="no"?>` + "\n")
	p(`<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="%d" height="%d" viewBox="0 0 %d %d" font-family="monospace" font-size="%d">`+"\n",
		o.Width, height, o.Width, height, fontSize)
	p("<style>g.f{cursor:pointer}g.f:hover rect{stroke:#000;stroke-width:0.6}text{fill:#000;pointer-events:none}" +
		"text.btn{fill:#36c;cursor:pointer;pointer-events:auto;text-decoration:underline}</style>\n")
	p(`<rect x="0" y="0" width="%d" height="%d" fill="#f6f6f0"/>`+"\n", o.Width, height)
	p(`<text id="title" x="%d" y="22" text-anchor="middle" font-size="16" font-weight="bold">`, o.Width/2)
	// The title leaves room for the buttons in the corners.
	escape(bw, clip(o.Title, int(float64(o.Width-2*buttonWidth)/(16*0.6))))
	p("</text>\n")
	p(`<text id="subtitle" x="%d" y="42" text-anchor="middle">`, o.Width/2)
	sub := subtitle(total, o.Period)
	if base != nil {
		sub = "Widths: new (" + plural(total, "sample") + "); colour: share vs base (" + plural(base.Total(), "sample") + "), red grew, blue shrank. Click to zoom, Ctrl-F to search."
	}
	escape(bw, sub)
	p("</text>\n")
	// Controls, as flamegraph.pl places them: Reset Zoom top left (shown
	// once zoomed), Search top right, details and "Matched" at the foot.
	p(`<text id="unzoom" class="btn" x="%d" y="22" visibility="hidden">Reset Zoom</text>`+"\n", padX)
	p(`<text id="search" class="btn" x="%d" y="22" text-anchor="end">Search</text>`+"\n", o.Width-padX)
	p(`<text id="details" x="%d" y="%d"> </text>`+"\n", padX, height-9)
	p(`<text id="matched" x="%d" y="%d" text-anchor="end"> </text>`+"\n", o.Width-padX, height-9)
	p(`<g id="frames">` + "\n")
	scale := 0.0
	if total > 0 {
		scale = inner / float64(total)
	}
	for _, f := range frames {
		n := &t.nodes[f.n]
		x := padX + float64(f.x)*scale
		wd := float64(n.value) * scale
		y := height - footer - (f.depth+1)*frameHeight
		name := cleanName(n.name)
		p(`<g class="f" data-x="%d" data-w="%d" data-d="%d"><title>`, f.x, n.value, f.depth)
		escape(bw, name)
		fill := color(n.name, f.n == 0)
		if base != nil {
			var bv int64
			if f.b >= 0 {
				bv = base.nodes[f.b].value
			}
			share, baseShare := frac(n.value, total), frac(bv, base.Total())
			fill = diffColor(share, baseShare)
			p(" (%s, %s; base %s, %s pp)</title>", plural(n.value, "sample"), percent(n.value, total), percent(bv, base.Total()),
				strconv.FormatFloat(100*(share-baseShare), 'f', 2, 64))
		} else {
			p(" (%s, %s)</title>", plural(n.value, "sample"), percent(n.value, total))
		}
		p(`<rect x="%s" y="%d" width="%s" height="%d" rx="2" fill="%s"/>`, num(x), y, num(wd), frameHeight-1, fill)
		p(`<text x="%s" y="%d">`, num(x+3), y+frameHeight-4)
		escape(bw, fit(name, wd))
		p("</text></g>\n")
	}
	p("</g>\n")
	p("<script><![CDATA[\n%s]]></script>\n", strings.ReplaceAll(script, "{{W}}", strconv.Itoa(o.Width)))
	p("</svg>\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("flamegraph: %w", err)
	}
	return nil
}

// buttonWidth is the room, in pixels, a corner button takes from the title.
const buttonWidth = 90

// script is the graph's inline JavaScript (no external resource). A click
// on a frame widens it to the full width, its callees with it, and hides
// the frames beside it; a click on the root or on Reset Zoom resets.
// Search (the button, Ctrl-F, F3 or /) asks for a regular expression,
// highlights the frames whose function matches, and shows the share of
// all samples under matched frames, a sample counted once however many
// matched frames nest above it, as flamegraph.pl's "Matched: N%"; a
// second Search, or Escape, resets; Ctrl-I toggles ignoring case. The
// share is of all samples, in or out of a zoom, from the frames' sample
// counts (data-x, data-w), not their pixels.
//
//go:embed flamegraph.js
var script string

func frac(v, total int64) float64 {
	if total <= 0 {
		return 0
	}
	return float64(v) / float64(total)
}

// diffColor shades from white towards red as a frame's share grows and
// towards blue as it shrinks, by the change relative to the larger share.
func diffColor(share, baseShare float64) string {
	hi := max(share, baseShare)
	if hi == 0 {
		return "rgb(255,255,255)"
	}
	r := (share - baseShare) / hi // -1..1; ±0.5 is a doubling or a halving
	k := int(min(1, 2*abs(r)) * 200)
	if r >= 0 {
		return fmt.Sprintf("rgb(255,%d,%d)", 255-k, 255-k)
	}
	return fmt.Sprintf("rgb(%d,%d,255)", 255-k, 255-k)
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

func subtitle(total int64, period time.Duration) string {
	s := "Total: " + plural(total, "sample")
	if period > 0 && total > 0 {
		d := time.Duration(total) * period
		if total > int64(1<<62)/int64(period) {
			d = 1<<63 - 1
		}
		s += " (" + d.Round(time.Millisecond).String() + " at " + strconv.FormatFloat(float64(time.Second)/float64(period), 'g', 4, 64) + " Hz)"
	}
	return s + ". Hover for details, click to zoom, Ctrl-F or / to search."
}

func plural(n int64, unit string) string {
	s := group(n) + " " + unit
	if n != 1 {
		s += "s"
	}
	return s
}

// group formats n with thousands separators.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func percent(v, total int64) string {
	if total <= 0 {
		return "0%"
	}
	return strconv.FormatFloat(100*float64(v)/float64(total), 'f', 2, 64) + "%"
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) }

// cleanName makes a frame name printable on one line: control characters
// become spaces and invalid UTF-8 becomes U+FFFD (encoding/xml then escapes
// what XML needs escaped).
func cleanName(s string) string {
	ok := utf8.ValidString(s)
	if ok {
		for i := 0; i < len(s); i++ {
			if s[i] < 0x20 || s[i] == 0x7f {
				ok = false
				break
			}
		}
	}
	if ok {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

// fit returns the label of a frame wd pixels wide: the name when it fits,
// else the name without its package path ("github.com/x/y.F" becomes
// "y.F") when that fits, else that clipped and ended with "..", or "" when
// not even three characters and the dots fit.
func fit(name string, wd float64) string {
	maxChars := int((wd - 6) / charWidth)
	if utf8.RuneCountInString(name) <= maxChars {
		return name
	}
	name = short(name)
	if utf8.RuneCountInString(name) <= maxChars {
		return name
	}
	if maxChars < 5 {
		return ""
	}
	n := 0
	for i := range name {
		if n == maxChars-2 {
			return name[:i] + ".."
		}
		n++
	}
	return name
}

// clip shortens s to at most n characters, ending it with "..." when cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n || n < 4 {
		return s
	}
	i := 0
	for k := range s {
		if i == n-3 {
			return s[:k] + "..."
		}
		i++
	}
	return s
}

// short drops the package path from a function name: everything up to
// the last '/' before the first '(', '[', '<' or ' '.
func short(name string) string {
	head := name
	if i := strings.IndexAny(head, "([< "); i >= 0 {
		head = head[:i]
	}
	if i := strings.LastIndexByte(head, '/'); i >= 0 && i+1 < len(name) {
		return name[i+1:]
	}
	return name
}

// color picks a frame's fill from a hash of its name, so that one function
// has one colour everywhere and from run to run: warm colours for named
// functions, greys for unknown addresses and pseudo frames, and a neutral
// colour for the root.
func color(name string, root bool) string {
	if root {
		return "rgb(190,190,210)"
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	v := h.Sum32()
	v1, v2, v3 := float64(v&0xff)/255, float64(v>>8&0xff)/255, float64(v>>16&0xff)/255
	if isUnknown(name) {
		g := 170 + int(40*v1)
		return fmt.Sprintf("rgb(%d,%d,%d)", g, g, g)
	}
	return fmt.Sprintf("rgb(%d,%d,%d)", 205+int(50*v3), int(230*v1), int(55*v2))
}

// isUnknown reports names of unsymbolized addresses ("0x7f12...",
// "libfoo.so+0x1234") and pseudo frames ("[truncated]").
func isUnknown(name string) bool {
	return strings.HasPrefix(name, "0x") || strings.Contains(name, "+0x") || strings.HasPrefix(name, "[")
}

// escape writes s as XML character data (valid in attributes too), as
// encoding/xml's EscapeText writes it: that package is not linked for
// this alone, since its init (a 250-entry map) ran at the start of every
// macprof command. Errors are w's (bufio.Writer reports them at Flush).
func escape(w io.Writer, s string) {
	last := 0
	for i := 0; i < len(s); {
		r, width := utf8.DecodeRuneInString(s[i:])
		var esc string
		switch r {
		case '"':
			esc = "&#34;"
		case '\'':
			esc = "&#39;"
		case '&':
			esc = "&amp;"
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '\t':
			esc = "&#x9;"
		case '\n':
			esc = "&#xA;"
		case '\r':
			esc = "&#xD;"
		default:
			if !xmlChar(r) || r == utf8.RuneError && width == 1 {
				esc = "\uFFFD"
			}
		}
		i += width
		if esc == "" {
			continue
		}
		io.WriteString(w, s[last:i-width])
		io.WriteString(w, esc)
		last = i
	}
	io.WriteString(w, s[last:])
}

// xmlChar reports whether r is in XML's Char production.
func xmlChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D || r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
}
