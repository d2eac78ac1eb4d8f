package snapshot

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// WriteJSON writes s as indented JSON (the --json output).
func (s *Snapshot) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

// WriteText writes s grouped by thread, one line per frame, the way
// eu-stack prints stacks, so that the two can be read side by side. It
// writes to w in blocks, not a line at a time: to a pipe each write is a
// system call and wakes the reader (64 threads' stacks were a thousand).
func (s *Snapshot) WriteText(w io.Writer) {
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	w = bw
	exe := s.Executable
	if exe == "" {
		exe = "?"
	}
	fmt.Fprintf(w, "PID %d - %s (stopped for %s)\n", s.PID, exe, time.Duration(s.StoppedNS).Round(time.Microsecond))
	for _, th := range s.Threads {
		if th.Name != "" {
			fmt.Fprintf(w, "TID %d %q:\n", th.TID, th.Name)
		} else {
			fmt.Fprintf(w, "TID %d:\n", th.TID)
		}
		if th.Error != "" {
			fmt.Fprintf(w, "    (not captured: %s)\n", th.Error)
		}
		for i, f := range th.Frames {
			fmt.Fprintf(w, "#%-2d %18s %s\n", i, f.Address, f.text())
		}
		if th.Truncated != "" {
			fmt.Fprintf(w, "    (stack may be incomplete: %s)\n", th.Truncated)
		}
	}
}

// text is the frame as WriteText prints it after its address.
func (f Frame) text() string {
	var s string
	switch {
	case f.Function != "":
		s = fmt.Sprintf("%s+%#x", f.Function, f.Offset)
	case f.Image != "":
		s = fmt.Sprintf("%s+%#x", f.Image, f.Offset)
	default:
		s = "??"
	}
	if f.Image != "" && f.Function != "" {
		s += " (" + f.Image + ")"
	}
	if f.File != "" {
		s += fmt.Sprintf(" at %s:%d", f.File, f.Line)
	}
	if f.Inlined {
		s += " [inlined]"
	}
	return s
}
