// Package symbolize resolves addresses in one binary (a Mach-O file, thin
// or universal, with its dSYM; or an ELF file) the way Apple's atos does,
// for `macprof symbolize`: one line per address, "function (in image) +
// offset" from the symbol table (an unnamed function named image+0xSTART
// by its start) or "function (in image) (file:line)" with
// debug information, inlined frames on request.
package symbolize

import (
	"bufio"
	"bytes"
	"cmp"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/macprof/macprof/demangle"
	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/objfile"
	"github.com/macprof/macprof/internal/safefile"
	"github.com/macprof/macprof/symcache"
)

// Config says which binary the addresses belong to and how to print them.
type Config struct {
	Binary string // the Mach-O or ELF file (required)
	Arch   string // slice of a universal Mach-O file; "" for the default
	DSYM   string // dSYM bundle or DWARF file; "" for Binary.dSYM when present
	// Load is the runtime load address (Mach-O: of the header; ELF: the
	// load bias) when HaveLoad; otherwise addresses are link-time ones.
	Load     uint64
	HaveLoad bool
	Inline   bool // print inlined frames too, innermost first
}

// ErrNotAddress is returned by Run, after every address has been
// answered, when some word was not an address (its line says so).
var ErrNotAddress = errors.New("a word is not an address")

// Run opens cfg.Binary and writes one answer per address to stdout: for
// each of addrs, or, when there are none, for each whitespace-separated
// word read from stdin, flushing before every read so that addresses
// piped in one at a time are answered at once. Errors opening the binary
// name it; an error reading stdin is "reading standard input: ...";
// otherwise the error is ErrNotAddress or nil.
func Run(cfg Config, addrs []string, stdin io.Reader, stdout io.Writer) (err error) {
	// An ELF file's names are read in place from its mapping: a file
	// that shrinks under it faults, an error naming it (these defers
	// run last, after the mapping is closed).
	defer func() {
		if errors.Is(err, objfile.ErrFault) && !strings.Contains(err.Error(), cfg.Binary) {
			err = fmt.Errorf("%s: %w", cfg.Binary, err)
		}
	}()
	defer objfile.RecoverFault(&err, objfile.PanicOnFault())
	s, err := open(cfg)
	if err != nil {
		return err
	}
	defer s.close()
	out := newOutput(stdout)
	defer out.Flush()
	var status error
	if len(addrs) > 0 {
		words := make([][]byte, len(addrs))
		for i, a := range addrs {
			words[i] = []byte(a)
		}
		if !s.batch(out, words) {
			status = ErrNotAddress
		}
		return cmp.Or(s.faulted(), status)
	}
	// Read what stdin holds, answer every whole word of it as one
	// batch, and flush before the next read, which may block: addresses
	// piped in one at a time are answered at once, and a file of them
	// in batches of up to a buffer's worth: 64 KiB, about 7,000
	// addresses, whose answers stay in memory already touched (with
	// 256 KiB, a fresh process spent ~13% more CPU, mostly faulting in
	// the batch's larger arrays).
	buf := make([]byte, 0, 64<<10)
	var words [][]byte
	empty := 0
	for {
		if len(buf) == cap(buf) {
			// A word fills the buffer: twice as much room, up to
			// maxWord (append's growth would pass it).
			if len(buf) >= maxWord {
				return fmt.Errorf("reading standard input: %w", bufio.ErrTooLong)
			}
			grown := make([]byte, len(buf), min(2*cap(buf), maxWord))
			buf = grown[:copy(grown, buf)]
		}
		if err := out.Flush(); err != nil {
			return err
		}
		n, rerr := stdin.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if n == 0 && rerr == nil {
			if empty++; empty >= 100 {
				rerr = io.ErrNoProgress
			}
		} else {
			empty = 0
		}
		// Whole words: each followed by a space, or the last one
		// when nothing more comes.
		words = words[:0]
		rest := 0
		for i := 0; i < len(buf); {
			for i < len(buf) && isSpace(buf[i]) {
				i++
			}
			j := i
			for j < len(buf) && !isSpace(buf[j]) {
				j++
			}
			if j == i || (j == len(buf) && rerr == nil) {
				rest = i
				break
			}
			words = append(words, buf[i:j])
			rest = j
			i = j
		}
		if !s.batch(out, words) {
			status = ErrNotAddress
		}
		if err := s.faulted(); err != nil {
			return err
		}
		buf = buf[:copy(buf, buf[rest:])]
		if rerr == io.EOF {
			return status
		}
		if rerr != nil {
			out.Flush()
			return fmt.Errorf("reading standard input: %w", rerr)
		}
	}
}

