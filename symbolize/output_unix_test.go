//go:build unix

package symbolize

import (
	"bytes"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// appendShort must append what append does, reading no byte past the
// string (names lie in a file's mapping: here each ends at a page followed
// by one that cannot be read) and writing no byte past the line.
func TestAppendShortAsAppend(t *testing.T) {
	page := unix.Getpagesize()
	m, err := unix.Mmap(-1, 0, 2*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	if err := unix.Mprotect(m[page:], unix.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	src := "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+*/=.,;:!?"
	for n := 0; n <= len(src); n++ {
		copy(m[page-n:page], src[:n])
		s := string(m[page-n : page])                              // a copy, for the expected bytes
		tail := unsafe.String(unsafe.SliceData(m[page-n:page]), n) // the mapped bytes themselves
		for _, slack := range []int{0, 7, 63, 64, 65, 200} {
			for _, pre := range []int{0, 1, 13} {
				b := make([]byte, pre, pre+n+slack)
				full := b[:cap(b)]
				for i := range full {
					full[i] = '#'
				}
				got := appendShort(b, tail)
				want := append([]byte(strings.Repeat("#", pre)), s...)
				if !bytes.Equal(got, want) {
					t.Fatalf("len %d, slack %d, prefix %d: %q, want %q", n, slack, pre, got, want)
				}
				if rest := got[len(got):cap(got)]; cap(got) == cap(b) && bytes.ContainsFunc(rest, func(r rune) bool { return r != '#' }) {
					t.Fatalf("len %d, slack %d, prefix %d: wrote past the string: %q", n, slack, pre, rest)
				}
			}
		}
	}
}
