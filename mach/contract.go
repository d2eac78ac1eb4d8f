package mach

import "github.com/macprof/macprof/target"

// The capabilities the sampler and the commands detect by type assertion,
// checked by the build so that none is lost silently.
var (
	_ target.Target        = (*Target)(nil)
	_ target.Snapshotter   = (*Target)(nil)
	_ target.MemoryReader  = (*Target)(nil)
	_ target.Executabler   = (*Target)(nil)
	_ target.BatchCapturer = (*Target)(nil)
)
