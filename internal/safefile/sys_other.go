//go:build !unix

package safefile

import (
	"errors"
	"io/fs"
)

// Open flags that the callers of this package add to their own opens: none
// here.
const (
	NoFollow = 0
	NonBlock = 0
	noCTTY   = 0
)

// ownerOf reports no owner: this OS has no Unix owners.
func ownerOf(fs.FileInfo) (uid, gid int, ok bool) { return 0, 0, false }

// errNoReader never matches here: there are no FIFOs to open.
var errNoReader = errors.New("no reader")
