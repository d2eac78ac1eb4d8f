package diff

import "path/filepath"

// counts holds each profile's flat and cumulative count per function key.
type counts struct {
	keys      []Frame
	flat, cum [][]int64 // [profile][key]
}

func at(v []int64, k int) int64 {
	if k < len(v) {
		return v[k]
	}
	return 0
}

// key is a frame's identity across builds: its name, and the file's base
// name when every profile has files (two builds' paths differ by checkout).
func key(f Frame, keyed bool) Frame {
	if !keyed || f.File == "" {
		return Frame{Name: f.Name}
	}
	return Frame{Name: f.Name, File: filepath.Base(f.File)}
}

// count adds up every profile's flat and cumulative counts per function; a
// function that appears twice in one stack (recursion) counts once there.
func count(ps []*Profile, keyed bool) *counts {
	ids := make(map[Frame]int32)
	c := &counts{flat: make([][]int64, len(ps)), cum: make([][]int64, len(ps))}
	var seen []int32 // per key: the last stack it was counted in, +1
	serial := int32(0)
	grow := func(v []int64) []int64 {
		for len(v) < len(c.keys) {
			v = append(v, 0)
		}
		return v
	}
	for i, p := range ps {
		flat, cum := c.flat[i], c.cum[i]
		for _, s := range p.Stacks {
			serial++
			var leaf int32
			for _, f := range s.Frames {
				k := key(f, keyed)
				id, ok := ids[k]
				if !ok {
					id = int32(len(c.keys))
					ids[k] = id
					c.keys = append(c.keys, k)
					seen = append(seen, 0)
				}
				leaf = id
				if int(id) >= len(cum) {
					cum, flat = grow(cum), grow(flat)
				}
				if seen[id] != serial {
					seen[id] = serial
					cum[id] += s.Count
				}
			}
			flat[leaf] += s.Count
		}
		c.flat[i], c.cum[i] = flat, cum
	}
	return c
}

// displayNames gives each key its name, with the file added where two
// keys share a name.
func displayNames(keys []Frame, keyed bool) []string {
	n := make(map[string]int)
	for _, k := range keys {
		n[k.Name]++
	}
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.Name
		if keyed && n[k.Name] > 1 && k.File != "" {
			out[i] += " (" + k.File + ")"
		}
	}
	return out
}
