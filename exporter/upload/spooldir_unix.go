//go:build unix

package upload

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// openSpoolDir opens dir, a queue's spool directory, as the root of every
// later file operation of the queue. No component of the path may be a
// symbolic link: each is opened with O_NOFOLLOW from the directory before
// it, so no link planted on the way sends the agent's writes and removals
// elsewhere. dir and its parent (the agent's --spool-dir) must both be the
// agent's user's, with no group or other permission bits: items from a
// directory others can write would be sent with the agent's credentials,
// and /etc must not get an otlp folder. A missing dir is created (0700) in
// its checked parent; the parent's missing components are created (0700)
// only in directories no one but root and the agent's user can write.
func openSpoolDir(dir string) (*os.Root, error) {
	clean := filepath.Clean(dir)
	parent, base := filepath.Dir(clean), filepath.Base(clean)
	if base == "/" || base == "." || base == ".." {
		return nil, fmt.Errorf("upload: spool directory %q: name a directory", dir)
	}
	pfd, err := walkNoFollow(parent)
	if err != nil {
		return nil, err
	}
	defer unix.Close(pfd)
	if err := checkPrivate(pfd, parent); err != nil {
		return nil, err
	}
	fd, err := openDirAt(pfd, base)
	if errors.Is(err, unix.ENOENT) {
		if err = unix.Mkdirat(pfd, base, 0o700); err == nil || errors.Is(err, unix.EEXIST) {
			fd, err = openDirAt(pfd, base)
		}
	}
	if err != nil {
		return nil, describe(clean, err)
	}
	defer unix.Close(fd)
	if err := checkPrivate(fd, clean); err != nil {
		return nil, err
	}
	// os.Root has the portable file operations; it must be the very
	// directory just checked.
	root, err := os.OpenRoot(clean)
	if err != nil {
		return nil, fmt.Errorf("upload: spool directory: %w", err)
	}
	var want unix.Stat_t
	st, err := root.Stat(".")
	if err == nil {
		err = unix.Fstat(fd, &want)
	}
	if err == nil {
		if sys, ok := st.Sys().(*syscall.Stat_t); !ok || uint64(sys.Dev) != uint64(want.Dev) || uint64(sys.Ino) != uint64(want.Ino) {
			err = errors.New("it was replaced while being opened")
		}
	}
	if err != nil {
		root.Close()
		return nil, fmt.Errorf("upload: spool directory %s: %w", clean, err)
	}
	return root, nil
}

// walkNoFollow opens the directory path one component at a time, none
// followed if it is a symbolic link, creating a missing one (0700) only in
// a directory no one but root and the agent's user can write.
func walkNoFollow(path string) (int, error) {
	at := "."
	if filepath.IsAbs(path) {
		at = "/"
	}
	fd, err := unix.Open(at, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, describe(at, err)
	}
	for _, name := range strings.Split(path, "/") {
		if name == "" || name == "." {
			continue
		}
		next := filepath.Join(at, name)
		nfd, err := openDirAt(fd, name)
		if errors.Is(err, unix.ENOENT) {
			if err = checkNoOthers(fd, at, next); err == nil {
				if err = unix.Mkdirat(fd, name, 0o700); err == nil || errors.Is(err, unix.EEXIST) {
					nfd, err = openDirAt(fd, name)
				}
			}
		}
		unix.Close(fd)
		if err != nil {
			return -1, describe(next, err)
		}
		fd, at = nfd, next
	}
	return fd, nil
}

// openDirAt opens the directory name in the directory dirfd without
// following a link.
func openDirAt(dirfd int, name string) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// describe says why path could not be opened as a directory: a link gets
// its real path as a hint.
func describe(path string, err error) error {
	var pe *errPrivate
	if errors.As(err, &pe) {
		return err
	}
	if st, lerr := os.Lstat(path); lerr == nil && st.Mode()&os.ModeSymlink != 0 {
		hint := ""
		if real, err := filepath.EvalSymlinks(path); err == nil {
			hint = " (" + real + ")"
		}
		return &errPrivate{fmt.Sprintf("upload: spool directory: %s is a symbolic link: no link is followed on the way to the spool; give the real path%s", path, hint)}
	}
	return fmt.Errorf("upload: spool directory: %s: %w", path, err)
}

// errPrivate is a refusal of a spool path that describe passes on as it is.
type errPrivate struct{ msg string }

func (e *errPrivate) Error() string { return e.msg }

// checkPrivate refuses the spool directory fd (at path) unless it is the
// agent's user's, with no group or other permission bits.
func checkPrivate(fd int, path string) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("upload: spool directory %s: %w", path, err)
	}
	if uid := os.Geteuid(); int(st.Uid) != uid {
		return &errPrivate{fmt.Sprintf("upload: spool directory %s is owned by uid %d, not by the agent's user (uid %d): use a directory of the agent's own", path, st.Uid, uid)}
	}
	if perm := st.Mode & 0o777; perm&0o077 != 0 {
		return &errPrivate{fmt.Sprintf("upload: spool directory %s has mode %#o: others could read its items or plant their own; the spool needs a directory of its own with mode 0700 (mkdir -m 700 a new one)", path, perm)}
	}
	return nil
}

// checkNoOthers refuses to create next in the directory fd (at path) when
// someone but root and the agent's user could write there.
func checkNoOthers(fd int, path, next string) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if uid := st.Uid; (uid != 0 && int(uid) != os.Geteuid()) || st.Mode&0o022 != 0 {
		return &errPrivate{fmt.Sprintf("upload: spool directory: will not create %s in %s (owner uid %d, mode %#o), which others can write: create it yourself, mode 0700", next, path, st.Uid, st.Mode&0o7777)}
	}
	return nil
}
