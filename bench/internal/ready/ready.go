// Package ready starts the bench tools' workloads: each test program prints
// "ready" once it is set up, and a measurement starts only then.
package ready

import (
	"bufio"
	"fmt"
	"os/exec"
)

// Start starts bin with args and waits for its "ready" line; the rest of its
// output is read and dropped, so that it never blocks on a full pipe.
func Start(bin string, args ...string) (*exec.Cmd, error) {
	cmd := exec.Command(bin, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if sc.Text() == "ready" {
			go func() {
				for sc.Scan() {
				}
			}()
			return cmd, nil
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	return nil, fmt.Errorf("%s exited before it was ready", bin)
}
