package symbolize

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/macprof/macprof/symcache"
)

// print writes a's line(s), but for the line with a file of an answer
// from the table (printLines').
func (s *symbolizer) print(w *output, a *answer, g *gathered) {
	switch {
	case a.fn == notAddr:
		fmt.Fprintf(w, "?? (not an address: %s)\n", s.notAddrs[a.addr>>32:uint32(a.addr)])
		return
	case a.fn == notInImage:
		fmt.Fprintf(w, "%#x (not in %s)\n", a.addr, s.image)
		return
	case !s.fast():
		for _, f := range s.cache.Symbolize(s.segAt(s.segIndex(a.addr)), a.addr, false) {
			s.frame(w, f)
		}
		return
	}
	name := g.name
	b := w.buf // appended to in place
	switch {
	case name != "" || a.fn >= 0:
		start := g.start
		if name == "" {
			// An unnamed function: image+0xSTART.
			b = append(b, s.image...)
			b = append(b, "+0x"...)
			b = appendHex(b, start)
		}
		va, _ := s.table.Address(s.segAt(s.segIndex(a.addr)).FileOffset(a.addr))
		b = append(b, name...)
		b = append(b, s.inImage...)
		b = append(b, ' ', '+', ' ')
		b = appendUint(b, va-start)
	default:
		// In no function: its link-time address when the table maps
		// it, else its file offset.
		off := s.segAt(s.segIndex(a.addr)).FileOffset(a.addr)
		if va, mapped := s.table.Address(off); mapped {
			off = va
		}
		b = append(b, s.image...)
		b = append(b, "+0x"...)
		b = appendHex(b, off)
		b = append(b, " (in "...)
		b = append(b, s.image...)
		b = append(b, ')')
	}
	b = append(b, '\n')
	w.done(b)
}

func (s *symbolizer) frame(w *output, f symcache.Frame) {
	w.writeString(f.Name())
	w.writeString(" (in ")
	w.writeString(s.image)
	w.writeString(")")
	switch {
	case f.File != "":
		w.writeString(" (")
		w.writeString(filepath.Base(f.File))
		w.writeByte(':')
		w.writeString(strconv.Itoa(f.Line))
		w.writeString(")")
	case f.Named() && !f.Inlined:
		w.writeString(" + ")
		w.writeString(strconv.FormatUint(f.Offset, 10))
	}
	w.writeByte('\n')
}
