package symbolize

import "io"

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
