package mach

import (
	"errors"
	"strings"
	"testing"

	"github.com/macprof/macprof/target"
)

// Values from osfmk/mach/kern_return.h (KERN_FAILURE 5 ... KERN_NOT_FOUND
// 56, checked against the ProjectCalamari/xnu mirror at a430cb1893d0).
func TestKernReturnNames(t *testing.T) {
	for _, c := range []struct {
		k    KernReturn
		want string
	}{
		{0, "KERN_SUCCESS"},
		{1, "KERN_INVALID_ADDRESS"},
		{4, "KERN_INVALID_ARGUMENT"},
		{5, "KERN_FAILURE"},
		{16, "KERN_INVALID_TASK"},
		{35, "KERN_INVALID_SECURITY"},
		{37, "KERN_TERMINATED"},
		{46, "KERN_NOT_SUPPORTED"},
		{53, "KERN_DENIED"},
		{56, "KERN_NOT_FOUND"},
		{MachSendInvalidDest, "MACH_SEND_INVALID_DEST"},
		{MigServerDied, "MIG_SERVER_DIED"},
		{57, "kern_return_t(0x39)"},
		{-1, "kern_return_t(0xffffffff)"},
	} {
		if got := c.k.String(); got != c.want {
			t.Errorf("KernReturn(%d).String() = %q, want %q", int32(c.k), got, c.want)
		}
	}
	for i, n := range kernNames {
		if !strings.HasPrefix(n, "KERN_") {
			t.Errorf("kernNames[%d] = %q", i, n)
		}
	}
}

func TestAttachErrorAdvice(t *testing.T) {
	for _, c := range []struct {
		name  string
		f     AttachFacts
		kind  error
		words []string
	}{
		{"gone", AttachFacts{PID: 42, Op: "task_for_pid", Code: KernFailure, Exists: false}, target.ErrExited, []string{"exited"}},
		{"sip", AttachFacts{PID: 1, Op: "task_for_pid", Code: KernFailure, Exists: true, Path: "/usr/libexec/syspolicyd", Root: true}, ErrProtected, []string{"System Integrity Protection"}},
		{"sip-system", AttachFacts{PID: 1, Code: KernFailure, Exists: true, Path: "/System/Library/CoreServices/Finder.app/Contents/MacOS/Finder"}, ErrProtected, []string{"System Integrity Protection"}},
		{"user", AttachFacts{PID: 7, Op: "task_for_pid", Code: KernFailure, Desc: "(os/kern) failure", Exists: true, Path: "/usr/local/bin/myapp"}, ErrPermission, []string{"sudo", "macprof setup", "get-task-allow", "DevToolsSecurity -enable", "_developer"}},
		{"root-hardened", AttachFacts{PID: 7, Code: KernFailure, Exists: true, Path: "/Applications/Some.app/Contents/MacOS/Some", Root: true}, ErrPermission, []string{"hardened runtime", "get-task-allow"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := AttachError(c.f)
			if !errors.Is(e, c.kind) {
				t.Errorf("errors.Is(%v, %v) = false", e, c.kind)
			}
			msg := e.Error()
			for _, w := range c.words {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
			if !strings.Contains(msg, c.f.Code.String()) {
				t.Errorf("message %q lacks the code name", msg)
			}
			if c.f.Desc != "" && !strings.Contains(msg, c.f.Desc) {
				t.Errorf("message %q lacks mach_error_string text", msg)
			}
		})
	}
}

func TestThreadError(t *testing.T) {
	if e := ThreadError("thread_suspend", MachSendInvalidDest, "", true); !errors.Is(e, target.ErrNoThread) {
		t.Errorf("dead thread port: %v is not target.ErrNoThread", e)
	}
	if e := ThreadError("thread_suspend", KernInvalidArgument, "", false); !errors.Is(e, target.ErrExited) || errors.Is(e, target.ErrNoThread) {
		t.Errorf("dead task: %v is not target.ErrExited", e)
	}
	if e := ThreadError("mach_vm_read_overwrite", KernInvalidAddress, "", true); e.Kind != nil || !strings.Contains(e.Error(), "not mapped") {
		t.Errorf("unmapped read: %v", e)
	}
}

func TestSIPProtectedPath(t *testing.T) {
	for path, want := range map[string]bool{
		"/usr/bin/yes":             true,
		"/bin/ls":                  true,
		"/sbin/launchd":            true,
		"/System/Library/x":        true,
		"/Library/Apple/usr/bin/x": true,
		"/usr/local/bin/go":        false,
		"/opt/homebrew/bin/x":      false,
		"/Users/me/a.out":          false,
		"":                         false,
		"/usrlocal":                false,
	} {
		if got := SIPProtectedPath(path); got != want {
			t.Errorf("SIPProtectedPath(%q) = %v, want %v", path, got, want)
		}
	}
}
