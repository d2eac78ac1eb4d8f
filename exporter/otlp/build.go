// Package otlp turns profile windows into OpenTelemetry profiles (OTLP
// profiles v1development, as go.opentelemetry.io/proto/slim/otlp v0.4.x
// defines them) and sends them to a collector over gRPC or HTTP, configured
// by the standard OTEL_EXPORTER_OTLP_* variables.
package otlp

import (
	"crypto/rand"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	semconv "go.opentelemetry.io/otel/semconv/v1.39.0"
	collpb "go.opentelemetry.io/proto/slim/otlp/collector/profiles/v1development"
	commonpb "go.opentelemetry.io/proto/slim/otlp/common/v1"
	pb "go.opentelemetry.io/proto/slim/otlp/profiles/v1development"
	resourcepb "go.opentelemetry.io/proto/slim/otlp/resource/v1"
	"google.golang.org/protobuf/proto"

	"github.com/macprof/macprof/exporter"
	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/symcache"
)

// Attribute keys written by Build (OpenTelemetry semantic conventions where
// one exists).
const (
	AttrServiceName    = "service.name"
	AttrHostName       = "host.name"
	AttrProcessPID     = "process.pid"
	AttrExecutableName = "process.executable.name"
	AttrExecutablePath = "process.executable.path"
	AttrThreadName     = "thread.name"
	AttrThreadID       = "thread.id"
	AttrOSType         = "os.type"
	AttrHostArch       = "host.arch"
	// AttrFrameType is the kind of every frame's location: "go" in a Go
	// program's image, else "native".
	AttrFrameType = "profile.frame.type"
	// AttrBuildIDGNU holds an image's build ID on a mapping: an ELF
	// image's GNU build ID, and also a Mach-O image's LC_UUID, because it
	// is the one key consumers read build IDs from (Grafana Pyroscope's
	// OTLP receiver turns it into the pprof mapping's build_id).
	AttrBuildIDGNU = "process.executable.build_id.gnu"
	// AttrBuildIDMachO holds a Mach-O image's LC_UUID on a mapping, to
	// say what the build ID is. The semantic conventions have no key for
	// Mach-O UUIDs yet; this one is macprof's own.
	AttrBuildIDMachO = "process.executable.build_id.macho_uuid"
	// LabelHostName, LabelProcessPID, LabelProcessUserID and LabelThread
	// are host.name, process.pid, process.user.id and thread.name under
	// the names Grafana Pyroscope's /ingest labels have (see labelAlias).
	LabelHostName      = "host_name"
	LabelProcessPID    = "process_pid"
	LabelProcessUserID = "process_user_id"
	LabelThread        = "thread"
	// AttrMissed counts the samples a window missed, by reason: an array
	// of {reason: ID, count: N} lists, one per reason (IDs such as
	// "stop_timeout", see profile.MissReason.ID).
	AttrMissed = "macprof.samples.missed"
)

// SchemaURL is the semantic conventions version the attributes follow,
// written on every resource and scope.
const SchemaURL = semconv.SchemaURL

// osType and hostArch are os.type and host.arch of this machine in the
// conventions' values, "" where they have none.
var osType, hostArch = func() (string, string) {
	arch := map[string]string{"amd64": "amd64", "arm64": "arm64", "386": "x86", "arm": "arm32", "ppc64": "ppc64",
		"ppc64le": "ppc64", "s390x": "s390x"}[runtime.GOARCH]
	switch runtime.GOOS {
	case "darwin", "linux", "freebsd", "netbsd", "openbsd", "dragonfly", "windows", "solaris", "aix":
		return runtime.GOOS, arch
	}
	return "", arch
}()

// ScopeName is the instrumentation scope name of every profile.
const ScopeName = "github.com/macprof/macprof"

