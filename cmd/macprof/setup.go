package main

import (
	"fmt"
	"io"
	"os"

	"github.com/macprof/macprof/internal/cli"
)

// The setup command prepares this machine for profiling: on macOS it signs
// the macprof binary with the debugger entitlement (setup_darwin.go); on
// Linux it explains the ptrace permissions (internal/permissions).

func init() {
	register(command{
		name:    "setup",
		summary: "prepare this machine for profiling (macOS: sign macprof with the debugger entitlement)",
		run:     runSetup,
	})
}

const setupSynopsis = "macprof setup [--binary PATH] [--plist PATH] [--dry-run]"

const setupDescription = `
Prepare this machine for profiling.

On macOS, setup writes an entitlements file granting
com.apple.security.cs.debugger and signs the macprof binary, and the
macprof-agent beside it, ad hoc with it:

    codesign --force --options runtime --sign - --entitlements PLIST MACPROF

A macprof signed this way may read the task port of processes that allow
debugging (signed with get-task-allow, as Xcode debug builds are, or not
hardened) without sudo; macOS may first ask an administrator to allow
developer tools (DevToolsSecurity -enable). Run as root (sudo), macprof can
profile every other process too, except:
  - Apple's own binaries (/System, /usr, /bin, /sbin, Apple apps), which
    System Integrity Protection guards against every process, root included;
  - apps signed with the hardened runtime and without get-task-allow (most
    notarized and App Store apps): profile a debug build, or a copy re-signed
    with get-task-allow.
Re-run setup after replacing the macprof binary (an upgrade drops the
signature).

On Linux, setup changes nothing: it explains what ptrace needs (the Yama
ptrace_scope setting, CAP_SYS_PTRACE, or root) and shows this machine's
setting.

Examples:
    macprof setup                  # sign the running macprof (macOS)
    sudo macprof setup             # when macprof is installed in a root-owned directory
    macprof setup --dry-run        # show the plist and the codesign command only
    macprof setup --binary ./macprof --plist ./macprof.entitlements
`

func runSetup(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("setup", setupSynopsis, setupDescription, stderr)
	binary := fs.String("binary", "", "the binary to sign, at `PATH` (default: the running macprof and the macprof-agent beside it)")
	plist := fs.String("plist", "", "`PATH` to write the entitlements plist to (default: a temporary file, removed afterwards)")
	dryRun := fs.Bool("dry-run", false, "print the plist and the codesign command without running it")
	if status, ok := fs.ParseArgs(args); !ok {
		return status
	}
	if fs.NArg() > 0 {
		return fs.UsageError("unexpected arguments %q", fs.Args())
	}
	r := setupRequest{binaries: []string{*binary}, plist: *plist, dryRun: *dryRun}
	if *binary == "" {
		exe, err := os.Executable()
		if err != nil {
			fmt.Fprintf(stderr, "macprof setup: cannot find the macprof binary: %v (use --binary)\n", err)
			return 1
		}
		r.binaries = []string{exe}
		// The agent attaches as macprof does, so it needs the same signature.
		if agent, err := findAgent(func() (string, error) { return exe, nil }, nil); err == nil {
			r.binaries = append(r.binaries, agent)
		}
	}
	return setupPlatform(r, stdout, stderr)
}

type setupRequest struct {
	binaries []string // to sign
	plist    string
	dryRun   bool
}
