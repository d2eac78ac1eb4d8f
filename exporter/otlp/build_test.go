package otlp_test

import (
	"fmt"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	collpb "go.opentelemetry.io/proto/slim/otlp/collector/profiles/v1development"
	pb "go.opentelemetry.io/proto/slim/otlp/profiles/v1development"
	"google.golang.org/protobuf/proto"

	"github.com/macprof/macprof/exporter/otlp"
	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/collectortest"
	"github.com/macprof/macprof/internal/fixture"
	"github.com/macprof/macprof/profile"
)

// twoProcessWindow is the fixture window with a second process sharing the
// test binary's images, and samples of a PID the window does not describe.
func twoProcessWindow(t *testing.T) *fixture.Fixture {
	fx := fixture.NewFixture(t, 100)
	p2 := fixture.SelfProcess(t, 200)
	w := fx.Window
	w.Processes = append(w.Processes, p2)
	w.Samples = append(w.Samples,
		profile.Sample{Stack: 0, PID: 200, Thread: 21, ThreadName: "worker", Count: 5},
		profile.Sample{Stack: 0, PID: 300, Thread: 31, Count: 1}, // no such process
		profile.Sample{Stack: 1, PID: 200, Thread: 22, Count: 0}, // dropped: no count
	)
	return fx
}

func build(t *testing.T, w *profile.Window, opts otlp.BuildOptions) *collpb.ExportProfilesServiceRequest {
	t.Helper()
	req, err := otlp.Build(w, fixture.NewCache(), opts)
	if err != nil {
		t.Fatal(err)
	}
	// What goes on the wire must decode to the same thing.
	data, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	var back collpb.ExportProfilesServiceRequest
	if err := proto.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(req, &back) {
		t.Fatal("request does not survive encoding")
	}
	return &back
}

