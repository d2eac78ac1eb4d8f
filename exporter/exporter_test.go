package exporter

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/profile"

	pprof "github.com/google/pprof/profile"

	"github.com/macprof/macprof/exporter/folded"
	"github.com/macprof/macprof/exporter/speedscope"
)

func TestFormatForPath(t *testing.T) {
	cases := map[string]Format{
		"cpu.pb.gz":          FormatPprof,
		"/tmp/x/CPU.PB.GZ":   FormatPprof,
		"a.pprof":            FormatPprof,
		"stacks.folded":      FormatFolded,
		"stacks.txt":         FormatFolded,
		"flame.svg":          FormatSVG,
		"dir.svg/out.folded": FormatFolded,
	}
	for path, want := range cases {
		got, err := FormatForPath(path)
		if err != nil || got != want {
			t.Errorf("FormatForPath(%q) = %v, %v; want %v", path, got, err, want)
		}
	}
	for _, path := range []string{"cpu.json", "cpu", "cpu.gz", "svg", "x.pb"} {
		f, err := FormatForPath(path)
		if err == nil || f != FormatUnknown || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), ".pb.gz") {
			t.Errorf("FormatForPath(%q) = %v, %v; want an error naming the file and the known extensions", path, f, err)
		}
	}
}

func TestParseFormat(t *testing.T) {
	for _, f := range Formats {
		got, err := ParseFormat(f.String())
		if err != nil || got != f {
			t.Errorf("ParseFormat(%q) = %v, %v", f.String(), got, err)
		}
	}
	for name, want := range map[string]Format{"PPROF": FormatPprof, "collapsed": FormatFolded, "flamegraph": FormatSVG} {
		if got, err := ParseFormat(name); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %v, %v; want %v", name, got, err, want)
		}
	}
	if _, err := ParseFormat("json"); err == nil || !strings.Contains(err.Error(), `"json"`) || !strings.Contains(err.Error(), "pprof, folded, svg") {
		t.Errorf("ParseFormat(json): %v", err)
	}
	if err := Write(io.Discard, FormatUnknown, newTestWindow(t, profile.ModeCPU).w, newCache(), Options{}); err == nil {
		t.Error("Write accepted FormatUnknown")
	}
}

func TestCheckWritable(t *testing.T) {
	dir := t.TempDir()
	// A new file in an existing directory: fine, and nothing is left.
	p := filepath.Join(dir, "new.pb.gz")
	if err := CheckWritable(p); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("CheckWritable left %s behind: %v", p, err)
	}
	// An existing file is not changed.
	if err := os.WriteFile(p, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CheckWritable(p); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "keep" {
		t.Errorf("CheckWritable changed the file to %q", b)
	}
	// A missing directory, a directory, a file used as a directory.
	for _, bad := range []struct{ path, want string }{
		{filepath.Join(dir, "missing", "x.svg"), "missing"},
		{dir, "is a directory"},
		{filepath.Join(p, "x.svg"), "not a directory"},
		{"", "empty"},
	} {
		err := CheckWritable(bad.path)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("CheckWritable(%q) = %v; want an error saying %q", bad.path, err, bad.want)
		}
	}
	// Even root cannot create files in /proc: the error says so before
	// any sampling would start.
	if runtime.GOOS == "linux" {
		if err := CheckWritable("/proc/macprof-test.svg"); err == nil || !strings.Contains(err.Error(), "cannot be created") {
			t.Errorf("CheckWritable in /proc: %v", err)
		}
	}
	for _, ok := range []string{"-", os.DevNull} {
		if err := CheckWritable(ok); err != nil {
			t.Errorf("CheckWritable(%q): %v", ok, err)
		}
	}
}

