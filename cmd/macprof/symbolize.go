package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/macprof/macprof/internal/cli"
	"github.com/macprof/macprof/symbolize"
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

A function without a symbol (a stripped image) prints as image+0xSTART,
the link-time address of its start (what atos -o and addr2line -e take),
never as the nearest exported symbol or __mh_execute_header. An address outside the binary prints as
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

func runSymbolize(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("symbolize", symbolizeSynopsis, symbolizeHelp, stderr)
	bin := fs.String("o", "", "the `BINARY` (Mach-O or ELF) the addresses belong to (required)")
	loadStr := fs.String("l", "", "runtime load address `LOADADDR` of the binary (hex): addresses are then runtime addresses")
	arch := fs.String("arch", "", "`ARCH` slice of a universal Mach-O file: arm64, arm64e or x86_64 (default: this machine's, else the first)")
	dsym := fs.String("dsym", "", "dSYM bundle (or the DWARF file inside it) at `PATH` for file:line; default BINARY.dSYM when present")
	inline := fs.Bool("i", false, "print inlined frames too, one line each, innermost first")
	if st, ok := fs.ParseArgs(args); !ok {
		return st
	}
	if *bin == "" {
		return fs.UsageError("-o BINARY is required")
	}
	cfg := symbolize.Config{Binary: *bin, Arch: *arch, DSYM: *dsym, HaveLoad: *loadStr != "", Inline: *inline}
	if cfg.HaveLoad {
		v, err := symbolize.ParseAddr(*loadStr)
		if err != nil {
			return fs.UsageError("-l %q: not a hexadecimal address", *loadStr)
		}
		cfg.Load = v
	}
	if len(fs.Args()) == 0 && pipedFile(symbolizeStdin) {
		// A batch to come from a pipe or a file (not a few
		// addresses, nor typed ones): worth the collection hugeHeap
		// costs (3-7 ms).
		growPipe(symbolizeStdin.(*os.File))
		if f, ok := stdout.(*os.File); ok {
			// The answers (~60 bytes an address) are written 256
			// KiB at a time: into a pipe of 64 KiB each write
			// waited for the reader four times.
			growPipe(f)
		}
		hugeHeap()
		if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
			// No collection in a short-lived command whose heap is
			// a few tens of MB, mostly live (node: 3 collections
			// before, peak RSS 66 to 93 MB): each faulted in the
			// runtime's own structures (~80 faults on the Mach-O
			// Go target). The memory limit starts the collector
			// where a batch's garbage or a huge table would grow
			// the heap past what the machine should give it.
			defer debug.SetGCPercent(debug.SetGCPercent(-1))
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(symbolizeMemoryLimit(*bin)))
		}
	}
	err := symbolize.Run(cfg, fs.Args(), symbolizeStdin, stdout)
	if errors.Is(err, symbolize.ErrNotAddress) {
		return 1 // said on standard output, as atos does
	}
	if err != nil {
		fmt.Fprintf(stderr, "macprof symbolize: %v\n", err)
		return 1
	}
	return 0
}

// symbolizeMemoryLimit is the heap a batch of addresses from a pipe or a
// file may reach before the collector runs (see runSymbolize): 512 MiB,
// and four times the size of bin, which bounds its table's (node, 99 MB:
// peak RSS 93 MB).
func symbolizeMemoryLimit(bin string) int64 {
	limit := int64(512 << 20)
	if st, err := os.Stat(bin); err == nil && st.Size() < 1<<40 {
		limit += 4 * st.Size()
	}
	return limit
}

// pipedFile reports whether r is a file of the OS that is no terminal: a
// pipe or a regular file.
func pipedFile(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice == 0
}
