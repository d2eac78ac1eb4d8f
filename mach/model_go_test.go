package mach_test

import (
	"testing"
	"time"

	"github.com/macprof/macprof/internal/fixture"
	"github.com/macprof/macprof/mach/machtest"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

const goProgram = `package main

var sink int

//go:noinline
func hot(n int) int {
	for i := 0; i < n; i++ {
		sink += i
	}
	return sink
}

//go:noinline
func middle(n int) int { return hot(n) + 1 }

func main() { middle(1000) }
`

// TestModelGoBinary samples a GOOS=darwin Go program laid out in the
// model's task memory (its Mach-O segments as dyld maps them, slid), with
// its goroutine's frames on arm64 and amd64: the pprof names the Go
// functions from the image in memory.
func TestModelGoBinary(t *testing.T) {
	for _, goarch := range []string{"arm64", "amd64"} {
		t.Run(goarch, func(t *testing.T) {
			bin := fixture.GoDarwin(t, goarch, goProgram)
			k := machtest.New()
			t.Cleanup(func() { k.Check(t) })
			arch := unwind.ArchARM64
			if goarch == "amd64" {
				k.GOARCHValue, k.VABits = "amd64", 0
				arch = unwind.ArchAMD64
			}
			const slide = 0x8000
			task := k.NewTask(t, "/Users/dev/goprog", []fixture.TaskImage{{File: bin, Path: "/Users/dev/goprog", Slide: slide}})
			c := chain{"main.hot", "main.middle", "main.main", "runtime.main"}
			th := task.AddThread("main")
			th.Busy = true
			th.SetStacks(arch, stackTop, stackSize, &machtest.Stack{PCs: c.pcs(t, fixture.MachOFunctions(t, bin), slide), LeafFrame: true})
			w := &world{k: k, task: task, arch: arch, chains: [][]chain{{c}}}
			tg := w.attach(t, target.Options{Continuous: true})
			checkStacks(t, w, stacks(t, record(t, tg, 150*time.Millisecond)), 1)
		})
	}
}
