package otlp

import (
	"encoding/binary"

	"github.com/macprof/macprof/exporter"
	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/symcache"
	"github.com/macprof/macprof/unwind"
	pb "go.opentelemetry.io/proto/slim/otlp/profiles/v1development"
)

// The dictionary of one request: strings, attributes, mappings, functions,
// locations and stacks, each stored once and referred to by index, as
// OTLP profiles' ProfilesDictionary wants.

type stackKey struct{ stack, slot int }

type attrKey struct {
	key   int32
	str   string
	num   int64
	isNum bool
}

type mappingKey struct {
	start, limit, offset uint64
	file                 int32
	buildID              string
}

type funcKey struct{ name, file int32 }

// builder accumulates the dictionary of one request.
type builder struct {
	cache *symcache.Cache
	dict  *pb.ProfilesDictionary

	strings   map[string]int32
	attrs     map[attrKey]int32
	mappings  map[mappingKey]int32
	imgMap    map[*images.Image]int32
	functions map[funcKey]int32
	// locations maps, per mapping index (0: no mapping), an address as
	// recorded (the PC, or a return address minus one) to its location.
	// Mappings are deduplicated by contents, so processes sharing an image
	// share its locations.
	locations []map[uint64]int32
	stacks    map[string]int32
	truncated int32                         // location of the [truncated] pseudo frame, 0 until used
	unsampled int32                         // location of the [unsampled] pseudo frame, 0 until used
	lost      [profile.NumLostReasons]int32 // locations of the [lost] pseudo frames, by reason
	system    int32                         // location of the [system] pseudo frame, 0 until used
	after     int32                         // location of the [read after sample] pseudo frame, 0 until used
	native    []int32                       // attribute indices of a machine-code frame's location
	goFrame   []int32                       // attribute indices of a Go frame's location
	imgGo     map[*images.Image]bool        // whether an image is a Go program's

	ids    []int32 // scratch for one stack's location indices
	keyBuf []byte  // scratch for a stack's dedup key

	// Slabs: the many small messages and slices of a request are carved
	// from chunks instead of allocated one by one.
	samples   slab[pb.Sample]
	locs      slab[pb.Location]
	lines     slab[pb.Line]
	stackMsgs slab[pb.Stack]
	linePtrs  sliceSlab[*pb.Line]
	ints      sliceSlab[int32]
	values    sliceSlab[int64]
}

// slab hands out pointers to zero values carved from chunks.
type slab[T any] struct{ buf []T }

func (s *slab[T]) one() *T {
	if len(s.buf) == 0 {
		s.buf = make([]T, 512)
	}
	p := &s.buf[0]
	s.buf = s.buf[1:]
	return p
}

// sliceSlab hands out zeroed slices of exact capacity carved from chunks
// (so that appending to one never overwrites the next).
type sliceSlab[T any] struct{ buf []T }

func (s *sliceSlab[T]) take(n int) []T {
	if cap(s.buf)-len(s.buf) < n {
		s.buf = make([]T, 0, max(4096, n))
	}
	start := len(s.buf)
	s.buf = s.buf[:start+n]
	return s.buf[start : start+n : start+n]
}

func newBuilder(c *symcache.Cache, stacks int) *builder {
	return &builder{
		cache: c,
		dict: &pb.ProfilesDictionary{
			MappingTable:   []*pb.Mapping{{}},
			LocationTable:  []*pb.Location{{}},
			FunctionTable:  []*pb.Function{{}},
			LinkTable:      []*pb.Link{{}},
			StringTable:    []string{""},
			AttributeTable: []*pb.KeyValueAndUnit{{}},
			StackTable:     []*pb.Stack{{}},
		},
		strings:   map[string]int32{"": 0},
		attrs:     map[attrKey]int32{},
		mappings:  map[mappingKey]int32{},
		imgMap:    map[*images.Image]int32{},
		imgGo:     map[*images.Image]bool{},
		functions: map[funcKey]int32{},
		locations: []map[uint64]int32{make(map[uint64]int32)},
		stacks:    make(map[string]int32, stacks),
	}
}

func (b *builder) str(s string) int32 {
	if i, ok := b.strings[s]; ok {
		return i
	}
	i := int32(len(b.dict.StringTable))
	b.dict.StringTable = append(b.dict.StringTable, s)
	b.strings[s] = i
	return i
}

func (b *builder) strAttr(key, value string) int32 {
	k := attrKey{key: b.str(key), str: value}
	if i, ok := b.attrs[k]; ok {
		return i
	}
	i := int32(len(b.dict.AttributeTable))
	b.dict.AttributeTable = append(b.dict.AttributeTable, &pb.KeyValueAndUnit{KeyStrindex: k.key, Value: strValue(value)})
	b.attrs[k] = i
	return i
}

func (b *builder) intAttr(key string, value int64) int32 {
	k := attrKey{key: b.str(key), num: value, isNum: true}
	if i, ok := b.attrs[k]; ok {
		return i
	}
	i := int32(len(b.dict.AttributeTable))
	b.dict.AttributeTable = append(b.dict.AttributeTable, &pb.KeyValueAndUnit{KeyStrindex: k.key, Value: intValue(value)})
	b.attrs[k] = i
	return i
}

