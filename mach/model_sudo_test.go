package mach_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/macprof/macprof/internal/fixture"
	"github.com/macprof/macprof/mach"
	"github.com/macprof/macprof/mach/machtest"
	"github.com/macprof/macprof/target"
)

// TestLaunchUnderSudo runs the launch sequence as root under sudo, as
// root without sudo and as a user: under sudo the command is spawned as
// the user who ran sudo (SUDO_UID, SUDO_GID, that user's groups, at most
// NGROUPS with SUDO_GID first, the rest left to the kernel through
// GMUID), which only root may ask (kern_exec.c posix_spawn: EPERM
// otherwise); a SUDO_GID the user is not in, an unknown user or a
// malformed SUDO_UID or SUDO_GID is refused before anything is spawned.
// The command's HOME, USER and LOGNAME are the user's, the rest of the
// environment macprof's.
func TestLaunchUnderSudo(t *testing.T) {
	many := []int{20, 12, 61, 79, 80, 81, 98, 701, 33, 100, 204, 250, 395, 398, 399, 400, 401, 402}
	for _, c := range []struct {
		name     string
		euid     int
		env      map[string]string
		want     *mach.SpawnCred // nil: refused
		errWords []string
	}{
		{"sudo", 0, map[string]string{"SUDO_UID": "501", "SUDO_GID": "20"},
			&mach.SpawnCred{UID: 501, GID: 20, GMUID: 501, Groups: many[:16]}, nil},
		{"sudo, primary group not first", 0, map[string]string{"SUDO_UID": "501", "SUDO_GID": "12"},
			&mach.SpawnCred{UID: 501, GID: 12, GMUID: 501, Groups: append([]int{12, 20}, many[2:16]...)}, nil},
		{"root", 0, nil, &mach.SpawnCred{UID: 0, GID: 0, GMUID: 0, Groups: []int{0}}, nil},
		{"sudo from root", 0, map[string]string{"SUDO_UID": "0", "SUDO_GID": "0"}, &mach.SpawnCred{UID: 0, GID: 0, GMUID: 0, Groups: []int{0}}, nil},
		{"user", 501, map[string]string{"SUDO_UID": "502", "SUDO_GID": "20"}, &mach.SpawnCred{UID: 501, GID: 20, GMUID: 501, Groups: []int{20}}, nil},
		{"group not the user's", 0, map[string]string{"SUDO_UID": "501", "SUDO_GID": "0"}, nil, []string{"SUDO_GID 0", "user 501", "unset SUDO_UID"}},
		{"unknown user", 0, map[string]string{"SUDO_UID": "777", "SUDO_GID": "20"}, nil, []string{"user 777"}},
		{"malformed", 0, map[string]string{"SUDO_UID": "bob", "SUDO_GID": "20"}, nil, []string{`SUDO_UID "bob"`}},
		{"SUDO_GID missing", 0, map[string]string{"SUDO_UID": "501"}, nil, []string{`SUDO_GID ""`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := machtest.New()
			t.Cleanup(func() { k.Check(t) })
			k.EUID, k.EGID, k.Env = c.euid, 0, maps.Clone(c.env)
			if k.Env == nil {
				k.Env = map[string]string{}
			}
			if c.euid != 0 {
				k.EGID = 20
			}
			k.Users = map[int]mach.UserInfo{
				501: {Name: "dev", Home: "/Users/dev", GID: 20, Groups: many},
				502: {Name: "other", Home: "/Users/other", GID: 20, Groups: []int{20}},
			}
			k.Env["HOME"], k.Env["USER"], k.Env["LOGNAME"], k.Env["PATH"] = "/var/root", "root", "root", "/usr/bin:/bin"
			exe := executableFile(t)
			var task *machtest.Task
			k.Launchable(exe, func(k *machtest.Kernel) *machtest.Task {
				task = k.SpawnedTask(t, exe, []fixture.TaskImage{{File: machoFixture("prog_arm64"), Path: exe, Slide: progSlide}})
				task.AddThread("main")
				return task
			})
			var env []string
			for key, v := range k.Env {
				env = append(env, key+"="+v)
			}
			tg, err := mach.LaunchKernel(k, []string{exe}, env, target.Options{})
			if c.want == nil {
				if err == nil {
					tg.Release()
					t.Fatal("launch succeeded")
				}
				for _, w := range c.errWords {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				if task != nil {
					t.Error("the command was spawned")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Release()
			got := task.Cred
			if got.UID != c.want.UID || got.GID != c.want.GID || got.GMUID != c.want.GMUID || !slices.Equal(got.Groups, c.want.Groups) {
				t.Errorf("the command runs as %+v, want %+v", got, *c.want)
			}
			home, user := "HOME=/var/root", "USER=root"
			if c.want.UID == 501 && c.euid == 0 {
				home, user = "HOME=/Users/dev", "USER=dev"
			}
			for _, kv := range []string{home, user, "PATH=/usr/bin:/bin"} {
				if !slices.Contains(task.Env, kv) {
					t.Errorf("the command's environment %q lacks %s", task.Env, kv)
				}
			}
			k.Exit(task, 0)
			if _, err := tg.Wait(); err != nil {
				t.Error(err)
			}
		})
	}
	t.Run("only root may set credentials", func(t *testing.T) {
		k := machtest.New()
		k.EUID = 501
		if _, err := k.Spawn("/bin/x", nil, nil, &mach.SpawnCred{UID: 502, GID: 20, Groups: []int{20}}); err == nil {
			t.Error("the model let a non-root caller set the child's credentials")
		}
	})
}