func TestWriteFileAllFormats(t *testing.T) {
	tw := newTestWindow(t, profile.ModeCPU)
	dir := t.TempDir()
	for _, name := range []string{"cpu.pb.gz", "cpu.folded", "cpu.svg", "cpu.speedscope.json"} {
		path := filepath.Join(dir, name)
		f, err := FormatForPath(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckWritable(path); err != nil {
			t.Fatal(err)
		}
		if err := WriteFile(path, f, tw.w, newCache(), Options{}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		switch f {
		case FormatPprof:
			if _, err := pprof.ParseData(b); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		case FormatFolded:
			if _, err := folded.Parse(bytes.NewReader(b)); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		case FormatSVG:
			if err := xmlWellFormed(b); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		case FormatSpeedscope:
			var f speedscope.File
			if err := json.Unmarshal(b, &f); err != nil {
				t.Errorf("%s: %v", name, err)
			} else if err := f.Check(); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
	// A failed export does not touch an existing file.
	path := filepath.Join(dir, "cpu.folded")
	before, _ := os.ReadFile(path)
	w := *tw.w
	w.Samples = []profile.Sample{{Stack: -1, Count: 1}}
	if err := WriteFile(path, FormatFolded, &w, newCache(), Options{}); err == nil {
		t.Error("bad window written")
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("a failed export changed the existing file")
	}
	if err := WriteFile(filepath.Join(dir, "no", "such.svg"), FormatSVG, tw.w, newCache(), Options{}); err == nil || !strings.Contains(err.Error(), "no such") {
		t.Errorf("missing directory: %v", err)
	}
}

func xmlWellFormed(b []byte) error {
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		_, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func TestFolded(t *testing.T) {
	tw := newTestWindow(t, profile.ModeCPU)
	var buf bytes.Buffer
	if err := Write(&buf, FormatFolded, tw.w, newCache(), Options{}); err != nil {
		t.Fatal(err)
	}
	l, m, r := tw.Leaf, tw.Middle, tw.Root
	want := []string{
		"[truncated];" + l + " 2",
		"other:name with<xml>&;outer;inner 4",
		r + ";" + m + " 7",
		r + ";" + m + ";0x10 3",
		r + ";" + m + ";" + l + " 85", // 50 + 30 + 5: threads and processes merged
	}
	slices.Sort(want)
	got := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if !slices.Equal(got, want) {
		t.Errorf("folded:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Process and thread root frames.
	buf.Reset()
	if err := Write(&buf, FormatFolded, tw.w, newCache(), Options{ProcessRoot: true, ThreadRoot: true}); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Base(tw.w.Processes[0].Executable)
	for _, line := range []string{
		"pid 1001 (" + exe + ");worker;" + r + ";" + m + ";" + l + " 80",
		"pid 1002 (" + exe + ");main;" + r + ";" + m + ";" + l + " 5",
		"pid 1001 (" + exe + ");thread 13;" + r + ";" + m + " 7",
		"pid 1001 (" + exe + ");io;other:name with<xml>&;outer;inner 4",
	} {
		if !strings.Contains(buf.String(), line+"\n") {
			t.Errorf("folded with roots lacks %q:\n%s", line, buf.String())
		}
	}
	buf.Reset()
	if err := Write(&buf, FormatFolded, tw.w, newCache(), Options{ThreadRoot: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "worker;"+r+";"+m+";"+l+" 80\n") || !strings.Contains(buf.String(), "main;"+r+";"+m+";"+l+" 5\n") {
		t.Errorf("folded with thread roots:\n%s", buf.String())
	}
}

func TestSVGOfWindow(t *testing.T) {
	tw := newTestWindow(t, profile.ModeCPU)
	var buf bytes.Buffer
	if err := Write(&buf, FormatSVG, tw.w, newCache(), Options{Width: 1000}); err != nil {
		t.Fatal(err)
	}
	type frame struct {
		title string
		width float64
	}
	var frames []frame
	var texts []string
	d := xml.NewDecoder(&buf)
	inTitle, inText := false, false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			switch tok.Name.Local {
			case "title":
				inTitle = true
				frames = append(frames, frame{})
			case "text":
				inText = true
			case "rect":
				if len(frames) > 0 {
					for _, a := range tok.Attr {
						if a.Name.Local == "width" {
							fmt.Sscan(a.Value, &frames[len(frames)-1].width)
						}
					}
				}
			}
		case xml.EndElement:
			inTitle, inText = false, false
		case xml.CharData:
			if inTitle {
				frames[len(frames)-1].title += string(tok)
			} else if inText && len(frames) == 0 {
				texts = append(texts, string(tok))
			}
		}
	}
	exe := filepath.Base(tw.w.Processes[0].Executable)
	if len(texts) < 2 || texts[0] != "macprof: "+exe+" (cpu, 2s)" || !strings.HasPrefix(texts[1], "Total: 101 samples (1.01s at 100 Hz)") {
		t.Errorf("title and subtitle %q", texts)
	}
	inner := 1000.0 - 20
	want := map[string]int64{"all": 101, tw.Root: 95, tw.Middle: 95, tw.Leaf: 85, "0x10": 3, "[truncated]": 2, "inner": 4, "other;name with<xml>&": 4}
	got := map[string]frame{}
	for _, f := range frames {
		got[f.title[:strings.LastIndex(f.title, " (")]] = f
	}
	for name, n := range want {
		f, ok := got[name]
		if !ok {
			t.Errorf("no frame %q in %v", name, got)
			continue
		}
		if math.Abs(f.width-inner*float64(n)/101) > 0.01 {
			t.Errorf("%s: width %.2f, want %.2f", name, f.width, inner*float64(n)/101)
		}
		if !strings.Contains(f.title, fmt.Sprintf("(%d samples, %.2f%%)", n, 100*float64(n)/101)) {
			t.Errorf("title %q", f.title)
		}
	}
}

// TestSVGTitle: the flame graph's default title names the command macprof
// started (quoted as a shell reads it back), or else the executables, with
// the mode and the window's length.
func TestSVGTitle(t *testing.T) {
	tw := newTestWindow(t, profile.ModeCPU)
	exe := filepath.Base(tw.w.Processes[0].Executable)
	start := time.Date(2026, 11, 23, 22, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		command    []string
		start, end time.Time
		mode       profile.Mode
		want       string
	}{
		{[]string{"./bench", "-n", "10 20", "it's", ""}, start, start.Add(5049 * time.Millisecond), profile.ModeCPU,
			`macprof: ./bench -n '10 20' 'it'\''s' '' (cpu, 5s)`},
		{[]string{"go", "test", "-run=X", "./..."}, start, start.Add(90*time.Second + 260*time.Millisecond), profile.ModeWall,
			"macprof: go test -run=X ./... (wall, 1m30.3s)"},
		{nil, start, start.Add(250400 * time.Microsecond), profile.ModeCPU, "macprof: " + exe + " (cpu, 250ms)"},
		{nil, time.Time{}, time.Time{}, profile.ModeCPU, "macprof: " + exe + " (cpu)"},
		{[]string{"sleep", "1"}, start, start, profile.ModeCPU, "macprof: sleep 1 (cpu)"},
	} {
		w := *tw.w
		w.Start, w.End, w.Mode = c.start, c.end, c.mode
		var buf bytes.Buffer
		if err := Write(&buf, FormatSVG, &w, newCache(), Options{Command: c.command}); err != nil {
			t.Fatal(err)
		}
		title, err := svgText(buf.Bytes(), "title")
		if err != nil || title != c.want {
			t.Errorf("title %q (%v), want %q", title, err, c.want)
		}
	}
}

// svgText returns the text of the SVG element with the given id.
func svgText(b []byte, id string) (string, error) {
	d := xml.NewDecoder(bytes.NewReader(b))
	in := false
	var s string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return s, nil
		}
		if err != nil {
			return "", err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			for _, a := range tok.Attr {
				in = in || (a.Name.Local == "id" && a.Value == id)
			}
		case xml.EndElement:
			if in {
				return s, nil
			}
		case xml.CharData:
			if in {
				s += string(tok)
			}
		}
	}
}
