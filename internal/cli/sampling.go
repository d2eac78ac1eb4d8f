package cli

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"runtime/debug"
	"syscall"

	"github.com/macprof/macprof/exporter"
	"github.com/macprof/macprof/profile"
)

// StopSignals end a sampling command: record, or the agent, which flushes
// what it holds first.
var StopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// ParseMode maps a --mode value to its profile.Mode.
func ParseMode(s string) (profile.Mode, bool) {
	switch s {
	case "cpu":
		return profile.ModeCPU, true
	case "wall":
		return profile.ModeWall, true
	}
	return 0, false
}

// AppOnlyFlags adds --app-only and --app-images to fs and returns what
// reads them after parsing: the filter, nil without --app-only.
func AppOnlyFlags(fs *flag.FlagSet) func() (*exporter.AppFilter, error) {
	only := fs.Bool("app-only", false, "keep only the frames of the profiled program's own images (its executable, its app bundle, --app-images), each run of other frames shown as one [system] frame")
	more := fs.String("app-images", "", "with --app-only, also keep the frames of images whose path matches `REGEX`")
	return func() (*exporter.AppFilter, error) {
		if !*only {
			if *more != "" {
				return nil, fmt.Errorf("--app-images needs --app-only")
			}
			return nil, nil
		}
		f := &exporter.AppFilter{}
		if *more != "" {
			re, err := regexp.Compile(*more)
			if err != nil {
				return nil, fmt.Errorf("--app-images: %v", err)
			}
			f.Images = re
		}
		return f, nil
	}
}

// BuildVersion returns macprof's module version ("(devel)" when unknown)
// and the VCS revision it was built from, if known.
func BuildVersion() (version, revision string) {
	bi, _ := debug.ReadBuildInfo()
	return BuildVersionOf(bi)
}

// BuildVersionOf is BuildVersion of the given build information, which may
// be nil (a binary built without module support).
func BuildVersionOf(bi *debug.BuildInfo) (version, revision string) {
	version = "(devel)"
	if bi != nil && bi.Main.Version != "" {
		version = bi.Main.Version
	}
	return version, BuildSetting(bi, "vcs.revision")
}

// BuildSetting returns the value of a build setting, or "".
func BuildSetting(bi *debug.BuildInfo, key string) string {
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
