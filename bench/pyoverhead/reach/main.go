// Command reach prints the share of a pprof profile's samples whose stack
// reaches a program's entry (main, or glibc's __libc_start_call_main, which
// python3's main tail-calls out of), weighted by the first sample value.
package main

import (
	"fmt"
	"os"

	pprof "github.com/google/pprof/profile"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: reach PROFILE.pb.gz")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Close()
	p, err := pprof.Parse(f)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var all, reached int64
	for _, s := range p.Sample {
		v := s.Value[0]
		all += v
		if reaches(s) {
			reached += v
		}
	}
	if all == 0 {
		fmt.Fprintln(os.Stderr, "no samples")
		os.Exit(1)
	}
	fmt.Printf("macprof's last profile: %.1f%% of %d samples reach main\n", 100*float64(reached)/float64(all), all)
}

// reaches reports whether the sample's stack holds a program's entry.
func reaches(s *pprof.Sample) bool {
	for _, loc := range s.Location {
		for _, l := range loc.Line {
			if l.Function == nil {
				continue
			}
			switch l.Function.Name {
			case "main", "__libc_start_call_main", "Py_BytesMain":
				return true
			}
		}
	}
	return false
}
