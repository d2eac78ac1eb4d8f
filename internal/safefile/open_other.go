//go:build !linux

package safefile

import (
	"os"
)

// open checks with a stat that path is a regular file, opens it without
// blocking (a FIFO swapped in meanwhile opens at once) and checks that the
// opened file is the one it checked.
func open(path string, noFollow bool) (*os.File, error) {
	stat := os.Stat
	flags := os.O_RDONLY | NonBlock | noCTTY
	if noFollow {
		stat = os.Lstat
		flags |= NoFollow
	}
	st, err := stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, notRegular(path, st.Mode())
	}
	f, err := os.OpenFile(path, flags, 0)
	if err != nil {
		return nil, err
	}
	fst, err := f.Stat()
	if err != nil || !os.SameFile(st, fst) {
		f.Close()
		if err == nil {
			err = notRegular(path, fst.Mode())
		}
		return nil, err
	}
	return f, nil
}
