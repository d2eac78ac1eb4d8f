package ptrace

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestSudoUser(t *testing.T) {
	lookup := func(uid string) (*account, []string, error) {
		if uid != "1000" {
			return nil, nil, errors.New("unknown user")
		}
		return &account{name: "ann", home: "/home/ann"}, []string{"1000", "27", "100"}, nil
	}
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, tc := range []struct {
		name    string
		euid    int
		env     func(string) string
		wantErr string // "" for none
		wantNil bool
	}{
		{"not root", 1000, env("SUDO_UID", "1000", "SUDO_GID", "1000"), "", true},
		{"not under sudo", 0, env(), "", true},
		{"sudo from root", 0, env("SUDO_UID", "0", "SUDO_GID", "0"), "", true},
		{"missing SUDO_GID", 0, env("SUDO_UID", "1000"), "SUDO_GID", false},
		{"non-numeric SUDO_UID", 0, env("SUDO_UID", "ann", "SUDO_GID", "1000"), "SUDO_UID", false},
		{"missing SUDO_UID", 0, env("SUDO_GID", "1000"), "SUDO_UID", false},
		{"unknown user", 0, env("SUDO_UID", "1001", "SUDO_GID", "1001"), "look up user 1001", false},
		{"user", 0, env("SUDO_UID", "1000", "SUDO_GID", "1000"), "", false},
		{"a supplementary group", 0, env("SUDO_UID", "1000", "SUDO_GID", "27"), "", false},
		{"root's group", 0, env("SUDO_UID", "1000", "SUDO_GID", "0"), "SUDO_GID 0 is not a group of user 1000", false},
		{"another group", 0, env("SUDO_UID", "1000", "SUDO_GID", "4"), "SUDO_GID 4 is not a group of user 1000", false},
	} {
		id, err := sudoUser(tc.euid, tc.env, lookup)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: err %v, want one naming %s", tc.name, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.wantNil != (id == nil):
			t.Errorf("%s: identity %+v, want nil %v", tc.name, id, tc.wantNil)
		}
	}
	id, err := sudoUser(0, env("SUDO_UID", "1000", "SUDO_GID", "1000"), lookup)
	if err != nil {
		t.Fatal(err)
	}
	if c := id.cred; c.Uid != 1000 || c.Gid != 1000 || !slices.Equal(c.Groups, []uint32{1000, 27, 100}) {
		t.Errorf("credential %+v, want uid and gid 1000 with groups 1000, 27, 100", c)
	}
	got := id.env([]string{"HOME=/root", "PATH=/bin", "USER=root"})
	if want := []string{"PATH=/bin", "HOME=/home/ann", "USER=ann", "LOGNAME=ann"}; !slices.Equal(got, want) {
		t.Errorf("environment %q, want %q", got, want)
	}
}

// TestLookupUser reads an account as the name services hold it: root's, and
// one that does not exist.
func TestLookupUser(t *testing.T) {
	u, groups, err := lookupUser("0")
	if err != nil {
		t.Fatal(err)
	}
	if u.name != "root" || u.gid != "0" || u.home == "" || !slices.Contains(groups, "0") {
		t.Errorf("uid 0: %+v, groups %q; want root, gid 0, a home, in group 0", u, groups)
	}
	if _, _, err := lookupUser("4194303"); err == nil || !strings.Contains(err.Error(), "no user has uid 4194303") {
		t.Errorf("an unknown uid: err = %v", err)
	}
	for _, bad := range []string{"", "ann:x:1000:1000::/home/ann", "bob:x:1001:1001::/home/bob:/bin/sh", ":x:1000:1000::/:/bin/sh"} {
		if u, err := parsePasswd(bad, "1000"); err == nil {
			t.Errorf("parsePasswd(%q) = %+v, want an error", bad, u)
		}
	}
}
