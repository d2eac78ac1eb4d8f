// Package exporter symbolizes a profile.Window and writes it as a file
// people open: pprof, folded stacks, an SVG flame graph or a speedscope
// timeline. Each unique
// address is symbolized once per export, return addresses one byte earlier
// (inside the call instruction), as the Go runtime and pprof do.
package exporter

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/macprof/macprof/internal/safefile"
	"github.com/macprof/macprof/profile"

	"github.com/macprof/macprof/exporter/flamegraph"
	"github.com/macprof/macprof/exporter/folded"
	"github.com/macprof/macprof/symcache"
)

// Format is an output format.
type Format uint8

// Output formats.
const (
	// FormatUnknown is no format; ParseFormat and FormatForPath never
	// return it without an error.
	FormatUnknown Format = iota
	// FormatPprof is a gzip-compressed pprof protocol buffer (.pb.gz).
	FormatPprof
	// FormatFolded is folded stacks, one "root;...;leaf count" line per
	// unique stack.
	FormatFolded
	// FormatSVG is a self-contained SVG flame graph.
	FormatSVG
	// FormatSpeedscope is speedscope's JSON file format, a timeline per
	// thread (.speedscope.json).
	FormatSpeedscope
)

// Formats lists the formats, for help texts.
var Formats = []Format{FormatPprof, FormatFolded, FormatSVG, FormatSpeedscope}

// String returns the format's name, as ParseFormat accepts it.
func (f Format) String() string {
	switch f {
	case FormatPprof:
		return "pprof"
	case FormatFolded:
		return "folded"
	case FormatSVG:
		return "svg"
	case FormatSpeedscope:
		return "speedscope"
	}
	return "unknown"
}

// ParseFormat returns the format with the given name: "pprof", "folded"
// (also "collapsed"), "svg" (also "flamegraph") or "speedscope", in any
// case.
func ParseFormat(name string) (Format, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "pprof", "pb.gz", "proto":
		return FormatPprof, nil
	case "folded", "collapsed":
		return FormatFolded, nil
	case "svg", "flamegraph":
		return FormatSVG, nil
	case "speedscope":
		return FormatSpeedscope, nil
	}
	return FormatUnknown, fmt.Errorf("exporter: unknown format %q (known formats: pprof, folded, svg, speedscope)", name)
}

// FormatForPath returns the format a file name's extension implies:
// .pb.gz and .pprof are pprof, .folded and .txt folded stacks, .svg a flame
// graph, .speedscope.json speedscope's format.
func FormatForPath(path string) (Format, error) {
	base := strings.ToLower(filepath.Base(path))
	switch {
	case strings.HasSuffix(base, ".pb.gz"), strings.HasSuffix(base, ".pprof"):
		return FormatPprof, nil
	case strings.HasSuffix(base, ".folded"), strings.HasSuffix(base, ".txt"):
		return FormatFolded, nil
	case strings.HasSuffix(base, ".svg"):
		return FormatSVG, nil
	case strings.HasSuffix(base, ".speedscope.json"):
		return FormatSpeedscope, nil
	}
	return FormatUnknown, fmt.Errorf("exporter: cannot tell the format of %q from its name: use a name ending in .pb.gz, .pprof, .folded, .txt, .svg or .speedscope.json, or name the format (pprof, folded, svg, speedscope)", path)
}

// Options tunes the formats: AppOnly applies to every one, the others to
// the text and graphic formats only.
type Options struct {
	// AppOnly, when set, keeps only the frames of the application's
	// images, each run of other frames collapsed into one SystemFrame.
	AppOnly *AppFilter
	// ProcessRoot adds a root frame per process ("pid 1234 (name)") to
	// folded stacks and flame graphs.
	ProcessRoot bool
	// ThreadRoot adds a frame per thread (its name, or "thread ID" when it
	// has none, GoneThreadsName for thread 0) below the process frame, if
	// any.
	ThreadRoot bool
	// Title is the flame graph's title (default: "macprof: ", the command
	// or else the executables' names, the mode and the window's length).
	Title string
	// Command is the command line that was profiled, if macprof started
	// it, for the default title.
	Command []string
	// Width is the flame graph's width in pixels (default 1200).
	Width int
	// MinFraction drops flame graph frames narrower than this share of all
	// samples (default 0.001).
	MinFraction float64
}