// maxWord bounds one word read from standard input (as bufio.Scanner's
// limit did).
const maxWord = 1 << 20

// open opens cfg.Binary and reads its table; every error names the file.
func open(cfg Config) (*symbolizer, error) {
	s, err := newSymbolizer(cfg.Binary, cfg.Arch, cfg.DSYM, cfg.Load, cfg.HaveLoad)
	var t *symcache.Table
	if err == nil {
		s.inline = cfg.Inline
		t, err = s.cache.Table(s.img)
	}
	if err != nil {
		// Every error about the file names it, however deep it came from.
		if !strings.Contains(err.Error(), cfg.Binary) {
			err = fmt.Errorf("%s: %w", cfg.Binary, err)
		}
		return nil, err
	}
	s.table, s.slots, s.lineNames = t, make([]int32, t.Len()), map[string]string{}
	s.lines = t.LineCursor()
	return s, nil
}

type symbolizer struct {
	// unmap releases the mapping an ELF file's table lies in, once
	// loaded (symcache.LoadELFMapped; set by the loader's goroutine).
	unmapMu sync.Mutex
	unmap   func() error
	// fault is the first fault a demangling goroutine met reading a
	// name from that mapping.
	fault atomic.Pointer[error]
	img   *images.Image // the (first) executable segment, the table's
	// segments are the ELF file's other executable segments (node has
	// three): an address is mapped by the one that holds it.
	segments []*images.Image
	cache    *symcache.Cache
	table    *symcache.Table
	image    string
	inline   bool
	// names are the (demangled) names of the functions the addresses
	// met, in the order met ("" for an unnamed one), and slots[i] is
	// 1 + the index in names of the table's function i, 0 until met.
	names []string
	slots []int32
	// queued are the indexes in names a batch found that are
	// still to be demangled (by demangleQueued, on every CPU).
	queued []int32
	// lineNames are the demangled names of the functions the line
	// tables name, by their raw name.
	lineNames map[string]string
	lines     *symcache.LineCursor // the table's lines, walked in address order
	// answers and order are a batch's, reused from batch to batch.
	answers []answer
	order   []batchKey
	packed  []uint64 // order, packed for sorting
	scratch []uint64 // radixSort's other buffer
	// lastRaw is the last function name the line tables gave, and
	// lastName what it prints as.
	lastRaw, lastName string
	// lastFile is the last file the line tables gave, lastBase its base
	// name, which is what is printed.
	lastFile, lastBase string
}

// answer is what one word of a batch resolves to: its address, the
// segment that holds it, and, from the table, the function and line.
type answer struct {
	addr   uint64
	isAddr bool
	img    *images.Image
	off    uint64 // file offset, or link-time address when mapped
	va     uint64
	mapped bool
	start  uint64
	fn     int32  // index in names of its function, -1 for none
	name   string // the line tables' name for it, or "" for names[fn]
	file   string // base name
	line   int
}

// batchKey sorts a batch's table answers by address.
type batchKey struct {
	addr uint64
	i    int
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
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
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | uint64(c)
	}
	return v, true
}

// maxHeaderRead bounds what reading an ELF file's headers may read: far
// more than the largest headers (65,535 section headers of 64 bytes), so
// that sizes in a hostile header cannot make it read without end.
const maxHeaderRead = 64 << 20

