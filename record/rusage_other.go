//go:build !unix

package record

import "time"

// childrenCPU is unknown here.
func childrenCPU() (time.Duration, bool) { return 0, false }

// selfCPU is unknown here.
func selfCPU() (time.Duration, bool) { return 0, false }
