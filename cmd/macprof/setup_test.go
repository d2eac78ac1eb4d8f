package main

import (
	"bytes"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/macprof/macprof/internal/permissions"
)

func TestSetupCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"setup", "--help"}, &out, &errb); code != 0 {
		t.Fatalf("setup --help exit %d", code)
	}
	help := errb.String()
	for _, w := range []string{"Usage: macprof setup", "com.apple.security.cs.debugger", "System Integrity Protection", "get-task-allow", "Examples:"} {
		if !strings.Contains(help, w) {
			t.Errorf("help lacks %q", w)
		}
	}
	out.Reset()
	errb.Reset()
	if code := run([]string{"setup", "extra"}, &out, &errb); code != 2 {
		t.Errorf("setup extra: exit %d, want 2", code)
	}
	out.Reset()
	errb.Reset()
	code := run([]string{"setup", "--dry-run"}, &out, &errb)
	if code != 0 {
		t.Fatalf("setup --dry-run: exit %d: %s", code, errb.String())
	}
	switch runtime.GOOS {
	case "darwin":
		if !strings.Contains(out.String(), "codesign --force --options runtime --sign - --entitlements") {
			t.Errorf("dry run does not show codesign:\n%s", out.String())
		}
	case "linux":
		if !strings.Contains(out.String(), "ptrace") || !strings.Contains(out.String(), permissions.DebuggerEntitlement) {
			t.Errorf("Linux setup output:\n%s", out.String())
		}
		if _, err := os.Stat("/proc/sys/kernel/yama/ptrace_scope"); err == nil && !strings.Contains(out.String(), "ptrace_scope is") {
			t.Errorf("Linux setup does not report this machine's ptrace_scope:\n%s", out.String())
		}
	}
}
