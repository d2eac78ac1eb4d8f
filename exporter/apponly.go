package exporter

import (
	"path/filepath"
	"regexp"
	"strings"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/profile"
)

// SystemFrame is the function name of the pseudo frame that stands, in an
// app-only profile, for a run of frames outside the application's images.
const SystemFrame = "[system]"

// AppFilter keeps only the frames of an application's own images in a
// profile (--app-only), as Instruments' "hide system libraries" does:
// each run of other frames (system libraries, the dyld shared cache,
// addresses in no image) becomes one SystemFrame. It is applied at export,
// so the window itself keeps every frame.
type AppFilter struct {
	// Images, when set, names more images of the application by a
	// regular expression over their paths (--app-images).
	Images *regexp.Regexp
}

// IsApp reports whether img, in the process with main executable exe,
// is one of the application's images: the main executable, an image
// inside the executable's app bundle (X.app/...) when it is in one, or an
// image whose path f.Images matches. A nil img (no image) is not.
func (f *AppFilter) IsApp(exe string, img *images.Image) bool {
	if img == nil {
		return false
	}
	if exe != "" && img.Path == exe {
		return true
	}
	if b := bundleRoot(exe); b != "" && strings.HasPrefix(img.Path, b) {
		return true
	}
	return f.Images != nil && f.Images.MatchString(img.Path)
}

// bundleRoot returns "/path/X.app/" when exe is inside an app bundle, or
// "".
func bundleRoot(exe string) string {
	for d := filepath.Dir(exe); d != "/" && d != "." && d != ""; d = filepath.Dir(d) {
		if strings.HasSuffix(d, ".app") {
			return d + "/"
		}
	}
	return ""
}

// Collapse filters one stack's locations, innermost first, in place:
// isApp tells which to keep, and each run of others becomes the one
// location system. It returns the filtered slice (sharing ids' array).
func Collapse[T comparable](ids []T, isApp func(T) bool, system T) []T {
	out := ids[:0]
	for _, id := range ids {
		if isApp(id) {
			out = append(out, id)
		} else if len(out) == 0 || out[len(out)-1] != system {
			out = append(out, system)
		}
	}
	return out
}

// executable returns the main executable of process index proc of w, or
// "".
func executable(w *profile.Window, proc int) string {
	if proc < 0 || proc >= len(w.Processes) {
		return ""
	}
	return w.Processes[proc].Executable
}
