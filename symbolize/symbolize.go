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
	"debug/macho"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

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
	// An ELF file's names and a Mach-O file's Go line tables are read
	// in place from its mapping: a file that shrinks under it faults,
	// an error naming it (these defers run last, after the mapping is
	// closed).
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
		// One batch: the arguments, each a word.
		for _, a := range addrs {
			s.word([]byte(a))
		}
		if !s.batch(out) {
			status = ErrNotAddress
		}
		return cmp.Or(s.faulted(), status)
	}
	// Read what stdin holds and answer its whole words as one batch,
	// flushing before the next read, which may block: addresses piped
	// in one at a time are answered at once. A writer faster than the
	// answers (a file, or a program that wrote them all): while the
	// reads fill the buffer and poll says more is ready, the batch
	// takes that too, up to maxBatch, so that each function's line
	// tables are walked once for all its addresses (100,000 addresses
	// of a Go binary came in two batches, the second walking most
	// functions again). Each read's words are parsed at once into the
	// batch's answers, so that the buffer is reused: the text of a
	// batch held whole was 3 MiB of fresh pages for 1.2 MB of input.
	buf := make([]byte, readBuffer)
	have, batched, empty := 0, 0, 0 // have: an unfinished word's bytes at buf's start
	for {
		if have == len(buf) {
			// A word fills the buffer: twice as much room, up to
			// maxWord.
			if have >= maxWord {
				return fmt.Errorf("reading standard input: %w", bufio.ErrTooLong)
			}
			grown := make([]byte, min(2*len(buf), maxWord))
			copy(grown, buf)
			buf = grown
		}
		n, rerr := stdin.Read(buf[have:])
		if n == 0 && rerr == nil {
			if empty++; empty >= 100 {
				rerr = io.ErrNoProgress
			}
		} else {
			empty = 0
		}
		end := have + n
		// Whole words: each followed by a space, or the last one
		// when nothing more comes.
		rest := s.words(buf[:end], rerr != nil)
		batched += rest
		have = copy(buf, buf[rest:end])
		if rerr == nil && n > 0 && end == len(buf) && batched < maxBatch && more(stdin) {
			continue
		}
		batched = 0
		if !s.batch(out) {
			status = ErrNotAddress
		}
		if err := s.faulted(); err != nil {
			return err
		}
		if have >= maxWord {
			// A word as long as the largest buffer, unfinished.
			return fmt.Errorf("reading standard input: %w", bufio.ErrTooLong)
		}
		if rerr == io.EOF {
			return status
		}
		if rerr != nil {
			out.Flush()
			return fmt.Errorf("reading standard input: %w", rerr)
		}
		if err := out.Flush(); err != nil {
			return err
		}
	}
}

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
	s.table, s.slots = t, make([]int32, t.Len())
	s.lineNames, s.fileIndex = map[string]int32{}, map[string]int32{}
	s.lastName, s.lastFileIndex = -1, -1
	s.lines = t.LineCursor()
	s.inImage = " (in " + s.image + ")"
	s.lineMid = padded(s.inImage + " (")
	s.anonHead, s.anonMid = padded(s.image+"+0x"), padded(s.inImage+" + ")
	return s, nil
}

