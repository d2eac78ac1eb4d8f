package main

import (
	"bufio"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/symcache"
)

func init() {
	register(command{name: "symbolize", summary: "turn addresses in a Mach-O or ELF binary into function (file:line), like atos", run: runSymbolize})
}

// symbolizeStdin is where addresses are read from when none are given (a
// variable for tests).
var symbolizeStdin io.Reader = os.Stdin

const symbolizeSynopsis = "macprof symbolize -o BINARY [-l LOADADDR] [--arch arm64|x86_64] [--dsym PATH] [-i] [ADDR...]"

const symbolizeHelp = `
Prints the function that contains each address, one line per address, in
the form Apple's atos uses:

    function (in image) + offset          from the symbol table
    function (in image) (file:line)       with debug information (a dSYM)

BINARY is a Mach-O executable or library (thin or universal; 64-bit arm64
or x86_64), or an ELF file. It is read on any OS: macprof symbolize works
on Linux servers for addresses from macOS crash logs and profiles.

Addresses are hexadecimal (0x optional), given as arguments or, when there
are none, read from standard input (any whitespace between them). Without
-l they are link-time addresses, as in the binary; with -l, runtime
addresses of a process that loaded the binary at LOADADDR (for Mach-O the
address of its header, that is of __TEXT: "Binary Images" in a crash log;
for ELF the load bias, 0 for a non-PIE executable).

A function without a symbol (a stripped image) prints as image+0xOFFSET,
its offset from the start of __TEXT, never as the nearest exported symbol
or __mh_execute_header. An address outside the binary prints as
"0xADDR (not in image)"; a word that is not an address prints as
"?? (not an address: WORD)" and makes the exit status 1.

For Mach-O, the dSYM is BINARY.dSYM when it exists, or --dsym; its UUID
must match the binary's. Inlined calls appear with -i, innermost first,
one line per frame.

Examples:
    macprof symbolize -o MyApp.app/Contents/MacOS/MyApp -l 0x104a2c000 0x104a2f3c8 0x104a2e010
    macprof symbolize -o libfoo.dylib --arch x86_64 --dsym libfoo.dylib.dSYM 0x3f20
    grep -o '0x[0-9a-f]*' trace.txt | macprof symbolize -o ./server
`

type symbolizer struct {
	img    *images.Image
	cache  *symcache.Cache
	table  *symcache.Table
	image  string
	inline bool
	names  []string // demangled name per function index, filled lazily
}

func runSymbolize(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("symbolize", symbolizeSynopsis, symbolizeHelp, stderr)
	bin := fs.String("o", "", "the binary (Mach-O or ELF) the addresses belong to (required)")
	loadStr := fs.String("l", "", "runtime load address of the binary (hex): addresses are then runtime addresses")
	arch := fs.String("arch", "", "architecture slice of a universal Mach-O file: arm64, arm64e or x86_64 (default: this machine's, else the first)")
	dsym := fs.String("dsym", "", "dSYM bundle (or the DWARF file inside it) for file:line; default BINARY.dSYM when present")
	inline := fs.Bool("i", false, "print inlined frames too, one line each, innermost first")
	if st, ok := parseFlags(fs, args); !ok {
		return st
	}
	if *bin == "" {
		fmt.Fprintln(stderr, "macprof symbolize: -o BINARY is required")
		return 2
	}
	var load uint64
	if *loadStr != "" {
		v, err := parseAddr(*loadStr)
		if err != nil {
			fmt.Fprintf(stderr, "macprof symbolize: -l %q: not a hexadecimal address\n", *loadStr)
			return 2
		}
		load = v
	}
	s, err := newSymbolizer(*bin, *arch, *dsym, load, *loadStr != "")
	var t *symcache.Table
	if err == nil {
		s.inline = *inline
		t, err = s.cache.Table(s.img)
	}
	if err != nil {
		// Every error about the file names it, however deep it came from.
		if !strings.Contains(err.Error(), *bin) {
			err = fmt.Errorf("%s: %w", *bin, err)
		}
		fmt.Fprintf(stderr, "macprof symbolize: %v\n", err)
		return 1
	}
	s.table, s.names = t, make([]string, t.Len())
	out := bufio.NewWriterSize(stdout, 256<<10)
	defer out.Flush()
	status := 0
	if fs.NArg() > 0 {
		for _, a := range fs.Args() {
			if !s.line(out, []byte(a)) {
				status = 1
			}
		}
		return status
	}
	// Flush what is printed before every read that may block, so that
	// addresses typed or piped in one at a time are answered at once.
	sc := bufio.NewScanner(flushingReader{symbolizeStdin, out})
	sc.Buffer(make([]byte, 256<<10), 1<<20)
	sc.Split(scanASCIIWords)
	for sc.Scan() {
		if !s.line(out, sc.Bytes()) {
			status = 1
		}
	}
	if err := sc.Err(); err != nil {
		out.Flush()
		fmt.Fprintf(stderr, "macprof symbolize: reading standard input: %v\n", err)
		return 1
	}
	return status
}

// flushingReader flushes w before each read from r.
type flushingReader struct {
	r io.Reader
	w *bufio.Writer
}

