//go:build !unix

package sampler

import "time"

// selfCPU is not measured on this OS.
func selfCPU() time.Duration { return 0 }
