package exporter

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/profile"
)

// appWindow is a window of a process whose executable is /app/bin/prog,
// with a plugin of the app (/app/lib/libplug.so) and a system library
// (fakeLib), and one stack through all of them and an address in no
// image: innermost first, fakeLib, prog, fakeLib, fakeLib, libplug,
// prog, nothing.
func appWindow() *profile.Window {
	app := &images.Image{Path: "/app/bin/prog", Format: images.FormatELF, Start: 0x400000, Limit: 0x500000}
	plug := &images.Image{Path: "/app/lib/libplug.so", Format: images.FormatELF, Start: 0x7e0000000000, Limit: 0x7e0000100000}
	return &profile.Window{
		Start: time.Unix(1700000000, 0), End: time.Unix(1700000010, 0),
		Period: 10 * time.Millisecond, Mode: profile.ModeCPU,
		Processes: []profile.Process{{PID: 5, Executable: app.Path, Images: images.NewSet([]*images.Image{app, plug, fakeLib})}},
		Stacks: []profile.Stack{{PCs: []uint64{
			fakeLib.Start + 0x150, app.Start + 0x11, fakeLib.Start + 0x252, fakeLib.Start + 0x151,
			plug.Start + 0x21, app.Start + 0x31, 0x11,
		}}},
		Samples: []profile.Sample{{Stack: 0, PID: 5, Thread: 1, Count: 3}},
	}
}

// TestAppOnly checks that --app-only keeps the executable's frames and
// collapses each run of the others into one [system] frame, in folded
// stacks and pprof, and that --app-images keeps more images.
func TestAppOnly(t *testing.T) {
	for _, tc := range []struct {
		filter *AppFilter
		want   string
	}{
		// Unfiltered: fakeLib+0x150 and +0x151 are inner inlined into
		// outer, +0x251 is "other;name..." (folded writes ':' for ';').
		{nil, "0x10;prog+0x30;libplug.so+0x20;outer;inner;other:name with<xml>&;prog+0x10;outer;inner 3"},
		{&AppFilter{}, "[system];prog+0x30;[system];prog+0x10;[system] 3"},
		{&AppFilter{Images: regexp.MustCompile(`/libplug\.so$`)}, "[system];prog+0x30;libplug.so+0x20;[system];prog+0x10;[system] 3"},
	} {
		var out bytes.Buffer
		if err := Write(&out, FormatFolded, appWindow(), newCache(), Options{AppOnly: tc.filter}); err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(out.String()); got != tc.want {
			t.Errorf("filter %+v: folded %q, want %q", tc.filter, got, tc.want)
		}
		p, err := Profile(appWindow(), newCache(), Options{AppOnly: tc.filter})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, l := range p.Sample[0].Location {
			for i := len(l.Line) - 1; i >= 0; i-- {
				names = append(names, l.Line[i].Function.Name)
			}
			if len(l.Line) == 0 {
				names = append(names, "?")
			}
		}
		// pprof has no names for the unsymbolized prog and libplug
		// addresses: compare the [system] positions only.
		var sys []int
		for i, n := range names {
			if n == SystemFrame {
				sys = append(sys, i)
			}
		}
		wantSys := map[bool]int{false: 0, true: 3}[tc.filter != nil]
		if len(sys) != wantSys {
			t.Errorf("filter %+v: pprof frames %q, want %d [system] frames", tc.filter, names, wantSys)
		}
	}
}

func TestAppFilterIsApp(t *testing.T) {
	f := &AppFilter{Images: regexp.MustCompile(`libfoo`)}
	exe := "/Applications/Foo.app/Contents/MacOS/Foo"
	for path, want := range map[string]bool{
		exe: true,
		"/Applications/Foo.app/Contents/Frameworks/Bar.framework/Bar": true,
		"/usr/lib/libSystem.B.dylib":                                  false,
		"/opt/lib/libfoo.dylib":                                       true,
		"/Applications/Other.app/Contents/MacOS/Other":                false,
	} {
		if got := f.IsApp(exe, &images.Image{Path: path}); got != want {
			t.Errorf("IsApp(%s) = %v, want %v", path, got, want)
		}
	}
	if f.IsApp(exe, nil) {
		t.Error("an address in no image is an app frame")
	}
}