// BuildOptions sets what Build writes besides the window's contents.
type BuildOptions struct {
	// ServiceName is written as service.name on every resource. When
	// empty, each process's executable name is used.
	ServiceName string
	// HostName is written as host.name when not empty.
	HostName string
	// Attributes are extra resource attributes (OTEL_RESOURCE_ATTRIBUTES)
	// written on every resource. They do not override the attributes Build
	// derives itself (service.name aside: ServiceName wins over both).
	Attributes map[string]string
	// ScopeVersion is the instrumentation scope's version (macprof's).
	ScopeVersion string
	// AppOnly, when set, keeps only the frames of the application's
	// images, each run of others collapsed into one exporter.SystemFrame.
	AppOnly *exporter.AppFilter
	// NoLabelAliases leaves out the undotted copies of host, process,
	// thread and user attributes (labelAlias) that Grafana Pyroscope needs
	// to show them as labels.
	NoLabelAliases bool
}

// labelAlias returns the name under which Grafana Pyroscope lets every
// client filter by an attribute key with dots, "" for a key without one.
// Pyroscope's OTLP receiver stores resource, scope and sample attributes as
// series labels under their own keys, dots included, but its query API
// lists and matches only label names without dots unless the client asks
// for UTF-8 names (grafana/pyroscope pkg/ingester/otlp/ingest_handler.go,
// pkg/frontend/readpath/queryfrontend/query_series_labels.go): so host.name
// is also sent as host_name, the name the /ingest path gives it.
func labelAlias(key string) string {
	switch key {
	case AttrHostName:
		return LabelHostName
	case AttrProcessPID:
		return LabelProcessPID
	case AttrProcessUserID:
		return LabelProcessUserID
	case AttrThreadName:
		return LabelThread
	}
	if !strings.Contains(key, ".") {
		return ""
	}
	return strings.ReplaceAll(key, ".", "_")
}