// newSymbolizer opens bin (Mach-O or ELF) as an image at load (the
// link-time address when !haveLoad). A FIFO, device or directory at bin is
// refused without being opened for reading, so that nothing waits on it.
func newSymbolizer(bin, arch, dsym string, load uint64, haveLoad bool) (*symbolizer, error) {
	f, err := safefile.Open(bin)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var magic [4]byte
	if _, err := io.ReadFull(f, magic[:]); err != nil {
		return nil, fmt.Errorf("%s: too short to be a binary", bin)
	}
	if bytes.Equal(magic[:], []byte(elf.ELFMAG)) {
		if arch != "" || dsym != "" {
			return nil, fmt.Errorf("%s is an ELF file: --arch and --dsym are for Mach-O", bin)
		}
		return newELFSymbolizer(f, bin, load)
	}
	if !haveLoad {
		load = 0 // MachOImageFromFile: the link-time address
	}
	img, mf, err := images.MachOImageFromFile(bin, arch, load)
	if err != nil {
		return nil, err
	}
	mf.Close()
	opts := symcache.MachOOptions{DSYM: dsym}
	if dsym != "" {
		// Say now, not by missing lines, when the dSYM does not fit.
		if _, err := symcache.OpenDSYM(dsym, img.BuildID); err != nil {
			return nil, fmt.Errorf("--dsym: %w", err)
		}
	}
	img.Path = bin
	return &symbolizer{
		img:   img,
		image: filepath.Base(bin),
		cache: symcache.New(symcache.Options{MaxFrames: 1 << 20, Loaders: map[images.Format]symcache.Loader{images.FormatMachO: symcache.MachOLoader(opts)}}),
	}, nil
}

// newELFSymbolizer describes the executable PT_LOAD segments of the ELF
// file f (at path bin), loaded with bias load, as images.
func newELFSymbolizer(f io.ReaderAt, bin string, load uint64) (*symbolizer, error) {
	ef, err := elf.NewFile(safefile.Budget(f, maxHeaderRead))
	if err != nil {
		return nil, fmt.Errorf("%s: damaged ELF file: %w", bin, err)
	}
	var segs []*images.Image
	for _, p := range ef.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			segs = append(segs, &images.Image{Path: bin, Format: images.FormatELF, Start: load + p.Vaddr, Limit: load + p.Vaddr + p.Memsz, Offset: p.Off})
		}
	}
	if len(segs) == 0 {
		return nil, fmt.Errorf("%s: no executable PT_LOAD segment", bin)
	}
	s := &symbolizer{img: segs[0], segments: segs[1:], image: filepath.Base(bin)}
	// The table's names stay in the file's mapping (not copied): a
	// one-shot command reads the few it prints.
	mapped := func(img *images.Image) (*symcache.Table, error) {
		t, unmap, err := symcache.LoadELFMapped(img)
		s.unmapMu.Lock()
		s.unmap = unmap
		s.unmapMu.Unlock()
		return t, err
	}
	s.cache = symcache.New(symcache.Options{MaxFrames: 1 << 20, Loaders: map[images.Format]symcache.Loader{images.FormatELF: mapped}})
	return s, nil
}

// close unmaps what the table's names lie in; s answers nothing after.
func (s *symbolizer) close() {
	s.unmapMu.Lock()
	defer s.unmapMu.Unlock()
	if s.unmap != nil {
		s.unmap()
		s.unmap = nil
	}
}

// faulted returns the fault a demangling goroutine met, if any.
func (s *symbolizer) faulted() error {
	if p := s.fault.Load(); p != nil {
		return *p
	}
	return nil
}

// line prints the line(s) for one word; false when it is not an address.
func (s *symbolizer) line(w *output, word []byte) bool {
	var a answer
	s.parse(&a, word)
	if a.isAddr && a.img != nil && s.fast() {
		s.resolve(&a)
		s.demangleQueued()
	}
	s.print(w, &a, word)
	return a.isAddr
}

// fast reports whether an address is answered from the table in one line
// (without the frame cache, which a one-shot batch gains nothing from).
func (s *symbolizer) fast() bool { return s.table != nil && !s.inline }

// parse fills a with word's address and segment.
func (s *symbolizer) parse(a *answer, word []byte) {
	*a = answer{fn: -1}
	a.addr, a.isAddr = parseHex(word)
	if a.isAddr {
		a.img = s.segment(a.addr)
	}
}

