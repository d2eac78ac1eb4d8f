package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// outputWriteTimeout bounds a write to a FIFO or device output whose
// reader does not read, so that a recording still ends.
const outputWriteTimeout = 10 * time.Second

// WriteOutput writes data to the output path a user named. A new or regular
// file is replaced by a new file renamed over it, so that nothing planted
// at the path meanwhile (a link to a victim's file, a FIFO) is followed or
// opened; a link, FIFO or device is written to as such only in a directory
// no one but macprof's user and root can write (where only they could have
// put it), opened without blocking, the write bounded in time.
func WriteOutput(path string, data []byte) error {
	st, err := os.Lstat(path)
	if err == nil && !st.Mode().IsRegular() && trustedDir(filepath.Dir(path)) {
		return writeSpecial(path, data)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return Replace(path, data, 0o644)
}

// CheckOutput refuses, before a recording, an output that WriteOutput would
// replace rather than write to: a link, FIFO or device in a directory
// others can write.
func CheckOutput(path string) error {
	st, err := os.Lstat(path)
	if err != nil || st.Mode().IsRegular() || trustedDir(filepath.Dir(path)) {
		return nil
	}
	return fmt.Errorf("output %s is a %s in %s, a directory other users can write: it would be replaced, not followed; name the file it stands for",
		path, kindOf(st.Mode()), filepath.Dir(path))
}

// Replace writes data to a new file in path's directory and renames it over
// path: the rename replaces whatever is at path (a link is not followed).
// The new file is owned by macprof's user and gets perm, or the permission
// bits of a regular file of that user's already there; a file of another
// user keeps neither its owner nor its mode (a 0666 file planted by
// someone else would otherwise make root's profile theirs to rewrite).
func Replace(path string, data []byte, perm fs.FileMode) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if st, err := os.Lstat(path); err == nil && st.Mode().IsRegular() {
		if uid, _, ok := ownerOf(st); ok && uid == os.Geteuid() {
			perm = st.Mode().Perm()
		}
	}
	_, werr := f.Write(data)
	err = errors.Join(werr, f.Chmod(perm), f.Close())
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// writeSpecial writes data to what path names (following a link): a FIFO
// with no reader fails at once, and a reader that stops reading ends the
// write after outputWriteTimeout.
func writeSpecial(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|NonBlock|noCTTY, 0)
	if errors.Is(err, errNoReader) {
		return fmt.Errorf("output %s is a FIFO that no process reads", path)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	switch m := st.Mode(); {
	case m.IsRegular():
		if err := f.Truncate(0); err != nil {
			return err
		}
	case m&fs.ModeNamedPipe != 0, m&fs.ModeCharDevice != 0:
		f.SetWriteDeadline(time.Now().Add(outputWriteTimeout)) // not every device can have one
	default:
		return fmt.Errorf("output %s is a %s", path, kindOf(m))
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Close()
}

// CanWrite opens path for writing without truncating it or waiting for a
// FIFO's reader, and closes it.
func CanWrite(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|NonBlock|noCTTY, 0)
	if err != nil {
		return err
	}
	return f.Close()
}

// trustedDir reports whether only macprof's user and root can add or
// replace entries in dir.
func trustedDir(dir string) bool {
	st, err := os.Stat(dir)
	if err != nil {
		return false
	}
	owner, _, ok := ownerOf(st)
	return ok && (owner == 0 || owner == os.Geteuid()) && st.Mode().Perm()&0o022 == 0
}
