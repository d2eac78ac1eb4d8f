package otlp

import (
	commonpb "go.opentelemetry.io/proto/slim/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/slim/otlp/resource/v1"

	"github.com/macprof/macprof/profile"
)

// AttrProcessUserID is the semantic-convention attribute of the user id a
// process runs as.
const AttrProcessUserID = "process.user.id"

// withOwner sets the user id p runs as on its resource r, when it is known,
// over a resource attribute of that name from the configuration: a profile
// must say whose process it is.
func withOwner(r *resourcepb.Resource, p profile.Process) *resourcepb.Resource {
	if !p.HasUID {
		return r
	}
	kv := &commonpb.KeyValue{Key: AttrProcessUserID, Value: intValue(int64(p.UID))}
	for i, a := range r.Attributes {
		if a.Key == AttrProcessUserID {
			r.Attributes[i] = kv
			return r
		}
	}
	r.Attributes = append(r.Attributes, kv)
	return r
}
