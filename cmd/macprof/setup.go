package main

import (
	"fmt"
	"html"
	"io"
	"os"
	"strings"

	"github.com/macprof/macprof/internal/cli"
)

// The setup command prepares this machine for profiling: on macOS it signs
// the macprof binary with the debugger entitlement; on Linux it explains
// the ptrace permissions. The plist and the texts are portable (and tested
// on every OS); running codesign is in setup_darwin.go.

func init() {
	register(command{
		name:    "setup",
		summary: "prepare this machine for profiling (macOS: sign macprof with the debugger entitlement)",
		run:     runSetup,
	})
}

// debuggerEntitlement lets a process get the task port of another one
// (task_for_pid), subject to the target's own signature.
const debuggerEntitlement = "com.apple.security.cs.debugger"

// entitlementsPlist returns an entitlements property list granting each
// key the value true.
func entitlementsPlist(keys ...string) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">` + "\n")
	b.WriteString(`<plist version="1.0">` + "\n<dict>\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "\t<key>%s</key>\n\t<true/>\n", html.EscapeString(k))
	}
	b.WriteString("</dict>\n</plist>\n")
	return []byte(b.String())
}

// codesignArgs returns the codesign arguments that sign binary ad hoc with
// the entitlements in plist and the hardened runtime (--options runtime),
// as samply setup signs samply (samply src/mac/codesign_setup.rs): the
// entitlement is what grants the task ports, and the hardened runtime
// keeps the signed binary from loading unsigned code into a process that
// holds them.
func codesignArgs(plist, binary string) []string {
	return []string{"--force", "--options", "runtime", "--sign", "-", "--entitlements", plist, binary}
}

const setupSynopsis = "macprof setup [--binary PATH] [--plist PATH] [--dry-run]"

const setupDescription = `
Prepare this machine for profiling.

On macOS, setup writes an entitlements file granting
com.apple.security.cs.debugger and signs the macprof binary ad hoc with it:

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
	binary := fs.String("binary", "", "the macprof binary to sign, at `PATH` (default: the running one)")
	plist := fs.String("plist", "", "`PATH` to write the entitlements plist to (default: a temporary file, removed afterwards)")
	dryRun := fs.Bool("dry-run", false, "print the plist and the codesign command without running it")
	if status, ok := fs.ParseArgs(args); !ok {
		return status
	}
	if fs.NArg() > 0 {
		return fs.UsageError("unexpected arguments %q", fs.Args())
	}
	if *binary == "" {
		exe, err := os.Executable()
		if err != nil {
			fmt.Fprintf(stderr, "macprof setup: cannot find the macprof binary: %v (use --binary)\n", err)
			return 1
		}
		*binary = exe
	}
	return setupPlatform(setupRequest{binary: *binary, plist: *plist, dryRun: *dryRun}, stdout, stderr)
}

type setupRequest struct {
	binary, plist string
	dryRun        bool
}

// linuxPtraceAdvice explains what ptrace needs, given the content of
// /proc/sys/kernel/yama/ptrace_scope ("" when absent) and whether macprof
// runs as root.
func linuxPtraceAdvice(scope string, root bool) string {
	var b strings.Builder
	b.WriteString("macprof on Linux profiles through ptrace; nothing needs signing.\n\n")
	switch strings.TrimSpace(scope) {
	case "":
		b.WriteString("The Yama module is not active (no /proc/sys/kernel/yama/ptrace_scope): a process may trace any process of its own user.\n")
	case "0":
		b.WriteString("kernel.yama.ptrace_scope is 0: macprof may attach to any process of your user.\n")
	case "1":
		b.WriteString("kernel.yama.ptrace_scope is 1: only a parent may trace its children. Without privileges macprof can profile\n" +
			"what it launches (macprof record -- COMMAND) but not a running PID. To attach by PID, either\n" +
			"  - run macprof as root (sudo), or\n" +
			"  - give it CAP_SYS_PTRACE: sudo setcap cap_sys_ptrace+ep $(command -v macprof), or\n" +
			"  - allow it for everyone: sudo sysctl kernel.yama.ptrace_scope=0\n")
	case "2":
		b.WriteString("kernel.yama.ptrace_scope is 2: only processes with CAP_SYS_PTRACE may trace. Run macprof as root, or\n" +
			"  sudo setcap cap_sys_ptrace+ep $(command -v macprof)\n")
	case "3":
		b.WriteString("kernel.yama.ptrace_scope is 3: ptrace is disabled on this machine until reboot; macprof cannot profile here.\n")
	default:
		fmt.Fprintf(&b, "kernel.yama.ptrace_scope is %q, a value macprof does not know.\n", strings.TrimSpace(scope))
	}
	if root {
		b.WriteString("\nmacprof runs as root: it may trace any process (other than one already traced by a debugger).\n")
	}
	b.WriteString("\nA process has one tracer at a time: stop gdb, strace or another profiler attached to the target first.\n" +
		"In containers, ptrace may also need --cap-add SYS_PTRACE and a seccomp profile that allows it.\n")
	return b.String()
}
