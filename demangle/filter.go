package demangle

import (
	"bufio"
	"io"
)

// Filter copies in to out line by line, each word that is a mangled name
// replaced by its demangled form, as c++filt and swift demangle do on
// standard input. A word is a run of letters, digits and "_$.@"; every
// other byte, and every word that is not a mangled name, is copied as it
// is, so one line comes out per line in.
func Filter(in io.Reader, out io.Writer, f Form) error {
	r := bufio.NewReaderSize(in, 64<<10)
	w := bufio.NewWriter(out)
	for {
		line, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A line longer than the buffer: demangle what is there and
			// go on (a name split at the seam stays mangled).
			err = nil
		}
		FilterLine(w, line, f)
		if err == io.EOF {
			return w.Flush()
		}
		if err != nil {
			w.Flush()
			return err
		}
		if r.Buffered() == 0 {
			// Interactive use: answer each line as it comes.
			if err := w.Flush(); err != nil {
				return err
			}
		}
	}
}

// FilterLine writes line to w with every mangled word demangled.
func FilterLine(w io.StringWriter, line []byte, f Form) {
	for len(line) > 0 {
		i := 0
		for i < len(line) && !wordByte(line[i]) {
			i++
		}
		if i > 0 {
			w.WriteString(string(line[:i]))
			line = line[i:]
			continue
		}
		for i < len(line) && wordByte(line[i]) {
			i++
		}
		w.WriteString(Name(string(line[:i]), f))
		line = line[i:]
	}
}

func wordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '$' || c == '.' || c == '@' || c >= 0x80
}
