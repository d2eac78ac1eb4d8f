// Package flamegraph renders call stacks as an SVG flame graph that needs
// nothing from elsewhere (no network, fonts or external scripts), so that
// the file opens anywhere; inline JavaScript adds click-to-zoom and
// flamegraph.pl's regex search ("Matched: N%").
package flamegraph

import (
	"slices"
	"strings"
)

// Tree is a call tree merged from stacks. The zero value is an empty tree
// ready to use.
type Tree struct {
	nodes []node // nodes[0] is the root once anything was added
	index map[edge]int32
}

// node is one frame of the tree. Children form a singly linked list; index
// 0 (the root) is never a child, so 0 means "none".
type node struct {
	name        string
	value       int64 // samples in this frame and its callees
	first, next int32 // first child, next sibling
}

type edge struct {
	parent int32
	name   string
}

// maxNodes bounds the tree (node indices are int32).
const maxNodes = 1<<31 - 1

// Add merges a stack, frames from the root (outermost caller) to the leaf,
// seen count times. Stacks with no frames or a count that is not positive
// are ignored, and so are frames beyond the tree's bound of 2^31 nodes.
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
			if len(t.nodes) >= maxNodes {
				return
			}
			child = int32(len(t.nodes))
			t.nodes = append(t.nodes, node{name: f, next: t.nodes[cur].first})
			t.nodes[cur].first = child
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

// children appends n's children to dst, sorted by name so that the layout
// does not depend on the order stacks were added in.
func (t *Tree) children(dst []int32, n int32) []int32 {
	dst = dst[:0]
	for c := t.nodes[n].first; c != 0; c = t.nodes[c].next {
		dst = append(dst, c)
	}
	slices.SortFunc(dst, func(a, b int32) int { return strings.Compare(t.nodes[a].name, t.nodes[b].name) })
	return dst
}

// find returns the child of parent named name, the root for parent 0 and
// name "", or -1 when t has none (or parent is -1).
func (t *Tree) find(parent int32, name string) int32 {
	if t == nil || parent < 0 || len(t.nodes) == 0 {
		return -1
	}
	if parent == 0 && name == "" {
		return 0
	}
	if c, ok := t.index[edge{parent, name}]; ok {
		return c
	}
	return -1
}
