// Package permissions says what a profiler needs from the OS to read
// other processes: the macOS debugger entitlement (its plist and the
// codesign call that grants it) and Linux's ptrace rules, as text for
// macprof setup.
package permissions

import (
	"fmt"
	"strings"
)

// DebuggerEntitlement lets a process get the task port of another one
// (task_for_pid), subject to the target's own signature.
const DebuggerEntitlement = "com.apple.security.cs.debugger"

// EntitlementsPlist returns an entitlements property list granting each
// key the value true.
func EntitlementsPlist(keys ...string) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">` + "\n")
	b.WriteString(`<plist version="1.0">` + "\n<dict>\n")
	// html.EscapeString's five escapes, without linking package html,
	// whose init every macprof command would pay.
	esc := strings.NewReplacer(`&`, "&amp;", `'`, "&#39;", `<`, "&lt;", `>`, "&gt;", `"`, "&#34;")
	for _, k := range keys {
		fmt.Fprintf(&b, "\t<key>%s</key>\n\t<true/>\n", esc.Replace(k))
	}
	b.WriteString("</dict>\n</plist>\n")
	return []byte(b.String())
}

// CodesignArgs returns the codesign arguments that sign binary ad hoc with
// the entitlements in plist and the hardened runtime (--options runtime),
// as samply setup signs samply (samply src/mac/codesign_setup.rs): the
// entitlement is what grants the task ports, and the hardened runtime
// keeps the signed binary from loading unsigned code into a process that
// holds them.
func CodesignArgs(plist, binary string) []string {
	return []string{"--force", "--options", "runtime", "--sign", "-", "--entitlements", plist, binary}
}

// LinuxPtraceAdvice explains what ptrace needs, given the content of
// /proc/sys/kernel/yama/ptrace_scope ("" when absent) and whether macprof
// runs as root.
func LinuxPtraceAdvice(scope string, root bool) string {
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
