package symbolize

import (
	"errors"
)

// words adds the whole words of b to the batch and returns where the
// first word it leaves begins (len(b) when none): the last word, which
// may go on in the next read, unless last. An address in the first
// segment is stored in place in the answers' last block, the others by
// add.
func (s *symbolizer) words(b []byte, last bool) (rest int) {
	l := &s.answers
	lo, hi := s.img.Start, s.img.Limit
	for i := 0; ; {
		for i < len(b) && charClass[b[i]] == space {
			i++
		}
		if i == len(b) {
			return i
		}
		j, addr, ok := scanWord(b, i)
		if j == len(b) && !last {
			return i
		}
		if k := l.n >> answerBits; ok && addr >= lo && addr < hi && k < len(l.blocks) {
			l.blocks[k][l.n&(1<<answerBits-1)] = answer{addr: addr, found: unresolved}
			l.n++
			l.addResolvable(addr)
		} else {
			s.add(addr, ok, b[i:j])
		}
		i = j
	}
}

// maxWord bounds one word read from standard input (as bufio.Scanner's
// limit did).
const maxWord = 1 << 20

// maxBatch bounds the words of standard input answered as one batch
// (see Run): ~400,000 addresses.
const maxBatch = 4 << 20

// readBuffer is how much of standard input is read at once (more for a
// longer word); a batch takes several reads (see Run).
const readBuffer = 128 << 10

func isSpace(c byte) bool { return charClass[c] == space }

// scanWord reads the word of b at i (not a space): it returns its end, and
// its value and true when it is an address as parseHex reads one, in one
// pass over its bytes.
func scanWord(b []byte, i int) (end int, v uint64, ok bool) {
	if i+1 < len(b) && b[i] == '0' && b[i+1]|0x20 == 'x' {
		i += 2
	}
	digits := i
	for ; i < len(b); i++ {
		d := charClass[b[i]]
		if d > 0xf {
			break
		}
		v = v<<4 | uint64(d)
	}
	ok = i > digits && i-digits <= 16
	for ; i < len(b) && charClass[b[i]] != space; i++ {
		ok = false
	}
	return i, v, ok
}

// ParseAddr parses a hexadecimal address, with or without 0x.
func ParseAddr(s string) (uint64, error) {
	v, ok := parseHex([]byte(s))
	if !ok {
		return 0, errors.New("not a hexadecimal address")
	}
	return v, nil
}

// parseHex parses a hexadecimal number of at most 16 digits, with or
// without 0x, without allocating.
func parseHex(b []byte) (uint64, bool) {
	if len(b) >= 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X') {
		b = b[2:]
	}
	if len(b) == 0 || len(b) > 16 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		d := charClass[c]
		if d > 0xf {
			return 0, false
		}
		v = v<<4 | uint64(d)
	}
	return v, true
}

// charClass[c] is the value of the hexadecimal digit c, space for a space
// (as isSpace, C's), or 0xff: one load a byte instead of ranges' compares.
var charClass = func() (t [256]byte) {
	for c := range t {
		switch {
		case c >= '0' && c <= '9':
			t[c] = byte(c - '0')
		case c >= 'a' && c <= 'f':
			t[c] = byte(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			t[c] = byte(c - 'A' + 10)
		case c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f':
			t[c] = space
		default:
			t[c] = 0xff
		}
	}
	return t
}()

// space is charClass's value for a space.
const space = 0xfe
