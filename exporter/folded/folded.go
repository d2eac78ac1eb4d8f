// Package folded writes and reads folded stacks, the text format of Brendan
// Gregg's stackcollapse scripts that flamegraph.pl, speedscope and many
// other tools read: one line per unique stack, frames from the root to the
// leaf separated by ';', then a space and the count:
//
//	main;run;compute 42
package folded

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Stack is one call stack, Frames from the root to the leaf, seen Count
// times.
type Stack struct {
	Frames []string
	Count  int64
}

// Aggregator merges identical stacks. The zero value is ready to use.
type Aggregator struct {
	counts map[string]*int64
	buf    []byte
}

// Add counts a stack. Frame names are cleaned with Clean. Stacks with no
// frames or a count that is not positive are ignored.
func (a *Aggregator) Add(frames []string, count int64) {
	if len(frames) == 0 || count <= 0 {
		return
	}
	if a.counts == nil {
		a.counts = make(map[string]*int64)
	}
	b := a.buf[:0]
	for i, f := range frames {
		if i > 0 {
			b = append(b, ';')
		}
		b = appendClean(b, f)
	}
	a.buf = b
	// A lookup keyed by string(b) does not copy b; only a new stack does.
	if c := a.counts[string(b)]; c != nil {
		*c += count
		return
	}
	c := new(int64)
	*c = count
	a.counts[string(b)] = c
}

// Len returns the number of unique stacks.
func (a *Aggregator) Len() int { return len(a.counts) }

// WriteTo writes one line per unique stack, sorted by stack so that the
// output is deterministic.
func (a *Aggregator) WriteTo(w io.Writer) (int64, error) {
	keys := make([]string, 0, len(a.counts))
	for k := range a.counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	bw := bufio.NewWriter(w)
	var n int64
	var num [20]byte
	for _, k := range keys {
		m, _ := bw.WriteString(k)
		n += int64(m)
		bw.WriteByte(' ')
		m, _ = bw.Write(strconv.AppendInt(num[:0], *a.counts[k], 10))
		n += int64(m) + 2
		bw.WriteByte('\n')
	}
	if err := bw.Flush(); err != nil {
		return n, fmt.Errorf("folded: %w", err)
	}
	return n, nil
}

// Clean returns name made safe for one frame of a folded line: ';' (the
// frame separator) becomes ':', control characters become spaces, invalid
// UTF-8 becomes U+FFFD and an empty name "?". Spaces are kept, because
// readers split the count off at the last space.
func Clean(name string) string {
	return string(appendClean(nil, name))
}

func appendClean(b []byte, name string) []byte {
	if name == "" {
		return append(b, '?')
	}
	for i := 0; i < len(name); {
		c := name[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(name[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, "\uFFFD"...)
			} else {
				b = append(b, name[i:i+size]...)
			}
			i += size
			continue
		}
		switch {
		case c == ';':
			c = ':'
		case c < 0x20 || c == 0x7f:
			c = ' '
		}
		b = append(b, c)
		i++
	}
	return b
}

// maxLine bounds the length of one line that Parse accepts.
const maxLine = 16 << 20

// Parse reads folded stacks, for tests and tools that merge files. Blank
// lines are skipped; a line without a count, or with a count that is not a
// non-negative integer, is an error naming the line.
func Parse(r io.Reader) ([]Stack, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var out []Stack
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimRight(sc.Bytes(), "\r")
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		sp := bytes.LastIndexByte(b, ' ')
		if sp <= 0 {
			return out, fmt.Errorf("folded: line %d: no count", line)
		}
		n, err := strconv.ParseInt(string(b[sp+1:]), 10, 64)
		if err != nil || n < 0 {
			return out, fmt.Errorf("folded: line %d: bad count %q", line, b[sp+1:])
		}
		out = append(out, Stack{Frames: strings.Split(string(b[:sp]), ";"), Count: n})
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("folded: line %d: %w", line+1, err)
	}
	return out, nil
}
