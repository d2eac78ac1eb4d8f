package images

import "fmt"

// FormatError is a malformed Mach-O or universal file: a value that
// contradicts the format, another field or the file's size. It plays the
// part of debug/macho's FormatError, so that a caller tells a bad file
// from a failed read (errors.As) and a test checks where the file is bad.
type FormatError struct {
	// Off is the byte offset, in the image or the universal file, of the
	// structure holding the bad value: the header, a load command, a
	// fat_arch entry, or the __LINKEDIT data the value describes.
	Off uint64
	// Msg says what is wrong, naming the field and its value.
	Msg string
	// Val is the bad value.
	Val any
}

func (e *FormatError) Error() string { return fmt.Sprintf("macho: %s, at offset %#x", e.Msg, e.Off) }

// formatError returns a FormatError at off for the bad value val.
func formatError(off uint64, val any, format string, args ...any) *FormatError {
	return &FormatError{Off: off, Msg: fmt.Sprintf(format, args...), Val: val}
}