func TestBuildDictionaryInvariants(t *testing.T) {
	fx := twoProcessWindow(t)
	req := build(t, fx.Window, otlp.BuildOptions{HostName: "h"})
	d := req.GetDictionary()

	// Index 0 of every table is the zero value.
	if len(d.StringTable) == 0 || d.StringTable[0] != "" {
		t.Errorf("string_table[0] = %q", d.StringTable)
	}
	zero := []struct {
		name string
		m    proto.Message
	}{
		{"mapping", d.MappingTable[0]}, {"location", d.LocationTable[0]}, {"function", d.FunctionTable[0]},
		{"link", d.LinkTable[0]}, {"attribute", d.AttributeTable[0]}, {"stack", d.StackTable[0]},
	}
	for _, z := range zero {
		if data, _ := proto.Marshal(z.m); len(data) != 0 {
			t.Errorf("%s_table[0] is not the zero value: %v", z.name, z.m)
		}
	}
	// Every table is deduplicated.
	dedup := func(name string, n int, key func(i int) string) {
		seen := map[string]int{}
		for i := 1; i < n; i++ {
			k := key(i)
			if j, dup := seen[k]; dup {
				t.Errorf("%s_table[%d] duplicates [%d]: %s", name, i, j, k)
			}
			seen[k] = i
		}
	}
	enc := func(m proto.Message) string {
		b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		return string(b)
	}
	dedup("string", len(d.StringTable), func(i int) string { return d.StringTable[i] })
	dedup("mapping", len(d.MappingTable), func(i int) string { return enc(d.MappingTable[i]) })
	dedup("location", len(d.LocationTable), func(i int) string { return enc(d.LocationTable[i]) })
	dedup("function", len(d.FunctionTable), func(i int) string { return enc(d.FunctionTable[i]) })
	dedup("attribute", len(d.AttributeTable), func(i int) string { return enc(d.AttributeTable[i]) })
	dedup("stack", len(d.StackTable), func(i int) string { return enc(d.StackTable[i]) })

	// The two processes share the image, so they share its mapping and
	// locations: 3 unique addresses in stacks 0 and 1 plus LeafPC, i.e.
	// LeafPC, MiddleRet-1, RootRet-1, MiddleRet-8 and [truncated]; plus
	// the 3 bare addresses of the unknown process.
	if got := len(d.LocationTable) - 1; got != 8 {
		t.Errorf("%d locations, want 8", got)
	}
	if got := len(d.MappingTable) - 1; got != 1 {
		t.Errorf("%d mappings, want 1 (the test binary)", got)
	}

	// Resources: one per process, then one for the unknown PID.
	if n := len(req.ResourceProfiles); n != 3 {
		t.Fatalf("%d resources, want 3", n)
	}
	samples, err := collectortest.Flatten(&pb.ProfilesData{ResourceProfiles: req.ResourceProfiles, Dictionary: d})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		pid, tid, name, exe string
		value               int64
		frames              string
	}
	var got []row
	for _, s := range samples {
		got = append(got, row{s.Resource[otlp.AttrProcessPID], s.Attrs[otlp.AttrThreadID], s.Attrs[otlp.AttrThreadName], s.Resource[otlp.AttrExecutableName], s.Value, fmt.Sprint(s.Frames)})
		if s.Resource[otlp.AttrHostName] != "h" {
			t.Errorf("host.name %q", s.Resource[otlp.AttrHostName])
		}
	}
	full := fmt.Sprint([]string{fx.Leaf, fx.Middle, fx.Root})
	exe := samples[0].Resource[otlp.AttrExecutableName]
	if exe == "" {
		t.Fatalf("no %s on %v", otlp.AttrExecutableName, samples[0].Resource)
	}
	want := []row{
		{"100", "11", "worker", exe, 50, full},
		{"100", "12", "io", exe, 7, fmt.Sprint([]string{fx.Middle, fx.Root})},
		{"100", "13", "", exe, 2, fmt.Sprint([]string{fx.Leaf, "[truncated]"})},
		{"200", "21", "worker", exe, 5, full},
		// No images for an unknown process: bare addresses.
		{"300", "31", "", "", 1, fmt.Sprint([]string{fmt.Sprintf("%#x", fx.LeafPC), fmt.Sprintf("%#x", fx.MiddleRet-1), fmt.Sprintf("%#x", fx.RootRet-1)})},
	}
	if !slices.Equal(got, want) {
		t.Errorf("samples:\n got %v\nwant %v", got, want)
	}
	// service.name defaults to the executable's name.
	for _, s := range samples[:4] {
		if s.Resource[otlp.AttrServiceName] != exe {
			t.Errorf("service.name %q, want %q", s.Resource[otlp.AttrServiceName], exe)
		}
	}
	// Profile fields.
	p := req.ResourceProfiles[0].ScopeProfiles[0].Profiles[0]
	w := fx.Window
	if p.TimeUnixNano != uint64(w.Start.UnixNano()) || p.DurationNano != uint64(w.End.Sub(w.Start)) || p.Period != int64(w.Period) {
		t.Errorf("time %d duration %d period %d", p.TimeUnixNano, p.DurationNano, p.Period)
	}
	if len(p.ProfileId) != 16 {
		t.Errorf("profile id %x", p.ProfileId)
	}
	if req.ResourceProfiles[0].ScopeProfiles[0].Scope.GetName() != otlp.ScopeName {
		t.Errorf("scope %v", req.ResourceProfiles[0].ScopeProfiles[0].Scope)
	}
	// Missed samples: one attribute, the reasons as values with counts.
	var missed []string
	for _, ai := range p.AttributeIndices {
		a := d.AttributeTable[ai]
		if d.StringTable[a.KeyStrindex] != otlp.AttrMissed {
			continue
		}
		for _, v := range a.Value.GetArrayValue().GetValues() {
			kv := map[string]string{}
			for _, e := range v.GetKvlistValue().GetValues() {
				if e.Key == "count" {
					kv[e.Key] = fmt.Sprint(e.Value.GetIntValue())
				} else {
					kv[e.Key] = e.Value.GetStringValue()
				}
			}
			missed = append(missed, kv["reason"]+"="+kv["count"])
		}
	}
	if want := []string{"thread_gone=3"}; !slices.Equal(missed, want) {
		t.Errorf("missed samples attribute %q, want %q", missed, want)
	}
	for _, a := range d.AttributeTable {
		if k := d.StringTable[a.KeyStrindex]; strings.ContainsAny(k, " ()") {
			t.Errorf("attribute key %q is not an identifier", k)
		}
	}
	// Conventions: schema URL, os.type and host.arch, profile.frame.type
	// go on every location with a mapping (the test binary is a Go
	// program), its Go build ID on the mapping.
	for _, rp := range req.ResourceProfiles {
		if rp.SchemaUrl != otlp.SchemaURL || rp.ScopeProfiles[0].SchemaUrl != otlp.SchemaURL || !strings.HasPrefix(otlp.SchemaURL, "https://opentelemetry.io/schemas/1.") {
			t.Errorf("schema URLs %q, %q", rp.SchemaUrl, rp.ScopeProfiles[0].SchemaUrl)
		}
	}
	if r := samples[0].Resource; r[otlp.AttrOSType] != runtime.GOOS || r[otlp.AttrHostArch] != runtime.GOARCH {
		t.Errorf("os.type %q host.arch %q on %s/%s", r[otlp.AttrOSType], r[otlp.AttrHostArch], runtime.GOOS, runtime.GOARCH)
	}
	for i, loc := range d.LocationTable[1:] {
		if loc.MappingIndex == 0 {
			continue
		}
		typed := false
		for _, ai := range loc.AttributeIndices {
			a := d.AttributeTable[ai]
			typed = typed || d.StringTable[a.KeyStrindex] == otlp.AttrFrameType && a.Value.GetStringValue() == otlp.FrameTypeGo
		}
		if !typed {
			t.Errorf("location %d has no profile.frame.type go", i+1)
		}
	}
	if got, want := mappingAttrs(d)[otlp.AttrBuildIDGo], goToolBuildID(t, fx.Executable); got != want || want == "" {
		t.Errorf("mapping's %s %q, want %q (go tool buildid)", otlp.AttrBuildIDGo, got, want)
	}
	// Pyroscope's names for host, pid and thread (labelAlias) beside the
	// conventions' keys, and none with NoLabelAliases.
	if r, a := samples[0].Resource, samples[0].Attrs; r[otlp.LabelHostName] != "h" || r[otlp.LabelProcessPID] != "100" || a[otlp.LabelThread] != "worker" {
		t.Errorf("resource %v, sample %v: want host_name h, process_pid 100, thread worker", r, a)
	}
	plain := build(t, fx.Window, otlp.BuildOptions{HostName: "h", NoLabelAliases: true})
	ps, err := collectortest.Flatten(&pb.ProfilesData{ResourceProfiles: plain.ResourceProfiles, Dictionary: plain.Dictionary})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{otlp.LabelHostName, otlp.LabelProcessPID, otlp.LabelThread} {
		if _, ok := ps[0].Resource[k]; ok {
			t.Errorf("NoLabelAliases: resource has %s", k)
		}
		if _, ok := ps[0].Attrs[k]; ok {
			t.Errorf("NoLabelAliases: sample has %s", k)
		}
	}
}