// resolve fills a from the table: the function that holds its address,
// with the address's own file:line when the table has lines (the
// innermost inlined body's), as the frames of Cache.Symbolize would;
// each function's name is queued to be demangled once (demangleQueued).
func (s *symbolizer) resolve(a *answer) {
	a.off = a.img.FileOffset(a.addr)
	i := -1
	a.va, a.mapped = s.table.Address(a.off)
	if a.mapped {
		i = s.table.LookupIndex(a.va)
	}
	if i < 0 {
		if a.mapped {
			a.off = a.va // in no function: its link-time address
		}
		return
	}
	a.start = s.table.Start(i)
	slot := s.slots[i] - 1
	if slot < 0 {
		// The function's first address: its name read (from the
		// mapping, for ELF) once.
		raw, _ := s.table.Symbol(i)
		slot = int32(len(s.names))
		s.slots[i] = slot + 1
		// An unnamed function keeps "": it prints as image+0xSTART,
		// by its link-time start, as profiles name it.
		s.names = append(s.names, raw)
		if raw != "" && demangle.IsMangled(raw) {
			s.queued = append(s.queued, slot) // demangled by demangleQueued
		}
	}
	a.fn = slot
	if s.names[slot] != "" {
		// As Cache.Symbolize: lines only for a named function.
		a.file, a.line = s.outerLine(a.va, &a.name)
	}
}

// print writes a's line(s); word is what it was read from.
func (s *symbolizer) print(w *output, a *answer, word []byte) {
	switch {
	case !a.isAddr:
		fmt.Fprintf(w, "?? (not an address: %s)\n", word)
		return
	case a.img == nil:
		fmt.Fprintf(w, "%#x (not in %s)\n", a.addr, s.image)
		return
	case !s.fast():
		for _, f := range s.cache.Symbolize(a.img, a.addr, false) {
			s.frame(w, f)
		}
		return
	}
	name := a.name
	if name == "" && a.fn >= 0 {
		name = s.names[a.fn]
	}
	b := w.buf // appended to in place
	switch {
	case name != "" && a.file != "":
		b = append(b, name...)
		b = append(b, " (in "...)
		b = append(b, s.image...)
		b = append(b, ") ("...)
		b = append(b, a.file...) // a base name (see outerLine)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(a.line), 10)
		b = append(b, ')')
	case name != "" || a.fn >= 0:
		if name == "" {
			// An unnamed function: image+0xSTART.
			b = append(b, s.image...)
			b = append(b, "+0x"...)
			b = strconv.AppendUint(b, a.start, 16)
		}
		b = append(b, name...)
		b = append(b, " (in "...)
		b = append(b, s.image...)
		b = append(b, ") + "...)
		b = strconv.AppendUint(b, a.va-a.start, 10)
	default:
		b = append(b, s.image...)
		b = append(b, "+0x"...)
		b = strconv.AppendUint(b, a.off, 16)
		b = append(b, " (in "...)
		b = append(b, s.image...)
		b = append(b, ')')
	}
	b = append(b, '\n')
	w.done(b)
}

// segment returns the executable segment that holds addr, or nil.
func (s *symbolizer) segment(addr uint64) *images.Image {
	if s.img.Contains(addr) {
		return s.img
	}
	for _, img := range s.segments {
		if img.Contains(addr) {
			return img
		}
	}
	return nil
}

// outerLine returns the file's base name and line of va from the table's
// lines ("" when none) and sets *name to the function the lines name,
// when they name one, demangled once per distinct name.
func (s *symbolizer) outerLine(va uint64, name *string) (string, int) {
	if !s.table.HasLines() {
		return "", 0
	}
	fn, file, line, ok := s.lines.OuterLine(va)
	if !ok {
		return "", 0
	}
	switch {
	case fn == "":
	case fn == s.lastRaw:
		*name = s.lastName // the same function as the last address's
	case !demangle.IsMangled(fn):
		*name = fn // Go and C names: no map lookup
	default:
		d, seen := s.lineNames[fn]
		if !seen {
			d = demangle.Name(fn, demangle.Simplified)
			s.lineNames[fn] = d
		}
		*name = d
	}
	if fn != "" {
		s.lastRaw, s.lastName = fn, *name
	}
	if file == "" {
		return "", line
	}
	if file != s.lastFile {
		s.lastFile, s.lastBase = file, filepath.Base(file)
	}
	return s.lastBase, line
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
