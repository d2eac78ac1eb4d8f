package symbolize

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// printLines' moves must print what appending the line's parts prints,
// for names and files of any length (printLines moves those of 8 to 64
// bytes itself) and lines of any number of digits, across flushes.
func TestPrintLinesAsAppend(t *testing.T) {
	s := &symbolizer{image: "img"}
	s.inImage = " (in img)"
	s.lineMid = padded(s.inImage + " (")
	for _, f := range []string{"a.go:", "mgcmark.go:", strings.Repeat("f", 15) + ":", strings.Repeat("g", 40) + ".s:", strings.Repeat("h", 90) + ".go:"} {
		s.files = append(s.files, padded(f))
	}
	lines := []int32{0, 1, 9, 10, 12, 99, 100, 123, 999, 1000, 4567, 9999, 10000, 65535, 1 << 30}
	var chunk []answer
	var g []gathered
	var want bytes.Buffer
	for n := 1; n <= 200; n++ {
		name := strings.Repeat(string(rune('a'+n%26)), n)
		for k, file := range s.files {
			for _, line := range lines {
				chunk = append(chunk, answer{found: found{fn: 0, name: -1, file: int32(k), line: line}})
				g = append(g, gathered{name: name})
				want.WriteString(name + " (in img) (" + file.s + strconv.Itoa(int(line)) + ")\n")
			}
		}
	}
	var got bytes.Buffer
	out := newOutput(&got)
	for lo := 0; lo < len(chunk); lo += gatherChunk {
		hi := min(lo+gatherChunk, len(chunk))
		if !s.printLines(out, chunk[lo:hi], g[lo:hi]) {
			t.Fatal("printLines: some word is not an address")
		}
	}
	if err := out.Flush(); err != nil {
		t.Fatal(err)
	}
	if want.Len() < 2*flushAt {
		t.Fatalf("%d bytes: fewer than two flushes", want.Len())
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		n := commonPrefixLen(got.Bytes(), want.Bytes())
		t.Fatalf("differs at byte %d: %q, want %q", n, got.Bytes()[n:min(n+80, got.Len())], want.Bytes()[n:min(n+80, want.Len())])
	}
}

func commonPrefixLen(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
