package ptrace

import "github.com/macprof/macprof/target"

// The capabilities the sampler and the commands detect by type assertion:
// a Target that lost one would silently lose its fast path, so the build
// checks them.
var (
	_ target.Target               = (*Target)(nil)
	_ target.Snapshotter          = (*Target)(nil)
	_ target.CopyWalker           = (*Target)(nil)
	_ target.MemoryReader         = (*Target)(nil)
	_ target.BatchCapturer        = (*Target)(nil)
	_ target.SampleDrainer        = (*Target)(nil)
	_ target.ThreadWatcher        = (*Target)(nil)
	_ target.KernelSampleReporter = (*Target)(nil)
	_ target.Executabler          = (*Target)(nil)
	_ target.ExitReporter         = (*Target)(nil)
	_ target.ProcessCPUReporter   = (*Target)(nil)
	_ target.SampleKeeper         = (*Target)(nil)
)
