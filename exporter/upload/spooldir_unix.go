//go:build unix

package upload

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// checkPrivateDir refuses a spool directory that is not the agent's user's
// own with mode 0700.
func checkPrivateDir(dir string, st fs.FileInfo) error {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("upload: spool directory %s: cannot tell its owner", dir)
	}
	if uid := os.Geteuid(); int(sys.Uid) != uid {
		return fmt.Errorf("upload: spool directory %s is owned by uid %d, not by the agent's user (uid %d): use a directory of the agent's own", dir, sys.Uid, uid)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("upload: spool directory %s has mode %#o: others could plant items or links there; make it 0700 (chmod 700 %s)", dir, perm, dir)
	}
	return nil
}