func (f flushingReader) Read(p []byte) (int, error) {
	if err := f.w.Flush(); err != nil {
		return 0, err
	}
	return f.r.Read(p)
}

// scanASCIIWords is bufio.ScanWords for ASCII whitespace only (addresses
// are ASCII), without decoding UTF-8.
func scanASCIIWords(data []byte, atEOF bool) (advance int, token []byte, err error) {
	start := 0
	for start < len(data) && isSpace(data[start]) {
		start++
	}
	for i := start; i < len(data); i++ {
		if isSpace(data[i]) {
			return i + 1, data[start:i], nil
		}
	}
	if atEOF && len(data) > start {
		return len(data), data[start:], nil
	}
	return start, nil, nil
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}

// parseAddr parses a hexadecimal address, with or without 0x.
func parseAddr(s string) (uint64, error) {
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

// newSymbolizer opens bin (Mach-O or ELF) as an image at load (the
// link-time address when !haveLoad).
func newSymbolizer(bin, arch, dsym string, load uint64, haveLoad bool) (*symbolizer, error) {
	f, err := os.Open(bin)
	if err != nil {
		return nil, err
	}
	var magic [4]byte
	_, err = io.ReadFull(f, magic[:])
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: too short to be a binary", bin)
	}
	if bytes.Equal(magic[:], []byte(elf.ELFMAG)) {
		if arch != "" || dsym != "" {
			return nil, fmt.Errorf("%s is an ELF file: --arch and --dsym are for Mach-O", bin)
		}
		return newELFSymbolizer(bin, load)
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

// newELFSymbolizer describes the executable PT_LOAD segment of an ELF file
// loaded with bias load as an image.
func newELFSymbolizer(bin string, load uint64) (*symbolizer, error) {
	ef, err := elf.Open(bin)
	if err != nil {
		return nil, fmt.Errorf("%s: damaged ELF file: %w", bin, err)
	}
	defer ef.Close()
	for _, p := range ef.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			img := &images.Image{Path: bin, Format: images.FormatELF, Start: load + p.Vaddr, Limit: load + p.Vaddr + p.Memsz, Offset: p.Off}
			return &symbolizer{img: img, image: filepath.Base(bin), cache: symcache.New(symcache.Options{MaxFrames: 1 << 20})}, nil
		}
	}
	return nil, fmt.Errorf("%s: no executable PT_LOAD segment", bin)
}

// line prints the line(s) for one word; false when it is not an address.
func (s *symbolizer) line(w *bufio.Writer, word []byte) bool {
	addr, ok := parseHex(word)
	if !ok {
		fmt.Fprintf(w, "?? (not an address: %s)\n", word)
		return false
	}
	if !s.img.Contains(addr) {
		fmt.Fprintf(w, "%#x (not in %s)\n", addr, s.image)
		return true
	}
	if s.table != nil && !s.table.HasLines() {
		// Symbol table only: look the address up directly and
		// demangle each function once; a one-shot batch gains
		// nothing from the frame cache.
		s.fast(w, addr)
		return true
	}
	frames := s.cache.Symbolize(s.img, addr, false)
	if !s.inline {
		// The function that contains the address, with the address's own
		// file:line.
		out := frames[len(frames)-1]
		out.File, out.Line = frames[0].File, frames[0].Line
		s.frame(w, out)
		return true
	}
	for _, f := range frames {
		s.frame(w, f)
	}
	return true
}

// fast prints the line for addr from the symbol table alone.
func (s *symbolizer) fast(w *bufio.Writer, addr uint64) {
	off := s.img.FileOffset(addr)
	b := w.AvailableBuffer() // append in place: Write then copies nothing
	i := -1
	var va uint64
	if v, in := s.table.Address(off); in {
		va, i = v, s.table.LookupIndex(v)
	}
	name, start := "", uint64(0)
	if i >= 0 {
		if s.names[i] == "" {
			raw, _ := s.table.Symbol(i)
			s.names[i] = symcache.Demangle(raw)
		}
		name = s.names[i]
		_, start = s.table.Symbol(i)
	}
	if name != "" {
		b = append(b, name...)
		b = append(b, " (in "...)
		b = append(b, s.image...)
		b = append(b, ") + "...)
		b = strconv.AppendUint(b, va-start, 10)
	} else {
		b = append(b, s.image...)
		b = append(b, "+0x"...)
		b = strconv.AppendUint(b, off, 16)
		b = append(b, " (in "...)
		b = append(b, s.image...)
		b = append(b, ')')
	}
	b = append(b, '\n')
	w.Write(b)
}

func (s *symbolizer) frame(w *bufio.Writer, f symcache.Frame) {
	w.WriteString(f.Name())
	w.WriteString(" (in ")
	w.WriteString(s.image)
	w.WriteString(")")
	switch {
	case f.File != "":
		w.WriteString(" (")
		w.WriteString(filepath.Base(f.File))
		w.WriteByte(':')
		w.WriteString(strconv.Itoa(f.Line))
		w.WriteString(")")
	case f.Function != "" && !f.Inlined:
		w.WriteString(" + ")
		w.WriteString(strconv.FormatUint(f.Offset, 10))
	}
	w.WriteByte('\n')
}
