//go:build !unix

package symbolize

import "io"

// more reports whether r has more to read at once: not known here, so
// each read is a batch.
func more(r io.Reader) bool { return false }