type symbolizer struct {
	// touched sums the bytes of the names gather read ahead of
	// print, and those demangleBlock read ahead of demangling
	// (workersTouched on the demangling goroutines): kept, so that the
	// loads are not dropped.
	touched        byte
	workersTouched atomic.Uint32
	// unmap releases the mapping the table lies in, once loaded
	// (symcache.LoadELFMapped, LoadMachOMapped; set by the loader's
	// goroutine).
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
	// inImage is " (in image)", appended to most answers in one copy;
	// lineMid " (in image) (", what lies between a name and its file
	// (padded).
	inImage string
	lineMid paddedString
	// anonHead "image+0x" and anonMid " (in image) + " are what an
	// unnamed function's line holds besides its numbers (padded).
	anonHead, anonMid paddedString
	inline            bool
	// names are the (demangled) names of the functions the addresses
	// met, in the order met ("" for an unnamed one), starts their
	// starts, and slots[i] is 1 + the index in names of the table's
	// function i, 0 until met.
	names  []string
	starts []uint64
	slots  []int32
	// queued are the indexes in names a batch found that are
	// still to be demangled (by demangleQueued, on every CPU).
	queued []int32
	// lineNames[raw] is the index in lnames of what a function name
	// the line tables give prints as (demangled once).
	lineNames map[string]int32
	lnames    []string
	// fileIndex[path] is the index in files of the base name of a file
	// the line tables give, which is what is printed, and a colon.
	fileIndex map[string]int32
	files     []paddedString
	// fileCache holds paths fileIndexOf was asked, by their address.
	fileCache [64]struct {
		path string
		file int32
	}
	lines *symcache.LineCursor // the table's lines, walked in address order
	// answers, notAddrs and order are a batch's, reused from batch to
	// batch; notAddrs holds the words that are not addresses.
	answers  answerList
	notAddrs []byte
	order    []batchKey
	near     int                  // the table's index of the function last resolved
	packed   []uint64             // order, packed for sorting
	found    *[resolveChunk]found // resolveInOrder's, reused
	scratch  []uint64             // radixSort's other buffer
	// lastRaw is the last function name the line tables gave, and
	// lastName its index in lnames; lastFile the last file, and
	// lastFileIndex its index in files.
	lastRaw, lastFile       string
	lastName, lastFileIndex int32
	// The metLine of k = metIndex[i]-1 (metLines[k>>metBits], at
	// k&(1<<metBits-1)) is what the line tables last gave in function
	// names[i]: mostly one name and a few files, not worth a map lookup
	// each time the addresses come back to the function. metIndex[i] is
	// 0 until they give one: most of node's 70,000 functions met have no
	// lines, and a metLine each (48 bytes, zeroed for every function the
	// batch could meet) was 4.8 MB of fresh pages. They come in blocks,
	// which a Go binary's (lines in every function) fill without the
	// copies of growth by append. symbolNamed[i] is set once an answer
	// in function names[i] is printed by its symbol's name (see
	// resolve). Without line tables, all stay empty.
	metLines    []*[1 << metBits]metLine
	metCount    int32
	metIndex    []int32
	symbolNamed []bool
}

// answer is what one word of a batch resolves to: its address and,
// from the table, its function and line. It is small and holds no
// pointer: a batch's answers are copied to in address order, read in the
// words' order, and never scanned by the collector.
type answer struct {
	// addr is the address; for a word that is not one (fn notAddr),
	// where the word lies in symbolizer.notAddrs: start<<32 | end.
	addr uint64
	found
}

// found is what an answer's address resolves to.
type found struct {
	fn   int32 // index in names of its function; noFunction, notInImage or notAddr
	name int32 // index in lnames of the line tables' name for it, -1 for names[fn]
	file int32 // index in files of its file's base name, -1 for none
	line int32
}

// unresolved is the found of an address not (yet) resolved.
var unresolved = found{fn: noFunction, name: -1, file: -1}

// answer.fn of an address in an executable segment but in no function
// (or not looked up: the table is not used), of an address in no
// executable segment, and of a word that is not an address.
const (
	noFunction = -1
	notInImage = -2
	notAddr    = -3
)

// batchKey sorts a batch's table answers by address.
type batchKey struct {
	addr uint64
	i    int
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
	switch binary.BigEndian.Uint32(magic[:]) {
	case macho.Magic32, macho.Magic64, 0xcefaedfe, 0xcffaedfe, macho.MagicFat, 0xcafebabf:
	default:
		return nil, fmt.Errorf("%s is neither a Mach-O nor an ELF file (it starts with %q)", bin, magic[:])
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
	s := &symbolizer{img: img, image: filepath.Base(bin)}
	// The string table and a Go binary's line tables are read in
	// place from the file's mapping, not copied.
	mapped := func(img *images.Image) (*symcache.Table, error) {
		t, unmap, err := symcache.LoadMachOMapped(img, opts)
		s.setUnmap(unmap)
		return t, err
	}
	s.cache = symcache.New(symcache.Options{MaxFrames: 1 << 20, Loaders: map[images.Format]symcache.Loader{images.FormatMachO: mapped}})
	return s, nil
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
		s.setUnmap(unmap)
		return t, err
	}
	s.cache = symcache.New(symcache.Options{MaxFrames: 1 << 20, Loaders: map[images.Format]symcache.Loader{images.FormatELF: mapped}})
	return s, nil
}

