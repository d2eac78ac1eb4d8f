package symbolize

import (
	"bytes"
	"fmt"
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

// TestPrintSymbolsAsPrint checks printSymbols, which writes the lines of a
// table without lines by moves, against print's appends: every address
// of a fixture's __text, with its own names and others of every length
// from 0 (an unnamed function) to past the buffer's spare room, besides
// words not in the image and not addresses, across flushes.
func TestPrintSymbolsAsPrint(t *testing.T) {
	s := openWithoutLines(t)
	for a := s.img.Start - 8; a < s.img.Limit+8; a += 4 {
		s.word(fmt.Appendf(nil, "%#x", a))
	}
	s.word([]byte("zz"))
	s.resolveInOrder()
	s.demangleQueued()
	names := []string{"", "own", strings.Repeat("n", 5000)}
	for n := 1; n <= 200; n += 7 {
		names = append(names, strings.Repeat(string(rune('a'+n%26)), n))
	}
	var chunk []answer
	var g []gathered
	for _, name := range names {
		for i := range s.answers.len() {
			a := *s.answers.at(i)
			var one [1]gathered
			s.gather(one[:], []answer{a})
			if name != "own" {
				one[0].name = name
			}
			chunk, g = append(chunk, a), append(g, one[0])
		}
	}
	var got, want bytes.Buffer
	gw, ww := newOutput(&got), newOutput(&want)
	all := true
	for lo := 0; lo < len(chunk); lo += gatherChunk {
		hi := min(lo+gatherChunk, len(chunk))
		all = s.printSymbols(gw, chunk[lo:hi], g[lo:hi]) && all
	}
	for i := range chunk {
		s.print(ww, &chunk[i], &g[i])
	}
	gw.Flush()
	ww.Flush()
	if all {
		t.Error("printSymbols: no word reported not an address")
	}
	if want.Len() < 2*flushAt || !strings.Contains(want.String(), "cxx_arm64+0x") || !strings.Contains(want.String(), "(not in cxx_arm64)") {
		t.Fatalf("%d bytes of answers, want two flushes, unnamed functions and addresses not in the image", want.Len())
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		n := commonPrefixLen(got.Bytes(), want.Bytes())
		t.Fatalf("differs at byte %d: %q, want %q", n, got.Bytes()[n:min(n+80, got.Len())], want.Bytes()[n:min(n+80, want.Len())])
	}
}
