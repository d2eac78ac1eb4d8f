package symbolize

import (
	"encoding/binary"
	"io"
	"math/bits"
	"slices"
	"strconv"
	"unsafe"
)

// output collects the answers in one buffer that print appends to in
// place (bufio.Writer's AvailableBuffer and Write copied each line once
// more, a tenth of a Go binary's symbolization), written out whenever it
// holds flushAt bytes and at Flush. A write error sticks: every later
// Flush returns it and nothing more is written.
type output struct {
	w   io.Writer
	buf []byte
	err error
}

// flushAt is how much output is written at once.
const flushAt = 256 << 10

func newOutput(w io.Writer) *output {
	return &output{w: w, buf: make([]byte, 0, flushAt+4<<10)}
}

// done takes b, the buffer with what was appended to it, writing it out
// when it holds flushAt bytes.
func (o *output) done(b []byte) {
	o.buf = b
	if len(o.buf) >= flushAt {
		o.Flush()
	}
}

func (o *output) Write(p []byte) (int, error) {
	o.done(append(o.buf, p...))
	return len(p), nil
}

func (o *output) writeString(s string) {
	o.done(append(o.buf, s...))
}

func (o *output) writeByte(c byte) {
	o.done(append(o.buf, c))
}

// Flush writes out what the buffer holds.
func (o *output) Flush() error {
	if o.err == nil && len(o.buf) > 0 {
		_, o.err = o.w.Write(o.buf)
	}
	o.buf = o.buf[:0]
	return o.err
}

// appendDec appends v in decimal, as strconv.AppendInt(b, v, 10) does,
// without a call for the values most lines and offsets have (below
// 10,000).
func appendDec(b []byte, v int64) []byte {
	switch {
	case v < 0 || v >= 10000:
		return strconv.AppendInt(b, v, 10)
	case v < 10:
		return append(b, byte('0'+v))
	case v < 100:
		return append(b, decPairs[2*v], decPairs[2*v+1])
	case v < 1000:
		r := v % 100
		return append(b, byte('0'+v/100), decPairs[2*r], decPairs[2*r+1])
	}
	q, r := v/100, v%100
	return append(b, decPairs[2*q], decPairs[2*q+1], decPairs[2*r], decPairs[2*r+1])
}

// decPairs holds the two digits of each number below 100.
const decPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// appendHex appends v in lower-case hexadecimal, as strconv.AppendUint(b,
// v, 16) does, its digits written in place.
func appendHex(b []byte, v uint64) []byte {
	n := max(1, (bits.Len64(v)+3)/4)
	b = slices.Grow(b, n)
	d := b[len(b) : len(b)+n]
	for i := n - 1; i >= 0; i-- {
		d[i] = "0123456789abcdef"[v&0xf]
		v >>= 4
	}
	return b[:len(b)+n]
}

// putHex writes v in lower-case hexadecimal at dst, which must have room
// for 16 bytes, and returns the address past its last digit: eight digits
// at a time (hexDigits), with no loop, which in printLines' large frame
// kept its counter in memory (most of printLines' time on a stripped
// binary).
func putHex(dst unsafe.Pointer, v uint64) unsafe.Pointer {
	n := max(1, (bits.Len64(v)+3)/4)
	lo := hexDigits(uint32(v))
	if n <= 8 {
		binary.LittleEndian.PutUint64((*[8]byte)(dst)[:], lo>>(8*(8-n)))
		return unsafe.Add(dst, n)
	}
	binary.LittleEndian.PutUint64((*[8]byte)(dst)[:], hexDigits(uint32(v>>32))>>(8*(16-n)))
	binary.LittleEndian.PutUint64((*[8]byte)(unsafe.Add(dst, n-8))[:], lo)
	return unsafe.Add(dst, n)
}

// hexDigits returns the eight hexadecimal digits of v as the bytes of a
// word, the first digit in its lowest byte (stored little-endian, first
// in memory).
func hexDigits(v uint32) uint64 {
	x := uint64(v)
	x = (x | x<<16) & 0x0000ffff0000ffff
	x = (x | x<<8) & 0x00ff00ff00ff00ff
	x = (x | x<<4) & 0x0f0f0f0f0f0f0f0f // nibble k in byte k
	letters := (x + 0x0606060606060606) >> 4 & 0x0101010101010101
	x += 0x3030303030303030 + letters*('a'-'0'-10)
	return bits.ReverseBytes64(x)
}

