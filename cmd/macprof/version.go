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
	v, rev := buildVersionOf(bi)
	goVersion := runtime.Version()
	if bi != nil && bi.GoVersion != "" {
		goVersion = bi.GoVersion
	}
	s := "macprof " + v
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if buildSetting(bi, "vcs.modified") == "true" {
			rev += ", modified"
		}
		s += " (" + rev + ")"
	}
	return s + " " + goVersion + " " + goos + "/" + goarch
}

// buildVersion returns macprof's module version ("(devel)" when unknown)
// and the VCS revision it was built from, if known.
func buildVersion() (version, revision string) {
	bi, _ := debug.ReadBuildInfo()
	return buildVersionOf(bi)
}

func buildVersionOf(bi *debug.BuildInfo) (version, revision string) {
	version = "(devel)"
	if bi != nil && bi.Main.Version != "" {
		version = bi.Main.Version
	}
	return version, buildSetting(bi, "vcs.revision")
}

// buildSetting returns the value of a build setting, or "".
func buildSetting(bi *debug.BuildInfo, key string) string {
	if bi == nil {
		return ""
	}
	for _, s := range bi.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}
