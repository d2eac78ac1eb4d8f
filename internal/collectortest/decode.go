package collectortest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"

	commonpb "go.opentelemetry.io/proto/slim/otlp/common/v1"
	pb "go.opentelemetry.io/proto/slim/otlp/profiles/v1development"
	"google.golang.org/protobuf/proto"
)

// maxMessage bounds one length-prefixed message in a file exporter output.
const maxMessage = 256 << 20

// ReadProfilesFile decodes what the collector's file exporter wrote with
// format: proto: a sequence of ProfilesData messages, each preceded by its
// length as a 4-byte big-endian integer. A message cut short at the end (the
// collector still writing) is ignored.
func ReadProfilesFile(path string) ([]*pb.ProfilesData, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("collectortest: %w", err)
	}
	return DecodeLengthPrefixed(data)
}

// DecodeLengthPrefixed decodes length-prefixed ProfilesData messages.
func DecodeLengthPrefixed(data []byte) ([]*pb.ProfilesData, error) {
	var out []*pb.ProfilesData
	for off := 0; len(data)-off >= 4; {
		n := binary.BigEndian.Uint32(data[off:])
		if n > maxMessage {
			return out, fmt.Errorf("collectortest: message at offset %d claims %d bytes", off, n)
		}
		if uint64(len(data)-off-4) < uint64(n) {
			break // partial write
		}
		m := &pb.ProfilesData{}
		if err := proto.Unmarshal(data[off+4:off+4+int(n)], m); err != nil {
			return out, fmt.Errorf("collectortest: message at offset %d: %w", off, err)
		}
		out = append(out, m)
		off += 4 + int(n)
	}
	return out, nil
}

// Sample is one decoded sample with everything resolved through the
// dictionary.
type Sample struct {
	// Resource holds the resource's attributes, values formatted as text.
	Resource map[string]string
	// Attrs holds the sample's attributes.
	Attrs map[string]string
	// Frames are function names, innermost first (inlined frames first
	// within a location).
	Frames []string
	// BuildIDs are the mapping build IDs of the stack's locations (by
	// attribute key), "" for locations without one.
	BuildIDs []string
	// Files are the mapping file names of the stack's locations.
	Files []string
	Value int64
	// SampleType and PeriodType are "type/unit".
	SampleType, PeriodType string
	Period                 int64
}

