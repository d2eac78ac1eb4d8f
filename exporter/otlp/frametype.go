package otlp

import (
	"sync"

	"github.com/macprof/macprof/images"
)

// Frame types (profile.frame.type) macprof can tell apart: the semantic
// conventions ask for the most precise one that applies.
const (
	// FrameTypeNative is the type of machine code of no known language.
	FrameTypeNative = "native"
	// FrameTypeGo is the type of a Go program's code.
	FrameTypeGo = "go"
)

// AttrBuildIDGo holds a Go program's build ID on its mapping.
const AttrBuildIDGo = "process.executable.build_id.go"

// goImageKey identifies an image's file across windows.
type goImageKey struct {
	path, buildID string
	dev, inode    uint64
}

// goImages caches what images.GoImage read of each file, so that each is
// read once per agent rather than once per window; maxGoImages bounds it.
var goImages struct {
	sync.Mutex
	m map[goImageKey]images.GoInfo
}

const maxGoImages = 4096

// goImage returns whether img is a Go program and its Go build ID; an
// image whose file cannot be read is native, with no build ID.
func goImage(img *images.Image) images.GoInfo {
	k := goImageKey{img.File(), img.BuildID, img.Dev, img.Inode}
	goImages.Lock()
	info, ok := goImages.m[k]
	goImages.Unlock()
	if ok {
		return info
	}
	info, _ = images.GoImage(img)
	goImages.Lock()
	defer goImages.Unlock()
	if goImages.m == nil || len(goImages.m) >= maxGoImages {
		goImages.m = make(map[goImageKey]images.GoInfo)
	}
	goImages.m[k] = info
	return info
}
