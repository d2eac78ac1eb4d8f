package main

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"github.com/macprof/macprof/demangle"
	"github.com/macprof/macprof/internal/cli"
)

func init() {
	register(command{name: "demangle", summary: "demangle C++, Rust and Swift names, like c++filt and swift demangle", run: runDemangle})
}

// demangleStdin is where names are read from when none are given (a
// variable for tests).
var demangleStdin io.Reader = os.Stdin

const demangleSynopsis = "macprof demangle [--simplified] [NAME...]"

const demangleHelp = `
Prints the readable form of each mangled symbol name: C++ (Itanium, as
c++filt), Rust (legacy and v0, as rustc-demangle) and Swift (as swift
demangle). Names that are not mangled, or that do not demangle, print
unchanged. Mach-O's extra leading underscore is accepted.

Names are the arguments, one line out per name; with none, standard input
is read line by line and every mangled word in a line is replaced, the
rest of the line kept, so one line comes out per line in (a stack trace or
a symbol listing can be piped through).

--simplified prints the short form profiles show: Swift as swift demangle
--simplified prints it (no module names, argument labels only), Rust
without its hash, C++ without clone suffixes.

Examples:
    macprof demangle '$s4main5greetyySiF' _ZN3foo3barEv
    nm -j MyApp | macprof demangle --simplified
`

func runDemangle(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("demangle", demangleSynopsis, demangleHelp, stderr)
	simplified := fs.Bool("simplified", false, "print the simplified form profiles show")
	if st, ok := fs.ParseArgs(args); !ok {
		return st
	}
	form := demangle.Full
	if *simplified {
		form = demangle.Simplified
	}
	if fs.NArg() == 0 {
		if err := demangle.Filter(demangleStdin, stdout, form); err != nil {
			fmt.Fprintf(stderr, "macprof demangle: %v\n", err)
			return 1
		}
		return 0
	}
	w := bufio.NewWriter(stdout)
	for _, n := range fs.Args() {
		w.WriteString(demangle.Name(n, form))
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintf(stderr, "macprof demangle: %v\n", err)
		return 1
	}
	return 0
}
