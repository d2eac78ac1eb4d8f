package folded

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func TestAggregate(t *testing.T) {
	var a Aggregator
	a.Add([]string{"main", "run", "compute"}, 3)
	a.Add([]string{"main", "gc"}, 1)
	a.Add([]string{"main", "run", "compute"}, 4)
	a.Add([]string{"main", "ignored"}, 0)
	a.Add(nil, 9)
	a.Add([]string{"x;y", "multi\nline", "", "tab\there", "std::vector<int>::push_back(int const&)"}, 2)
	if a.Len() != 3 {
		t.Errorf("%d unique stacks, want 3", a.Len())
	}
	var buf bytes.Buffer
	n, err := a.WriteTo(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if int(n) != buf.Len() {
		t.Errorf("WriteTo reported %d bytes, wrote %d", n, buf.Len())
	}
	want := "main;gc 1\nmain;run;compute 7\nx:y;multi line;?;tab here;std::vector<int>::push_back(int const&) 2\n"
	if buf.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", buf.String(), want)
	}
	stacks, err := Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(stacks) != 3 || !slices.Equal(stacks[1].Frames, []string{"main", "run", "compute"}) || stacks[1].Count != 7 {
		t.Errorf("parsed %+v", stacks)
	}
	// Spaces inside names survive: the count is after the last space.
	if !slices.Equal(stacks[2].Frames, []string{"x:y", "multi line", "?", "tab here", "std::vector<int>::push_back(int const&)"}) {
		t.Errorf("parsed %q", stacks[2].Frames)
	}
}

func TestParseErrors(t *testing.T) {
	for in, want := range map[string]string{
		"a;b\n":     "line 1: no count",
		"\na;b x\n": "line 2: bad count",
		"a;b -3\n":  "bad count",
		" 5\n":      "no count",
	} {
		_, err := Parse(strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v; want %q", in, err, want)
		}
	}
	s, err := Parse(strings.NewReader("a;b 1\r\n\n  \nc 2\n"))
	if err != nil || len(s) != 2 {
		t.Errorf("Parse with CRLF and blank lines: %v %+v", err, s)
	}
}

func TestClean(t *testing.T) {
	for in, want := range map[string]string{
		"":         "?",
		"plain":    "plain",
		"a;b":      "a:b",
		"a\nb\r":   "a b ",
		"\xffok":   "\uFFFDok",
		"日本;語":     "日本:語",
		"del\x7fx": "del x",
	} {
		if got := Clean(in); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzFolded checks that any two frame names make exactly one line that
// parses back into two frames and the count.
func FuzzFolded(f *testing.F) {
	f.Fuzz(func(t *testing.T, a, b string, n int64) {
		var agg Aggregator
		agg.Add([]string{a, b}, n)
		var buf bytes.Buffer
		if _, err := agg.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		if n <= 0 {
			if buf.Len() != 0 {
				t.Fatalf("count %d written: %q", n, buf.String())
			}
			return
		}
		if strings.Count(buf.String(), "\n") != 1 {
			t.Fatalf("not one line: %q", buf.String())
		}
		s, err := Parse(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if len(s) != 1 || s[0].Count != n || !slices.Equal(s[0].Frames, []string{Clean(a), Clean(b)}) {
			t.Fatalf("round trip of %q %q %d: %+v", a, b, n, s)
		}
	})
}

func TestAddDoesNotAllocateForKnownStacks(t *testing.T) {
	var a Aggregator
	frames := []string{"main", "run", "compute"}
	a.Add(frames, 1)
	allocs := testing.AllocsPerRun(100, func() { a.Add(frames, 1) })
	if allocs != 0 {
		t.Errorf("Add of a known stack allocates %.0f times", allocs)
	}
}
