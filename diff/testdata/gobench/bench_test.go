// Package gobench is a tiny benchmark whose `go test -cpuprofile` output
// macprof diff's tests compare: GOBENCH_REGRESS=1 makes slowPart eight
// times as slow.
package gobench

import (
	"os"
	"testing"
)

var sink uint64

//go:noinline
func spin(n int) uint64 {
	x := uint64(n)
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

//go:noinline
func fastPart(n int) uint64 { return spin(n) }

//go:noinline
func slowPart(n int) uint64 {
	x := uint64(0)
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

func BenchmarkWork(b *testing.B) {
	slow := 100000
	if os.Getenv("GOBENCH_REGRESS") != "" {
		slow *= 8
	}
	for b.Loop() {
		sink += fastPart(100000) + slowPart(slow)
	}
}
