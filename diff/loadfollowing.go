package diff

import (
	"regexp"
	"sort"
)

// splitLoadFollowing returns each profile with the stacks that hold a
// function lf matches taken out (Samples their remaining sum), and, per
// profile, the samples taken out under each outermost such function. Their
// share follows load, so leaving them in would move every other share
// with it.
func splitLoadFollowing(ps []*Profile, lf *regexp.Regexp) ([]*Profile, []map[string]int64) {
	out := make([]*Profile, len(ps))
	apart := make([]map[string]int64, len(ps))
	matches := make(map[string]bool)
	match := func(name string) bool {
		m, ok := matches[name]
		if !ok {
			m = lf.MatchString(name)
			matches[name] = m
		}
		return m
	}
	for i, p := range ps {
		q := *p
		q.Stacks, q.Samples = nil, 0
		apart[i] = make(map[string]int64)
		for _, s := range p.Stacks {
			name := ""
			for _, f := range s.Frames {
				if match(f.Name) {
					name = f.Name
					break
				}
			}
			if name != "" {
				apart[i][name] += s.Count
				continue
			}
			q.Stacks = append(q.Stacks, s)
			q.Samples += s.Count
		}
		out[i] = &q
	}
	return out, apart
}

// apartShares pools each side's set-apart samples per function as a share
// of the side's samples, largest change first.
func apartShares(apart []map[string]int64, all []*Profile, nb int) []Apart {
	var tb, tn int64
	byName := make(map[string]*[2]int64)
	for i, m := range apart {
		side := 0
		if i >= nb {
			side = 1
			tn += all[i].Samples
		} else {
			tb += all[i].Samples
		}
		for name, n := range m {
			v := byName[name]
			if v == nil {
				v = new([2]int64)
				byName[name] = v
			}
			v[side] += n
		}
	}
	var out []Apart
	for name, v := range byName {
		a := Apart{Name: name, Base: 100 * float64(v[0]) / float64(tb), New: 100 * float64(v[1]) / float64(tn)}
		a.Delta = a.New - a.Base
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool {
		di, dj := abs(out[i].Delta), abs(out[j].Delta)
		if di != dj {
			return di > dj
		}
		return out[i].Name < out[j].Name
	})
	return out
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