// Write writes the window to out in the given format.
func Write(out io.Writer, format Format, w *profile.Window, c *symcache.Cache, opts Options) error {
	switch format {
	case FormatPprof:
		p, err := Profile(w, c, opts)
		if err != nil {
			return err
		}
		if err := p.Write(out); err != nil {
			return fmt.Errorf("exporter: writing pprof: %w", err)
		}
		return nil
	case FormatFolded:
		var a folded.Aggregator
		if err := stacks(w, c, opts, a.Add); err != nil {
			return err
		}
		if _, err := a.WriteTo(out); err != nil {
			return fmt.Errorf("exporter: %w", err)
		}
		return nil
	case FormatSVG:
		var t flamegraph.Tree
		if err := stacks(w, c, opts, t.Add); err != nil {
			return err
		}
		title := opts.Title
		if title == "" {
			title = defaultTitle(w, opts.Command)
		}
		err := flamegraph.WriteSVG(out, &t, flamegraph.Options{
			Title:       title,
			Period:      w.Period,
			Width:       opts.Width,
			MinFraction: opts.MinFraction,
		})
		if err != nil {
			return fmt.Errorf("exporter: %w", err)
		}
		return nil
	case FormatSpeedscope:
		return writeSpeedscope(out, w, c, opts)
	}
	return fmt.Errorf("exporter: unknown format %d", format)
}

// WriteFile writes the window to path in the given format; path "-" is
// standard output. The output is encoded in memory first, so a failed
// export leaves an existing file untouched, then written by
// safefile.WriteOutput: to a new file renamed over path, so that a link or
// FIFO planted at path while recording is replaced, not followed.
func WriteFile(path string, format Format, w *profile.Window, c *symcache.Cache, opts Options) error {
	var buf bytes.Buffer
	if err := Write(&buf, format, w, c, opts); err != nil {
		return err
	}
	if path == "-" {
		if _, err := os.Stdout.Write(buf.Bytes()); err != nil {
			return fmt.Errorf("exporter: writing %s to standard output: %w", format, err)
		}
		return nil
	}
	if err := safefile.WriteOutput(path, buf.Bytes()); err != nil {
		return fmt.Errorf("exporter: writing %s: %w", path, err)
	}
	return nil
}

// CheckWritable reports whether path can be written, without changing it:
// the directory must exist and path must not be a directory. It creates
// and removes path when it did not exist, and opens a regular file for
// writing without truncating it when it did. Devices and pipes, and "-"
// (standard output), are accepted as they are, but not in a directory
// others can write (safefile.CheckOutput). Run as root, permission bits do
// not stop writing, so neither does this check.
func CheckWritable(path string) error {
	if path == "-" {
		return nil
	}
	if path == "" {
		return errors.New("exporter: empty output path")
	}
	if err := safefile.CheckOutput(path); err != nil {
		return fmt.Errorf("exporter: %w", err)
	}
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		return fmt.Errorf("exporter: output %s is a directory", path)
	case err == nil && !st.Mode().IsRegular():
		// A device or pipe (/dev/stdout, a FIFO): opening a FIFO would
		// block until it has a reader, so leave the check to the write.
		return nil
	case err == nil:
		if err := safefile.CanWrite(path); err != nil {
			return fmt.Errorf("exporter: output %s is not writable: %w", path, err)
		}
		return nil
	case errors.Is(err, fs.ErrNotExist):
		dir := filepath.Dir(path)
		if dst, err := os.Stat(dir); err != nil {
			return fmt.Errorf("exporter: output directory %s: %w", dir, err)
		} else if !dst.IsDir() {
			return fmt.Errorf("exporter: output directory %s is not a directory", dir)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return fmt.Errorf("exporter: output %s cannot be created: %w", path, err)
		}
		f.Close()
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("exporter: removing the probe of %s: %w", path, err)
		}
		return nil
	default:
		return fmt.Errorf("exporter: output %s: %w", path, err)
	}
}

