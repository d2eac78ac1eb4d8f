//go:build darwin

package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/macprof/macprof/internal/permissions"
)

// setupPlatform writes the entitlements plist and runs codesign.
func setupPlatform(r setupRequest, stdout, stderr io.Writer) int {
	plist := permissions.EntitlementsPlist(permissions.DebuggerEntitlement)
	path := r.plist
	if r.dryRun {
		if path == "" {
			path = "macprof.entitlements"
		}
		fmt.Fprintf(stdout, "Would write %s:\n%s\n", path, plist)
		for _, binary := range r.binaries {
			fmt.Fprintf(stdout, "Would run: codesign %s\n", strings.Join(permissions.CodesignArgs(path, binary), " "))
		}
		return 0
	}
	if path == "" {
		dir, err := os.MkdirTemp("", "macprof-setup")
		if err != nil {
			fmt.Fprintf(stderr, "macprof setup: %v\n", err)
			return 1
		}
		defer os.RemoveAll(dir)
		path = filepath.Join(dir, "macprof.entitlements")
	}
	if err := os.WriteFile(path, plist, 0o644); err != nil {
		fmt.Fprintf(stderr, "macprof setup: write %s: %v\n", path, err)
		return 1
	}
	codesign, err := exec.LookPath("codesign")
	if err != nil {
		fmt.Fprintf(stderr, "macprof setup: codesign not found (it ships with macOS in /usr/bin): %v\n", err)
		return 1
	}
	for _, binary := range r.binaries {
		cmd := exec.Command(codesign, permissions.CodesignArgs(path, binary)...)
		cmd.Stdout, cmd.Stderr = stdout, stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(stderr, "macprof setup: codesign %s: %v\n", binary, err)
			if os.Geteuid() != 0 {
				fmt.Fprintln(stderr, "If the binary is not writable by you, run: sudo macprof setup")
			}
			return 1
		}
		fmt.Fprintf(stdout, "Signed %s with %s.\n", binary, permissions.DebuggerEntitlement)
	}
	fmt.Fprintln(stdout)
	fmt.Fprint(stdout, darwinAfterSetup)
	return 0
}

const darwinAfterSetup = `You can now profile, without sudo, your own programs that allow debugging
(signed with get-task-allow, like Xcode debug builds, or not hardened).
macOS may ask an administrator to allow developer tools the first time.

Still out of reach, even with sudo:
  - Apple's binaries (/System, /usr, /bin, /sbin, Apple apps): protected by
    System Integrity Protection;
  - hardened-runtime apps without get-task-allow (most notarized and App
    Store apps): profile a debug build, or a copy re-signed with
    get-task-allow.
Run setup again after upgrading macprof.
`
