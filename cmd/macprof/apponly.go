package main

import (
	"flag"
	"fmt"
	"regexp"

	"github.com/macprof/macprof/exporter"
)

// appOnlyFlags adds --app-only and --app-images to fs and returns what
// reads them after parsing: the filter, nil without --app-only.
func appOnlyFlags(fs *flag.FlagSet) func() (*exporter.AppFilter, error) {
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