// mapping returns the mapping of an image, deduplicated by contents (two
// processes sharing an image at one address share the mapping).
func (b *builder) mapping(img *images.Image) int32 {
	if i, ok := b.imgMap[img]; ok {
		return i
	}
	k := mappingKey{start: img.Start, limit: img.Limit, offset: img.Offset, file: b.str(img.Path), buildID: img.BuildID}
	i, ok := b.mappings[k]
	if !ok {
		m := &pb.Mapping{MemoryStart: img.Start, MemoryLimit: img.Limit, FileOffset: img.Offset, FilenameStrindex: k.file}
		if img.BuildID != "" {
			m.AttributeIndices = []int32{b.strAttr(AttrBuildIDGNU, img.BuildID)}
			if img.Format == images.FormatMachO {
				m.AttributeIndices = append(m.AttributeIndices, b.strAttr(AttrBuildIDMachO, img.BuildID))
			}
		}
		if id := goImage(img).BuildID; id != "" {
			m.AttributeIndices = append(m.AttributeIndices, b.strAttr(AttrBuildIDGo, id))
		}
		i = int32(len(b.dict.MappingTable))
		b.dict.MappingTable = append(b.dict.MappingTable, m)
		b.mappings[k] = i
	}
	b.imgMap[img] = i
	return i
}

func (b *builder) function(name, file string) int32 {
	k := funcKey{name: b.str(name), file: b.str(file)}
	if i, ok := b.functions[k]; ok {
		return i
	}
	i := int32(len(b.dict.FunctionTable))
	b.dict.FunctionTable = append(b.dict.FunctionTable, &pb.Function{NameStrindex: k.name, FilenameStrindex: k.file})
	b.functions[k] = i
	return i
}

// location returns the location of one stack entry, symbolizing it on
// first sight. caller marks a return address: the location records the
// address of the call (return address minus one), as pprof does.
func (b *builder) location(set *images.Set, pc uint64, caller bool) int32 {
	if pc == unwind.AfterSampleMark && caller {
		return b.pseudoLocation(&b.after, exporter.AfterSampleFrame)
	}
	addr := pc
	if caller && addr > 0 {
		addr--
	}
	img := set.Lookup(addr)
	var mi int32
	if img != nil {
		mi = b.mapping(img)
	}
	for int(mi) >= len(b.locations) {
		b.locations = append(b.locations, make(map[uint64]int32))
	}
	byAddr := b.locations[mi]
	if i, ok := byAddr[addr]; ok {
		return i
	}
	loc := b.locs.one()
	loc.Address, loc.MappingIndex = addr, mi
	loc.AttributeIndices = b.frameType(img)
	if img != nil {
		frames := b.cache.Symbolize(img, pc, caller)
		loc.Lines = b.linePtrs.take(len(frames))
		for j, f := range frames {
			name := f.Function
			if name == "" {
				name = f.Name()
			}
			ln := b.lines.one()
			ln.FunctionIndex, ln.Line = b.function(name, f.File), int64(f.Line)
			loc.Lines[j] = ln
		}
	}
	i := int32(len(b.dict.LocationTable))
	b.dict.LocationTable = append(b.dict.LocationTable, loc)
	byAddr[addr] = i
	return i
}

// frameType returns the attribute indices of a location in img (nil: no
// image): profile.frame.type go in a Go program, else native.
func (b *builder) frameType(img *images.Image) []int32 {
	isGo, ok := b.imgGo[img]
	if !ok && img != nil {
		isGo = goImage(img).Go
		b.imgGo[img] = isGo
	}
	if isGo {
		if b.goFrame == nil {
			b.goFrame = []int32{b.strAttr(AttrFrameType, FrameTypeGo)}
		}
		return b.goFrame
	}
	if b.native == nil {
		b.native = []int32{b.strAttr(AttrFrameType, FrameTypeNative)}
	}
	return b.native
}

// pseudoLocation returns the location of a pseudo frame named name, kept
// in *slot, added on first use.
func (b *builder) pseudoLocation(slot *int32, name string) int32 {
	if *slot == 0 {
		*slot = int32(len(b.dict.LocationTable))
		b.dict.LocationTable = append(b.dict.LocationTable, &pb.Location{
			Lines: []*pb.Line{{FunctionIndex: b.function(name, "")}},
		})
	}
	return *slot
}

// stack returns the stack_table index of a window stack resolved in one
// process's images, deduplicated by its location indices.
// With app set, frames outside the application's images (exe's) collapse,
// run by run, into one [system] location.
func (b *builder) stack(set *images.Set, exe string, s *profile.Stack, app *exporter.AppFilter) int32 {
	ids := b.ids[:0]
	for i, pc := range s.PCs {
		if app != nil && !(i > 0 && pc == unwind.AfterSampleMark) {
			addr := pc
			if i > 0 && addr > 0 {
				addr--
			}
			if !app.IsApp(exe, set.Lookup(addr)) {
				sys := b.pseudoLocation(&b.system, exporter.SystemFrame)
				if len(ids) == 0 || ids[len(ids)-1] != sys {
					ids = append(ids, sys)
				}
				continue
			}
		}
		ids = append(ids, b.location(set, pc, i > 0))
	}
	if s.Truncated {
		ids = append(ids, b.pseudoLocation(&b.truncated, exporter.TruncatedFrame))
	}
	if s.Unsampled {
		ids = append(ids, b.pseudoLocation(&b.unsampled, profile.UnsampledFrame))
	} else if r := s.Lost; r != profile.NotLost && r < profile.NumLostReasons {
		ids = append(ids, b.pseudoLocation(&b.lost[r], r.Frame()))
	}
	b.ids = ids
	key := b.keyBuf[:0]
	for _, id := range ids {
		key = binary.AppendUvarint(key, uint64(id))
	}
	b.keyBuf = key
	if i, ok := b.stacks[string(key)]; ok {
		return i
	}
	i := int32(len(b.dict.StackTable))
	st := b.stackMsgs.one()
	st.LocationIndices = b.ints.take(len(ids))
	copy(st.LocationIndices, ids)
	b.dict.StackTable = append(b.dict.StackTable, st)
	b.stacks[string(key)] = i
	return i
}
