package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// builds compiles the benchmark package twice into dir, as it is and with
// the slowdown, and returns the test binaries: base first.
func builds(dir string) (base, slow string, err error) {
	src, err := filepath.Abs(filepath.Join("bench", "diffstat", "testdata", "work"))
	if err != nil {
		return "", "", err
	}
	base, slow = filepath.Join(dir, "base.test"), filepath.Join(dir, "slow.test")
	for _, b := range []struct{ out, ldflags string }{
		{base, ""},
		{slow, "-X=example.com/work.slowdown=1.3"},
	} {
		cmd := exec.Command("go", "test", "-c", "-o", b.out, "-ldflags="+b.ldflags, ".")
		cmd.Dir = src
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("go test -c in %s (run from the repository root): %v\n%s", src, err, out)
		}
	}
	return base, slow, nil
}

// collect adds n profiles of each build to pool, alternating base and slow
// so that both see the same load, jobs runs at a time. Each run leaves
// NAME.pprof and NAME.txt, its `go test -bench` output, which the analysis
// reads ns/op from as benchstat does.
func collect(pool, bin string, slowBin string, n, jobs int, benchtime string) error {
	if err := os.MkdirAll(pool, 0o755); err != nil {
		return err
	}
	type run struct{ bin, name string }
	var runs []run
	next := map[string]int{"base": nextIndex(pool, "base"), "slow": nextIndex(pool, "slow")}
	for range n {
		for _, side := range []struct{ name, bin string }{{"base", bin}, {"slow", slowBin}} {
			runs = append(runs, run{side.bin, fmt.Sprintf("%s-%04d", side.name, next[side.name])})
			next[side.name]++
		}
	}
	work := make(chan run)
	errs := make(chan error, len(runs))
	var wg sync.WaitGroup
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range work {
				prof := filepath.Join(pool, r.name+".pprof")
				cmd := exec.Command(r.bin, "-test.run", "^$", "-test.bench", ".", "-test.benchtime", benchtime, "-test.cpuprofile", prof+".tmp")
				cmd.Dir = pool
				out, err := cmd.CombinedOutput()
				if err == nil {
					err = os.WriteFile(filepath.Join(pool, r.name+".txt"), out, 0o644)
				}
				if err == nil {
					err = os.Rename(prof+".tmp", prof)
				}
				if err != nil {
					errs <- fmt.Errorf("%s: %v\n%s", r.name, err, out)
				}
			}
		}()
	}
	for _, r := range runs {
		work <- r
	}
	close(work)
	wg.Wait()
	close(errs)
	return <-errs
}

// nextIndex is one past the highest index of side's profiles in pool, so
// that a second collection adds to the first.
func nextIndex(pool, side string) int {
	m, _ := filepath.Glob(filepath.Join(pool, side+"-*.pprof"))
	next := 0
	for _, p := range m {
		var i int
		if _, err := fmt.Sscanf(filepath.Base(p), side+"-%04d.pprof", &i); err == nil && i >= next {
			next = i + 1
		}
	}
	return next
}
