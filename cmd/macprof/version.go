package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/macprof/macprof/internal/cli"
)

func init() {
	register(command{name: "version", summary: "print macprof's version and build (also macprof --version)", run: runVersion})
}

func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("version", "macprof version", "Prints, in one line, the module version, the VCS revision (and whether the tree had\nchanges) and the Go toolchain, OS and architecture macprof was built with.", stderr)
	if st, ok := fs.ParseArgs(args); !ok {
		return st
	}
	if fs.NArg() > 0 {
		return fs.UsageError("unexpected argument %q", fs.Arg(0))
	}
	bi, _ := debug.ReadBuildInfo()
	fmt.Fprintln(stdout, versionLine(bi, runtime.GOOS, runtime.GOARCH))
	return 0
}

// versionLine is what macprof version prints: "macprof VERSION (REVISION[,
// modified]) GOVERSION OS/ARCH"; the part in brackets only when the build
// recorded a revision. bi may be nil (a binary built without module
// support).
func versionLine(bi *debug.BuildInfo, goos, goarch string) string {
	v, rev := cli.BuildVersionOf(bi)
	goVersion := runtime.Version()
	if bi != nil && bi.GoVersion != "" {
		goVersion = bi.GoVersion
	}
	s := "macprof " + v
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if cli.BuildSetting(bi, "vcs.modified") == "true" {
			rev += ", modified"
		}
		s += " (" + rev + ")"
	}
	return s + " " + goVersion + " " + goos + "/" + goarch
}