// putUint writes v in decimal at dst, which must have room for 20 bytes,
// and returns the address past its last digit.
func putUint(dst unsafe.Pointer, v uint64) unsafe.Pointer {
	d := (*[20]byte)(dst)
	switch {
	case v < 10:
		d[0] = byte('0' + v)
		return unsafe.Add(dst, 1)
	case v < 100:
		d[0], d[1] = decPairs[2*v], decPairs[2*v+1]
		return unsafe.Add(dst, 2)
	case v < 1000:
		r := v % 100
		d[0], d[1], d[2] = byte('0'+v/100), decPairs[2*r], decPairs[2*r+1]
		return unsafe.Add(dst, 3)
	case v < 10000:
		h, r := v/100, v%100
		d[0], d[1], d[2], d[3] = decPairs[2*h], decPairs[2*h+1], decPairs[2*r], decPairs[2*r+1]
		return unsafe.Add(dst, 4)
	}
	var tmp [20]byte
	t := strconv.AppendUint(tmp[:0], v, 10)
	copy(d[:], t)
	return unsafe.Add(dst, len(t))
}

// appendUint appends v in decimal (appendDec for any uint64).
func appendUint(b []byte, v uint64) []byte {
	if v >= 10000 {
		return strconv.AppendUint(b, v, 10)
	}
	return appendDec(b, int64(v))
}

// appendShort appends s to b, as append(b, s...) does, for most of the
// strings a line is made of (names and files of 8 to 64 bytes) in
// overlapping 8- and 16-byte moves within s and b's capacity, without
// memmove's call (a third of printing a Go binary's lines).
func appendShort(b []byte, s string) []byte {
	n := len(s)
	if n < 8 || n > 64 || cap(b)-len(b) < 64 {
		return append(b, s...)
	}
	moveShort(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), len(b)), s)
	return b[:len(b)+n]
}

// moveShort copies s, of 8 to 64 bytes, to dst, in overlapping moves
// within s (appendShort's, inlined).
func moveShort(dst unsafe.Pointer, s string) {
	n := len(s)
	src := unsafe.Pointer(unsafe.StringData(s))
	if n <= 16 {
		*(*[8]byte)(dst) = *(*[8]byte)(src)
		*(*[8]byte)(unsafe.Add(dst, n-8)) = *(*[8]byte)(unsafe.Add(src, n-8))
		return
	}
	if n > 32 {
		*(*[16]byte)(unsafe.Add(dst, n-32)) = *(*[16]byte)(unsafe.Add(src, n-32))
		*(*[16]byte)(unsafe.Add(dst, 16)) = *(*[16]byte)(unsafe.Add(src, 16))
	}
	*(*[16]byte)(dst) = *(*[16]byte)(src)
	*(*[16]byte)(unsafe.Add(dst, n-16)) = *(*[16]byte)(unsafe.Add(src, n-16))
}

// paddedString is a string followed in memory by 16 bytes of its own
// allocation, which movePadded reads past its end. Only padded makes one
// (its zero value, empty, is one too): movePadded takes no plain string.
type paddedString struct{ s string }

// padded returns a copy of s followed in memory by 16 bytes of its own
// allocation.
func padded(s string) paddedString {
	b := make([]byte, len(s), len(s)+16)
	copy(b, s)
	return paddedString{unsafe.String(unsafe.SliceData(b), len(b))}
}

// movePadded copies p to dst 16 bytes at a time: up to 15 bytes past its
// end, of its padding, which dst must have room for.
func movePadded(dst unsafe.Pointer, p paddedString) {
	s := p.s
	src := unsafe.Pointer(unsafe.StringData(s))
	for off := 0; off < len(s); off += 16 {
		*(*[16]byte)(unsafe.Add(dst, off)) = *(*[16]byte)(unsafe.Add(src, off))
	}
}
