package mach

import (
	"os"
	"regexp"
	"slices"
	"testing"
)

// TestTrampolinesMatch checks, on every OS, that each function the darwin
// bindings declare has its cgo_import_dynamic line (from libSystem, under
// its own name) and a trampoline in both assembly files, and that nothing
// is imported or jumped to without a declaration.
func TestTrampolinesMatch(t *testing.T) {
	src, err := os.ReadFile("zsyscall_darwin.go")
	if err != nil {
		t.Fatal(err)
	}
	names := func(re string, b []byte) []string {
		var out []string
		for _, m := range regexp.MustCompile(re).FindAllSubmatch(b, -1) {
			out = append(out, string(m[1]))
		}
		slices.Sort(out)
		return out
	}
	decl := names(`(?m)^\s*libc_(\w+)_trampoline_addr\s+uintptr`, src)
	if len(decl) < 18 {
		t.Fatalf("found %d trampoline declarations, want at least the 18 the backend needs", len(decl))
	}
	imports := names(`(?m)^//go:cgo_import_dynamic libc_(\w+) (?:\w+) "/usr/lib/libSystem\.B\.dylib"$`, src)
	if !slices.Equal(decl, imports) {
		t.Errorf("declared %v\nimported %v", decl, imports)
	}
	for _, m := range regexp.MustCompile(`(?m)^//go:cgo_import_dynamic libc_(\w+) (\w+) `).FindAllSubmatch(src, -1) {
		if string(m[1]) != string(m[2]) {
			t.Errorf("libc_%s imports %s", m[1], m[2])
		}
	}
	for _, arch := range []string{"arm64", "amd64"} {
		asm, err := os.ReadFile("zsyscall_darwin_" + arch + ".s")
		if err != nil {
			t.Fatal(err)
		}
		for _, pat := range []string{
			`(?m)^TEXT libc_(\w+)_trampoline<>\(SB\),NOSPLIT,\$0-0$`,
			`(?m)^\tJMP\tlibc_(\w+)\(SB\)$`,
			`(?m)^GLOBL\t·libc_(\w+)_trampoline_addr\(SB\), RODATA, \$8$`,
			`(?m)^DATA\t·libc_(\w+)_trampoline_addr\(SB\)/8, \$libc_\w+_trampoline<>\(SB\)$`,
		} {
			if got := names(pat, asm); !slices.Equal(got, decl) {
				t.Errorf("%s: %s matches %v\nwant %v", arch, pat, got, decl)
			}
		}
	}
	for _, want := range []string{"task_for_pid", "task_read_for_pid", "mach_task_self", "task_threads", "task_suspend2",
		"task_resume2", "thread_suspend", "thread_resume", "thread_get_state", "thread_info", "mach_vm_read_overwrite",
		"mach_vm_region", "task_info", "mach_port_deallocate", "vm_deallocate", "mach_error_string", "proc_pidpath", "sysctlbyname",
		"posix_spawnattr_set_uid_np", "posix_spawnattr_set_gid_np", "posix_spawnattr_set_groups_np"} {
		if !slices.Contains(decl, want) {
			t.Errorf("no binding for %s", want)
		}
	}
}
