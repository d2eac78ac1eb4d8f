//go:build !unix

package upload

import (
	"fmt"
	"os"
)

// openSpoolDir creates dir if needed and opens it: this OS has no Unix
// owner, mode or O_NOFOLLOW walk to check it with.
func openSpoolDir(dir string) (*os.Root, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("upload: spool directory: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("upload: spool directory: %w", err)
	}
	return root, nil
}