// Build converts a window into an export request, symbolizing each unique
// (image, address) once through c. The request has one ResourceProfiles per
// process (service, host, pid and executable attributes), each with one
// Profile whose samples carry thread.name and thread.id, and one dictionary
// shared by all, every table with its zero value at index 0 as the protocol
// requires.
func Build(w *profile.Window, c *symcache.Cache, opts BuildOptions) (*collpb.ExportProfilesServiceRequest, error) {
	if w == nil {
		return nil, errors.New("otlp: nil window")
	}
	if c == nil {
		return nil, errors.New("otlp: nil symbol cache")
	}
	if err := w.CheckValid(); err != nil {
		return nil, err
	}
	period := w.Period.Nanoseconds()
	if period <= 0 {
		return nil, fmt.Errorf("otlp: window period %v is not positive", w.Period)
	}
	b := newBuilder(c, len(w.Stacks))

	kind := "cpu"
	if w.Mode == profile.ModeWall {
		kind = "wall"
	}
	sampleType := &pb.ValueType{TypeStrindex: b.str("samples"), UnitStrindex: b.str("count")}
	periodType := &pb.ValueType{TypeStrindex: b.str(kind), UnitStrindex: b.str("nanoseconds")}
	var start, duration uint64
	if !w.Start.IsZero() {
		start = uint64(w.Start.UnixNano())
		if w.End.After(w.Start) {
			duration = uint64(w.End.Sub(w.Start).Nanoseconds())
		}
	}
	var profileAttrs []int32
	if reasons := w.MissReasons(); len(reasons) > 0 {
		list := make([]*commonpb.AnyValue, len(reasons))
		for i, r := range reasons {
			list[i] = &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: []*commonpb.KeyValue{
				{Key: "reason", Value: strValue(r.ID())},
				{Key: "count", Value: intValue(w.Missed[r])},
			}}}}
		}
		i := int32(len(b.dict.AttributeTable))
		b.dict.AttributeTable = append(b.dict.AttributeTable, &pb.KeyValueAndUnit{KeyStrindex: b.str(AttrMissed),
			Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: list}}}})
		profileAttrs = append(profileAttrs, i)
	}

	// One resource per process, in the window's order, then one for
	// samples whose PID names no process.
	procIndex := make(map[[2]int]int, len(w.Processes)) // by PID and Gen
	for i, p := range w.Processes {
		if _, dup := procIndex[[2]int{p.PID, p.Gen}]; !dup {
			procIndex[[2]int{p.PID, p.Gen}] = i
		}
	}
	bySlot := make([][]*pb.Sample, len(w.Processes)+1)
	var orphanPIDs []int
	seenOrphan := map[int]bool{}
	stackIDs := make(map[stackKey]int32, len(w.Stacks))
	for _, s := range w.Samples {
		if s.Count <= 0 {
			continue
		}
		slot, ok := procIndex[[2]int{s.PID, s.Gen}]
		if !ok {
			slot, ok = procIndex[[2]int{s.PID, 0}]
		}
		var set *images.Set
		exe := ""
		if ok {
			set, exe = w.Processes[slot].Images, w.Processes[slot].Executable
		} else {
			slot = len(w.Processes)
			if !seenOrphan[s.PID] {
				seenOrphan[s.PID] = true
				orphanPIDs = append(orphanPIDs, s.PID)
			}
		}
		key := stackKey{stack: s.Stack, slot: slot}
		sid, ok := stackIDs[key]
		if !ok {
			sid = b.stack(set, exe, &w.Stacks[s.Stack], opts.AppOnly)
			stackIDs[key] = sid
		}
		// Thread 0 holds the CPU time of threads no listing saw
		// ([unsampled]): it names no thread, so it has no thread
		// attributes.
		var attrs []int32
		switch {
		case s.Thread == 0:
		case s.ThreadName != "" && opts.NoLabelAliases:
			attrs = b.ints.take(2)
			attrs[0] = b.strAttr(AttrThreadName, s.ThreadName)
			attrs[1] = b.intAttr(AttrThreadID, int64(s.Thread))
		case s.ThreadName != "":
			attrs = b.ints.take(3)
			attrs[0] = b.strAttr(AttrThreadName, s.ThreadName)
			attrs[1] = b.intAttr(AttrThreadID, int64(s.Thread))
			attrs[2] = b.strAttr(LabelThread, s.ThreadName)
		default:
			attrs = b.ints.take(1)
			attrs[0] = b.intAttr(AttrThreadID, int64(s.Thread))
		}
		ps := b.samples.one()
		ps.StackIndex = sid
		ps.AttributeIndices = attrs
		ps.Values = b.values.take(1)
		ps.Values[0] = s.Count
		bySlot[slot] = append(bySlot[slot], ps)
	}

	profileFor := func(samples []*pb.Sample) *pb.Profile {
		return &pb.Profile{
			SampleType:       sampleType,
			Samples:          samples,
			TimeUnixNano:     start,
			DurationNano:     duration,
			PeriodType:       periodType,
			Period:           period,
			ProfileId:        newProfileID(),
			AttributeIndices: profileAttrs,
		}
	}
	scope := &commonpb.InstrumentationScope{Name: ScopeName, Version: opts.ScopeVersion}
	req := &collpb.ExportProfilesServiceRequest{Dictionary: b.dict}
	for i, p := range w.Processes {
		if procIndex[[2]int{p.PID, p.Gen}] != i {
			continue // a duplicate PID: its samples went to the first
		}
		req.ResourceProfiles = append(req.ResourceProfiles, &pb.ResourceProfiles{
			Resource: withAliases(withOwner(resource(opts, p.PID, p.Executable), p), opts),
			ScopeProfiles: []*pb.ScopeProfiles{{
				Scope:     scope,
				Profiles:  []*pb.Profile{profileFor(bySlot[i])},
				SchemaUrl: SchemaURL,
			}},
			SchemaUrl: SchemaURL,
		})
	}
	if orphans := bySlot[len(w.Processes)]; len(orphans) > 0 {
		// Samples of processes the window does not describe: one resource
		// without process attributes beyond the PIDs' count.
		res := resource(opts, 0, "")
		if len(orphanPIDs) == 1 {
			res = resource(opts, orphanPIDs[0], "")
		}
		res = withAliases(res, opts)
		req.ResourceProfiles = append(req.ResourceProfiles, &pb.ResourceProfiles{
			Resource: res,
			ScopeProfiles: []*pb.ScopeProfiles{{
				Scope:     scope,
				Profiles:  []*pb.Profile{profileFor(orphans)},
				SchemaUrl: SchemaURL,
			}},
			SchemaUrl: SchemaURL,
		})
	}
	return req, nil
}

