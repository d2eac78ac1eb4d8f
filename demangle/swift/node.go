package swift

// kind is the kind of a node of a demangled name's tree.
type kind uint16

func (k kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "?"
}

func isContext(k kind) bool { return int(k) < len(contextKinds) && contextKinds[k] }

// node is one node of the tree a mangled name parses into: a kind with
// text, a number, or children. Substitutions make the tree a DAG, so
// nodes are shared and never changed once another node refers to them,
// except where the grammar builds a node in several steps.
type node struct {
	kind     kind
	hasText  bool
	hasIndex bool
	text     string
	index    uint64
	children []*node
}

func (n *node) add(c *node) {
	if c != nil {
		n.children = append(n.children, c)
	}
}

func (n *node) child(i int) *node {
	if n == nil || i < 0 || i >= len(n.children) {
		return nil
	}
	return n.children[i]
}

func (n *node) numChildren() int {
	if n == nil {
		return 0
	}
	return len(n.children)
}

func (n *node) first() *node { return n.child(0) }
func (n *node) last() *node  { return n.child(n.numChildren() - 1) }

// is reports whether n is non-nil and of kind k.
func (n *node) is(k kind) bool { return n != nil && n.kind == k }

func (n *node) reverseFrom(start int) {
	c := n.children
	for i, j := start, len(c)-1; i < j; i, j = i+1, j-1 {
		c[i], c[j] = c[j], c[i]
	}
}

// childOfKind returns n's first child of kind k.
func (n *node) childOfKind(k kind) *node {
	if n == nil {
		return nil
	}
	for _, c := range n.children {
		if c.kind == k {
			return c
		}
	}
	return nil
}
