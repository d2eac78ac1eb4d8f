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
	v, rev := buildVersion()
	if rev != "" {
		rev = " " + rev
	}
	fmt.Fprintf(stdout, "macprof %s%s %s %s/%s\n", v, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return 0
}

// buildVersion returns macprof's module version ("(devel)" when unknown)
// and the VCS revision it was built from, if known.
func buildVersion() (version, revision string) {
	version = "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				revision = s.Value
			}
		}
	}
	return version, revision
}