// Marshal builds the request of a window and encodes it as protobuf: the
// body Exporter.Send takes.
func Marshal(w *profile.Window, c *symcache.Cache, opts BuildOptions) ([]byte, error) {
	req, err := Build(w, c, opts)
	if err != nil {
		return nil, err
	}
	data, err := proto.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("otlp: encoding profiles: %w", err)
	}
	return data, nil
}

func newProfileID() []byte {
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil || allZero(id) {
		// crypto/rand does not fail on supported systems; an all-zero ID
		// is invalid, so never send one.
		id[15] = 1
	}
	return id
}

func allZero(b []byte) bool {
	for _, v := range b {
		if v != 0 {
			return false
		}
	}
	return true
}

// resource returns the resource of one process (pid 0: no process).
func resource(opts BuildOptions, pid int, executable string) *resourcepb.Resource {
	var attrs []*commonpb.KeyValue
	own := map[string]bool{}
	add := func(k string, v *commonpb.AnyValue) {
		own[k] = true
		attrs = append(attrs, &commonpb.KeyValue{Key: k, Value: v})
	}
	service := opts.ServiceName
	if service == "" {
		service = opts.Attributes[AttrServiceName]
	}
	if service == "" && executable != "" {
		service = filepath.Base(executable)
	}
	if service == "" {
		service = "unknown_service:macprof"
	}
	add(AttrServiceName, strValue(service))
	if opts.HostName != "" {
		add(AttrHostName, strValue(opts.HostName))
	}
	if hostArch != "" {
		add(AttrHostArch, strValue(hostArch))
	}
	if osType != "" {
		add(AttrOSType, strValue(osType))
	}
	if pid != 0 {
		add(AttrProcessPID, intValue(int64(pid)))
	}
	if executable != "" {
		add(AttrExecutableName, strValue(filepath.Base(executable)))
		add(AttrExecutablePath, strValue(executable))
	}
	keys := make([]string, 0, len(opts.Attributes))
	for k := range opts.Attributes {
		if !own[k] && k != "" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		attrs = append(attrs, &commonpb.KeyValue{Key: k, Value: strValue(opts.Attributes[k])})
	}
	return &resourcepb.Resource{Attributes: attrs}
}

// withAliases adds to r, unless opts.NoLabelAliases, the labelAlias copy
// of each attribute with one (host.name, process.pid, process.user.id and
// the user's keys with dots), where r has no attribute of that name.
func withAliases(r *resourcepb.Resource, opts BuildOptions) *resourcepb.Resource {
	if opts.NoLabelAliases {
		return r
	}
	has := make(map[string]bool, len(r.Attributes))
	for _, a := range r.Attributes {
		has[a.Key] = true
	}
	for _, a := range r.Attributes {
		switch a.Key {
		case AttrServiceName, AttrHostArch, AttrOSType, AttrExecutableName, AttrExecutablePath:
			// Pyroscope names the service itself; the others are not
			// labels /ingest has.
			continue
		}
		if alias := labelAlias(a.Key); alias != "" && !has[alias] {
			has[alias] = true
			r.Attributes = append(r.Attributes, &commonpb.KeyValue{Key: alias, Value: a.Value})
		}
	}
	return r
}

func strValue(s string) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
}

func intValue(v int64) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v}}
}
