//go:build linux

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// symbolizePipeBytes is the capacity growPipe asks for: Linux's default
// limit for an unprivileged process (/proc/sys/fs/pipe-max-size).
const symbolizePipeBytes = 1 << 20

// growPipe lets the pipe f reads from or writes to hold
// symbolizePipeBytes rather than 64 KiB: read from, so that a writer
// faster than macprof (a program or a file piped in) is ahead by that
// much, and symbolize.Run answers its addresses in batches of that size
// rather than of 64 KiB; written to, so that its writes do not wait for
// the reader. It leaves f as it is where f is no pipe or the kernel
// refuses (the size is past the limit).
func growPipe(f *os.File) {
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		unix.FcntlInt(fd, unix.F_SETPIPE_SZ, symbolizePipeBytes) // an error leaves 64 KiB
	})
}