// goToolBuildID is what `go tool buildid` says of a file.
func goToolBuildID(t *testing.T, path string) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("this test compares with `go tool buildid` and needs the go command on PATH: %v", err)
	}
	out, err := exec.Command(goTool, "tool", "buildid", path).Output()
	if err != nil {
		t.Fatalf("go tool buildid %s: %v", path, err)
	}
	return strings.TrimSpace(string(out))
}

// mappingAttrs returns the string attributes of every mapping of d.
func mappingAttrs(d *pb.ProfilesDictionary) map[string]string {
	got := map[string]string{}
	for _, m := range d.MappingTable[1:] {
		for _, ai := range m.AttributeIndices {
			a := d.AttributeTable[ai]
			got[d.StringTable[a.KeyStrindex]] = a.Value.GetStringValue()
		}
	}
	return got
}

// The user's resource attributes with dots also go under Pyroscope's
// undotted name, unless one of that name is set; service.name and the
// conventions' own keys without an /ingest label do not.
func TestBuildLabelAliases(t *testing.T) {
	fx := fixture.NewFixture(t, 7)
	req := build(t, fx.Window, otlp.BuildOptions{ServiceName: "svc", Attributes: map[string]string{
		"deployment.environment.name": "prod", "team": "a", "k8s.pod.name": "p", "k8s_pod_name": "mine"}})
	got := map[string]string{}
	for _, kv := range req.ResourceProfiles[0].Resource.Attributes {
		if _, dup := got[kv.Key]; dup {
			t.Errorf("attribute %s twice", kv.Key)
		}
		got[kv.Key] = kv.Value.GetStringValue()
	}
	want := map[string]string{"deployment_environment_name": "prod", "team": "a", "k8s_pod_name": "mine", "deployment.environment.name": "prod"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s=%q, want %q (%v)", k, got[k], v, got)
		}
	}
	for _, k := range []string{"service_name", "process_executable_path", "os_type", "host_arch"} {
		if _, ok := got[k]; ok {
			t.Errorf("resource has %s: %v", k, got)
		}
	}
}

// A Mach-O image's UUID goes where consumers read build IDs
// (process.executable.build_id.gnu), and under macprof's own key too.
func TestBuildMachOBuildID(t *testing.T) {
	fx := fixture.NewFixture(t, 5)
	img := *fx.Window.Processes[0].Images.Lookup(fx.LeafPC)
	img.Format, img.BuildID = images.FormatMachO, "0123456789ABCDEF0123456789ABCDEF"
	set := images.NewSet([]*images.Image{&img})
	fx.Window.Processes[0].Images = set
	req := build(t, fx.Window, otlp.BuildOptions{})
	d := req.Dictionary
	got := mappingAttrs(d)
	if got[otlp.AttrBuildIDGNU] != img.BuildID || got[otlp.AttrBuildIDMachO] != img.BuildID {
		t.Errorf("mapping attributes %v, want the UUID under %s and %s", got, otlp.AttrBuildIDGNU, otlp.AttrBuildIDMachO)
	}
	// No Mach-O file of that UUID: nothing says it is Go, so its frames
	// are native and it has no Go build ID.
	if _, ok := got[otlp.AttrBuildIDGo]; ok {
		t.Errorf("mapping attributes %v: a Go build ID read from no file", got)
	}
	for _, loc := range d.LocationTable[1:] {
		for _, ai := range loc.AttributeIndices {
			if a := d.AttributeTable[ai]; d.StringTable[a.KeyStrindex] == otlp.AttrFrameType && a.Value.GetStringValue() != otlp.FrameTypeNative {
				t.Errorf("frame type %q, want native", a.Value.GetStringValue())
			}
		}
	}
}

