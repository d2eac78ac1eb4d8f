// Command initprobe links the demanglers and does nothing else, so that
// GODEBUG=inittrace=1 shows what their package inits cost every macprof
// command (TestInitsBuildNoTables).
package main

import (
	"os"

	"github.com/macprof/macprof/demangle"
)

func main() {
	if len(os.Args) > 1 {
		os.Stdout.WriteString(demangle.Name(os.Args[1], demangle.Full) + "\n")
	}
}