// Flatten resolves every sample of d through its dictionary. Attribute keys
// are looked up both as plain keys and as string-table references
// (key_strindex), because the collector rewrites resource attribute keys
// into the string table. Out-of-range indices are errors.
func Flatten(d *pb.ProfilesData) ([]Sample, error) {
	dict := d.GetDictionary()
	strs := dict.GetStringTable()
	str := func(i int32) (string, error) {
		if i < 0 || int(i) >= len(strs) {
			return "", fmt.Errorf("string index %d of %d", i, len(strs))
		}
		return strs[i], nil
	}
	value := func(v *commonpb.AnyValue) (string, error) {
		switch x := v.GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			return x.StringValue, nil
		case *commonpb.AnyValue_StringValueStrindex:
			return str(x.StringValueStrindex)
		case *commonpb.AnyValue_IntValue:
			return strconv.FormatInt(x.IntValue, 10), nil
		case *commonpb.AnyValue_BoolValue:
			return strconv.FormatBool(x.BoolValue), nil
		case *commonpb.AnyValue_DoubleValue:
			return strconv.FormatFloat(x.DoubleValue, 'g', -1, 64), nil
		case nil:
			return "", nil
		}
		return fmt.Sprint(v), nil
	}
	keyValue := func(kv *commonpb.KeyValue) (string, string, error) {
		k := kv.GetKey()
		if k == "" && kv.GetKeyStrindex() != 0 {
			var err error
			if k, err = str(kv.GetKeyStrindex()); err != nil {
				return "", "", err
			}
		}
		v, err := value(kv.GetValue())
		return k, v, err
	}
	attrTable := dict.GetAttributeTable()
	attrs := func(idx []int32, into map[string]string) error {
		for _, i := range idx {
			if i <= 0 || int(i) >= len(attrTable) {
				return fmt.Errorf("attribute index %d of %d", i, len(attrTable))
			}
			a := attrTable[i]
			k, err := str(a.GetKeyStrindex())
			if err != nil {
				return err
			}
			v, err := value(a.GetValue())
			if err != nil {
				return err
			}
			into[k] = v
		}
		return nil
	}
	vt := func(v *pb.ValueType) string {
		t, _ := str(v.GetTypeStrindex())
		u, _ := str(v.GetUnitStrindex())
		return t + "/" + u
	}
	var out []Sample
	for _, rp := range d.GetResourceProfiles() {
		res := map[string]string{}
		for _, kv := range rp.GetResource().GetAttributes() {
			k, v, err := keyValue(kv)
			if err != nil {
				return nil, fmt.Errorf("collectortest: resource attribute: %w", err)
			}
			res[k] = v
		}
		for _, sp := range rp.GetScopeProfiles() {
			for _, p := range sp.GetProfiles() {
				for _, s := range p.GetSamples() {
					fs := Sample{Resource: res, Attrs: map[string]string{}, SampleType: vt(p.GetSampleType()), PeriodType: vt(p.GetPeriodType()), Period: p.GetPeriod()}
					for _, v := range s.GetValues() {
						fs.Value += v
					}
					if err := attrs(s.GetAttributeIndices(), fs.Attrs); err != nil {
						return nil, fmt.Errorf("collectortest: sample: %w", err)
					}
					si := s.GetStackIndex()
					if si < 0 || int(si) >= len(dict.GetStackTable()) {
						return nil, fmt.Errorf("collectortest: stack index %d of %d", si, len(dict.GetStackTable()))
					}
					for _, li := range dict.GetStackTable()[si].GetLocationIndices() {
						if li <= 0 || int(li) >= len(dict.GetLocationTable()) {
							return nil, fmt.Errorf("collectortest: location index %d of %d", li, len(dict.GetLocationTable()))
						}
						loc := dict.GetLocationTable()[li]
						build, file := "", ""
						if mi := loc.GetMappingIndex(); mi != 0 {
							if mi < 0 || int(mi) >= len(dict.GetMappingTable()) {
								return nil, fmt.Errorf("collectortest: mapping index %d of %d", mi, len(dict.GetMappingTable()))
							}
							m := dict.GetMappingTable()[mi]
							file, _ = str(m.GetFilenameStrindex())
							ma := map[string]string{}
							if err := attrs(m.GetAttributeIndices(), ma); err != nil {
								return nil, fmt.Errorf("collectortest: mapping: %w", err)
							}
							// The GNU build ID where a mapping has several
							// (a Go program's Go build ID beside it).
							build = ma["process.executable.build_id.gnu"]
							for _, v := range ma {
								if build == "" {
									build = v
								}
							}
						}
						fs.BuildIDs = append(fs.BuildIDs, build)
						fs.Files = append(fs.Files, file)
						if len(loc.GetLines()) == 0 {
							fs.Frames = append(fs.Frames, fmt.Sprintf("%#x", loc.GetAddress()))
						}
						for _, ln := range loc.GetLines() {
							fi := ln.GetFunctionIndex()
							if fi <= 0 || int(fi) >= len(dict.GetFunctionTable()) {
								return nil, fmt.Errorf("collectortest: function index %d of %d", fi, len(dict.GetFunctionTable()))
							}
							name, err := str(dict.GetFunctionTable()[fi].GetNameStrindex())
							if err != nil {
								return nil, fmt.Errorf("collectortest: function: %w", err)
							}
							fs.Frames = append(fs.Frames, name)
						}
					}
					out = append(out, fs)
				}
			}
		}
	}
	return out, nil
}
