package images

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/macprof/macprof/internal/safefile"
)

// ErrNotMapped is the error of a file at an image's path that is not the
// file the target maps: the target (or anyone who can write there) has
// put another file at the path since it mapped it.
var ErrNotMapped = errors.New("not the file the target maps")

// Open opens the object file behind im, for reading on the target's
// behalf: through MapFile when the kernel lets it be opened (the target
// lives, and the profiler may follow it), else at File (then Path, for a
// target whose /proc/PID/root is gone), a regular file only. Either must
// be the mapped one: its device and inode (when the memory map gave them)
// and its build ID (when known) must be im's, so that a range the target
// has mapped another file at since (after an exec) is not taken for it.
// Anything else is refused: a target that swaps its path for a link to a
// file it cannot read must not have the profiler read it for it.
func (im *Image) Open() (*os.File, error) {
	if im.MapFile != "" {
		f, err := safefile.Open(im.MapFile)
		if err == nil {
			if err = im.check(f); err == nil {
				return f, nil
			}
			f.Close()
		} else if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) && !errors.Is(err, syscall.ESRCH) {
			return nil, err
		}
		// Gone with the target or its mapping (a zombie's map_files
		// answers ESRCH until it is reaped), or not ours to follow (it
		// needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE): the path,
		// checked.
	}
	paths := []string{im.File()}
	if im.OpenPath != "" && im.OpenPath != im.Path {
		paths = append(paths, im.Path)
	}
	var err error
	for _, p := range paths {
		var f *os.File
		if f, err = safefile.Open(p); err != nil {
			continue
		}
		if err = im.check(f); err != nil {
			f.Close()
			return nil, err
		}
		return f, nil
	}
	return nil, err
}

// check verifies that f, opened at a path, is the file im maps.
func (im *Image) check(f *os.File) error {
	if im.Inode != 0 {
		dev, ino, ok := fileID(f)
		if !ok || dev != im.Dev || ino != im.Inode {
			return fmt.Errorf("%s: device %#x inode %d, mapped %#x inode %d: %w", f.Name(), dev, ino, im.Dev, im.Inode, ErrNotMapped)
		}
	}
	if im.BuildID != "" && im.Format == FormatELF {
		id, err := fileBuildID(f)
		if err != nil {
			return fmt.Errorf("%s: %w", f.Name(), err)
		}
		if id != im.BuildID {
			return fmt.Errorf("%s: build ID %q, mapped %q: %w", f.Name(), id, im.BuildID, ErrNotMapped)
		}
	}
	return nil
}

// MappedELFBuildID returns the GNU build ID of the ELF file im maps, opened
// as Open does (im's own BuildID, if any, is not consulted).
func MappedELFBuildID(im *Image) (string, error) {
	c := *im
	c.BuildID = ""
	file, err := c.Open()
	if err != nil {
		return "", fmt.Errorf("build ID of %s: %w", im.Path, err)
	}
	defer file.Close()
	id, err := fileBuildID(file)
	if err != nil {
		return "", fmt.Errorf("build ID of %s: %w", im.Path, err)
	}
	return id, nil
}
