package exporter_test

import (
	"fmt"

	"github.com/macprof/macprof/exporter"
)

// The record command picks each output's format from its name, and checks
// that it can write the file before it starts sampling.
func ExampleFormatForPath() {
	for _, out := range []string{"cpu.pb.gz", "cpu.folded", "flame.svg", "cpu.speedscope.json", "cpu.json"} {
		f, err := exporter.FormatForPath(out)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(out, "->", f)
	}
	// Output:
	// cpu.pb.gz -> pprof
	// cpu.folded -> folded
	// flame.svg -> svg
	// cpu.speedscope.json -> speedscope
	// exporter: cannot tell the format of "cpu.json" from its name: use a name ending in .pb.gz, .pprof, .folded, .txt, .svg or .speedscope.json, or name the format (pprof, folded, svg, speedscope)
}