// setUnmap keeps the function that releases the mapping the table was
// read from (called on the loader's goroutine).
func (s *symbolizer) setUnmap(unmap func() error) {
	s.unmapMu.Lock()
	s.unmap = unmap
	s.unmapMu.Unlock()
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
	s.word(word)
	return s.batch(w)
}

// fast reports whether an address is answered from the table in one line
// (without the frame cache, which a one-shot batch gains nothing from).
func (s *symbolizer) fast() bool { return s.table != nil && !s.inline }

// word appends to the batch the answer for word before it is looked up:
// its address (or its text) and whether it is in the binary.
func (s *symbolizer) word(word []byte) {
	addr, ok := parseHex(word)
	s.add(addr, ok, word)
}

// add appends to the batch the answer for word, whose value is addr when
// ok (an address), before it is looked up; a word that is not an address
// is kept in s.notAddrs, for its line.
func (s *symbolizer) add(addr uint64, ok bool, word []byte) {
	a := answer{addr: addr, found: unresolved}
	switch {
	case !ok:
		i := len(s.notAddrs)
		s.notAddrs = append(s.notAddrs, word...)
		a.addr, a.fn = uint64(i)<<32|uint64(len(s.notAddrs)), notAddr
	case s.segIndex(addr) < 0:
		a.fn = notInImage
	default:
		s.answers.addResolvable(addr)
	}
	s.answers.push(a)
}

// resolve fills a, what addr resolves to, from the table: the function
// that holds addr, with the address's own file:line when the table has
// lines (the innermost inlined body's), as the frames of Cache.Symbolize
// would; a function's name, once an answer is to be printed by it, is
// queued to be demangled (demangleQueued), unread. It only
// stores to a (in resolveInOrder's buffer, in address order).
func (s *symbolizer) resolve(a *found, addr uint64) {
	va, mapped := s.table.Address(s.segAt(s.segIndex(addr)).FileOffset(addr))
	if !mapped {
		return
	}
	i := s.table.LookupIndexNear(va, s.near)
	if i < 0 {
		return
	}
	s.near = i
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
		s.starts = append(s.starts, s.table.Start(i))
		if s.table.HasLines() {
			s.metIndex = append(s.metIndex, 0)
			s.symbolNamed = append(s.symbolNamed, false)
		}
		if raw != "" && !s.table.HasLines() {
			s.queueName(slot)
		}
	}
	a.fn = slot
	if !s.table.HasLines() {
		// No lines to look up (a stays without file and line name),
		// nor the function's name to read again.
		return
	}
	if s.names[slot] != "" {
		// As Cache.Symbolize: lines only for a named function.
		a.file, a.line, a.name = s.outerLine(va, slot)
		if a.name < 0 && s.table.HasLines() && !s.symbolNamed[slot] {
			// Printed by its symbol's name, which the line tables'
			// name (most of a Go binary's answers) spares reading.
			s.symbolNamed[slot] = true
			s.queueName(slot)
		}
	}
}

// queueName queues the name of function names[slot] to be demangled (by
// demangleQueued; a name that is not mangled stays as it is) without
// reading it: the first read of a Mach-O name, met at random in the
// file's string table, misses the caches and the TLB, and here, between
// lookups that depend on each other, those misses came one at a time
// (sentry-cli: IsMangled was a seventh of resolveInOrder); demangleBlock
// reads a block of names at once.
func (s *symbolizer) queueName(slot int32) {
	s.queued = append(s.queued, slot)
}

// segIndex returns the index (for segAt) of the executable segment that
// holds addr, or notInImage.
func (s *symbolizer) segIndex(addr uint64) int32 {
	if s.img.Contains(addr) {
		return 0
	}
	for k, img := range s.segments {
		if img.Contains(addr) {
			return int32(k + 1)
		}
	}
	return notInImage
}

// segAt returns the segment at index k of segIndex.
func (s *symbolizer) segAt(k int32) *images.Image {
	if k == 0 {
		return s.img
	}
	return s.segments[k-1]
}
