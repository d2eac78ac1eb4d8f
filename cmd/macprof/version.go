package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

func init() {
	register(command{name: "version", summary: "print macprof's version and build", run: runVersion})
}

func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("version", "macprof version", "Prints the module version, VCS revision and Go toolchain macprof was built with.", stderr)
	if st, ok := parseFlags(fs, args); !ok {
		return st
	}
	v, rev := "(devel)", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				rev = " " + s.Value
			}
		}
	}
	fmt.Fprintf(stdout, "macprof %s%s %s %s/%s\n", v, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return 0
}