// defaultTitle names the window's executables.
func defaultTitle(w *profile.Window, command []string) string {
	if len(command) > 0 {
		return "macprof: " + shellJoin(command) + " (" + titleDetails(w) + ")"
	}
	var names []string
	seen := map[string]bool{}
	for _, p := range w.Processes {
		n := filepath.Base(p.Executable)
		if p.Executable == "" {
			n = "pid " + strconv.Itoa(p.PID)
		}
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
		if len(names) == 3 {
			names = append(names, "...")
			break
		}
	}
	t := "macprof"
	if len(names) > 0 {
		t += ": " + strings.Join(names, ", ")
	}
	return t + " (" + titleDetails(w) + ")"
}

// titleDetails is the mode and, when the window has both ends, its length
// ("cpu, 5.0s").
func titleDetails(w *profile.Window) string {
	s := w.Mode.String()
	if d := w.End.Sub(w.Start); !w.Start.IsZero() && d > 0 {
		if d >= time.Second {
			d = d.Round(100 * time.Millisecond)
		} else {
			d = d.Round(time.Millisecond)
		}
		s += ", " + d.String()
	}
	return s
}

// shellJoin writes a command line as a shell would read it back: words
// with spaces, quotes or other special characters in single quotes.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
			q[i] = a
		} else {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(q, " ")
}

// stacks symbolizes every sample of the window and calls add with its
// frame names from the root to the leaf (inlined functions included, the
// process and thread frames first when opts ask for them). The frames slice
// is reused between calls.
func stacks(w *profile.Window, c *symcache.Cache, opts Options, add func(frames []string, count int64)) error {
	r, err := newResolver(w, c, opts.AppOnly)
	if err != nil {
		return err
	}
	var frames []string
	for _, s := range w.Samples {
		if s.Count <= 0 {
			continue
		}
		frames, err = sampleFrames(w, r, opts, s, frames[:0])
		if err != nil {
			return err
		}
		add(frames, s.Count)
	}
	return nil
}

// sampleFrames appends the frame names of sample s to frames, from the root
// to the leaf, as stacks gives them.
func sampleFrames(w *profile.Window, r *resolver, opts Options, s profile.Sample, frames []string) ([]string, error) {
	ids, err := r.stack(s)
	if err != nil {
		return frames, err
	}
	if opts.ProcessRoot {
		frames = append(frames, processFrame(w, r.proc(s.PID), s.PID))
	}
	if opts.ThreadRoot {
		switch {
		case s.ThreadName != "":
			frames = append(frames, s.ThreadName)
		case s.Thread == 0:
			frames = append(frames, GoneThreadsName)
		default:
			frames = append(frames, "thread "+strconv.FormatUint(uint64(s.Thread), 10))
		}
	}
	if w.Stacks[s.Stack].Truncated {
		frames = append(frames, TruncatedFrame)
	}
	if w.Stacks[s.Stack].Unsampled {
		frames = append(frames, profile.UnsampledFrame)
	} else if r := w.Stacks[s.Stack].Lost; r != profile.NotLost {
		frames = append(frames, r.Frame())
	} else if len(ids) == 0 {
		frames = append(frames, NoFramesFrame)
	}
	for i := len(ids) - 1; i >= 0; i-- {
		frames = r.locs[ids[i]].names(frames)
	}
	return frames, nil
}

// processFrame names the root frame of process pid ("pid 1234 (name)");
// proc is its index in w.Processes, or -1.
func processFrame(w *profile.Window, proc, pid int) string {
	s := "pid " + strconv.Itoa(pid)
	if proc >= 0 && w.Processes[proc].Executable != "" {
		s += " (" + filepath.Base(w.Processes[proc].Executable) + ")"
	}
	return s
}