func TestBuildOptionsAndModes(t *testing.T) {
	fx := fixture.NewFixture(t, 7)
	fx.Window.Mode = profile.ModeWall
	req := build(t, fx.Window, otlp.BuildOptions{
		ServiceName:  "svc",
		Attributes:   map[string]string{"team": "perf", otlp.AttrProcessPID: "999", otlp.AttrServiceName: "ignored"},
		ScopeVersion: "1.2.3",
	})
	ss, err := collectortest.Flatten(&pb.ProfilesData{ResourceProfiles: req.ResourceProfiles, Dictionary: req.Dictionary})
	if err != nil {
		t.Fatal(err)
	}
	r := ss[0].Resource
	if r[otlp.AttrServiceName] != "svc" || r["team"] != "perf" || r[otlp.AttrProcessPID] != "7" {
		t.Errorf("resource %v", r)
	}
	if _, ok := r[otlp.AttrHostName]; ok {
		t.Errorf("host.name set without a host name: %v", r)
	}
	if ss[0].PeriodType != "wall/nanoseconds" {
		t.Errorf("period type %s in wall mode", ss[0].PeriodType)
	}
	if v := req.ResourceProfiles[0].ScopeProfiles[0].Scope.GetVersion(); v != "1.2.3" {
		t.Errorf("scope version %q", v)
	}
}

func TestBuildErrors(t *testing.T) {
	fx := fixture.NewFixture(t, 1)
	c := fixture.NewCache()
	if _, err := otlp.Build(nil, c, otlp.BuildOptions{}); err == nil {
		t.Error("nil window accepted")
	}
	if _, err := otlp.Build(fx.Window, nil, otlp.BuildOptions{}); err == nil {
		t.Error("nil cache accepted")
	}
	w := *fx.Window
	w.Period = 0
	if _, err := otlp.Build(&w, c, otlp.BuildOptions{}); err == nil {
		t.Error("zero period accepted")
	}
	w = *fx.Window
	w.Samples = []profile.Sample{{Stack: 99, PID: 1, Count: 1}}
	if _, err := otlp.Build(&w, c, otlp.BuildOptions{}); err == nil {
		t.Error("sample with a bad stack index accepted")
	}
	// Addresses outside every image: locations without mapping or lines.
	w = *fx.Window
	w.Stacks = []profile.Stack{{PCs: []uint64{0x10, 0x20}}}
	w.Samples = []profile.Sample{{Stack: 0, PID: 1, Thread: 1, Count: 1}}
	req, err := otlp.Build(&w, c, otlp.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	locs := req.Dictionary.LocationTable[1:]
	if len(locs) != 2 || locs[0].MappingIndex != 0 || len(locs[0].Lines) != 0 || locs[0].Address != 0x10 || locs[1].Address != 0x1f {
		t.Errorf("unknown addresses: %v", locs)
	}
}

// reportCPU reports the process's CPU time (user+system, GC included) per
// iteration as cpu-ns/op: on a shared machine it is steadier than ns/op,
// which counts time spent waiting for a CPU.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkBuild10kStacks builds the OTLP request of a window of 10,000
// unique stacks with the frame cache warm (every window after the first).
func BenchmarkBuild10kStacks(b *testing.B) {
	w, c := fixture.BenchWindow(10000), fixture.BenchCache()
	if _, err := otlp.Build(w, c, otlp.BuildOptions{}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	defer reportCPU(b)()
	for b.Loop() {
		if _, err := otlp.Build(w, c, otlp.BuildOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMarshal10kStacks adds the protobuf encoding.
func BenchmarkMarshal10kStacks(b *testing.B) {
	w, c := fixture.BenchWindow(10000), fixture.BenchCache()
	data, err := otlp.Marshal(w, c, otlp.BuildOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	defer reportCPU(b)()
	for b.Loop() {
		if _, err := otlp.Marshal(w, c, otlp.BuildOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(data)), "bytes/msg")
}

// BenchmarkBuild10kStacksCold symbolizes every unique address too (a new
// symbol cache per iteration, the table load included).
func BenchmarkBuild10kStacksCold(b *testing.B) {
	w := fixture.BenchWindow(10000)
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		if _, err := otlp.Build(w, fixture.BenchCache(), otlp.BuildOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
