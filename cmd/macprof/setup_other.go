//go:build !darwin

package main

import (
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/macprof/macprof/internal/permissions"
)

// setupPlatform explains the ptrace permissions (Linux) or that there is
// nothing to set up.
func setupPlatform(r setupRequest, stdout, stderr io.Writer) int {
	if runtime.GOOS != "linux" {
		fmt.Fprintf(stdout, "macprof has no backend for %s: nothing to set up.\n", runtime.GOOS)
		return 0
	}
	scope, _ := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope")
	fmt.Fprint(stdout, permissions.LinuxPtraceAdvice(string(scope), os.Geteuid() == 0))
	if r.dryRun || r.plist != "" {
		fmt.Fprintf(stdout, "\n(--plist and --dry-run only matter on macOS, where this entitlements plist would be written:)\n%s", permissions.EntitlementsPlist(permissions.DebuggerEntitlement))
	}
	return 0
}
