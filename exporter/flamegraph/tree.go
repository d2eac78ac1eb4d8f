// Package flamegraph renders call stacks as a self-contained SVG flame
// graph: the stacks are merged into a tree (root at the bottom, callees
// above their callers, siblings sorted by name), frames too narrow to see
// are dropped, and each frame carries a <title> that browsers show on hover.
// The file needs no network, fonts or scripts from elsewhere; a few lines of
// inline JavaScript add click-to-zoom.
package flamegraph

import "sort"

// Tree is a call tree merged from stacks. The zero value is an empty tree
// ready to use.
type Tree struct {
	nodes []node // nodes[0] is the root once anything was added
	index map[edge]int32
}

type node struct {
	name     string
	value    int64   // samples in this frame and its callees
	children []int32 // sorted by name before rendering
}

type edge struct {
	parent int32
	name   string
}

// Add merges a stack, frames from the root (outermost caller) to the leaf,
// seen count times. Stacks with no frames or a count that is not positive
// are ignored.
func (t *Tree) Add(frames []string, count int64) {
	if len(frames) == 0 || count <= 0 {
		return
	}
	if len(t.nodes) == 0 {
		t.nodes = append(t.nodes, node{name: "all"})
		t.index = make(map[edge]int32)
	}
	cur := int32(0)
	t.nodes[0].value += count
	for _, f := range frames {
		e := edge{cur, f}
		child, ok := t.index[e]
		if !ok {
			child = int32(len(t.nodes))
			t.nodes = append(t.nodes, node{name: f})
			t.nodes[cur].children = append(t.nodes[cur].children, child)
			t.index[e] = child
		}
		t.nodes[child].value += count
		cur = child
	}
}

// Total returns the number of samples in the tree.
func (t *Tree) Total() int64 {
	if len(t.nodes) == 0 {
		return 0
	}
	return t.nodes[0].value
}

// Len returns the number of frames in the tree, the root included.
func (t *Tree) Len() int { return len(t.nodes) }

// sortChildren orders every node's children by name, so that the layout is
// deterministic and does not depend on the order stacks were added in.
func (t *Tree) sortChildren() {
	for i := range t.nodes {
		c := t.nodes[i].children
		if len(c) > 1 {
			sort.Slice(c, func(a, b int) bool { return t.nodes[c[a]].name < t.nodes[c[b]].name })
		}
	}
}
