package swift

// Type productions: function types and their parameters, tuples, lists,
// protocols, conformances and bound generic types.

func (d *demangler) typeMangling() *node {
	t := d.popKind(kType)
	labels := d.popFunctionParamLabels(t)
	tm := d.newNode(kTypeMangling)
	if tm != nil && labels != nil {
		tm.add(labels)
	}
	return addChild(tm, t)
}

func (d *demangler) plainFunction() *node {
	sig := d.popKind(kDependentGenericSignature)
	t := d.popFunctionType(kFunctionType, false)
	labels := d.popFunctionParamLabels(t)
	if sig != nil {
		t = d.typ(d.with(kDependentGenericType, sig, t))
	}
	name := d.popIf(isDeclName)
	ctx := d.popContext()
	if labels != nil {
		return d.with(kFunction, ctx, name, labels, t)
	}
	return d.with(kFunction, ctx, name, t)
}

func (d *demangler) popFunctionType(k kind, clang bool) *node {
	f := d.newNode(k)
	if f == nil {
		return nil
	}
	if clang {
		ct := d.clangType()
		if ct == nil {
			return nil
		}
		f.add(ct)
	}
	f.add(d.popKind(kSendingResultFunctionType))
	f.add(d.popIf(func(k kind) bool {
		return k == kGlobalActorFunctionType || k == kIsolatedAnyFunctionType || k == kNonIsolatedCallerFunctionType
	}))
	f.add(d.popKind(kDifferentiableFunctionType))
	f.add(d.popIf(func(k kind) bool { return k == kThrowsAnnotation || k == kTypedThrowsAnnotation }))
	f.add(d.popKind(kConcurrentFunctionType))
	f.add(d.popKind(kAsyncAnnotation))
	f = addChild(f, d.popFunctionParams(kArgumentTuple))
	f = addChild(f, d.popFunctionParams(kReturnType))
	return d.typ(f)
}

func (d *demangler) popFunctionParams(k kind) *node {
	var p *node
	if d.popKind(kEmptyList) != nil {
		p = d.typ(d.newNode(kTuple))
	} else {
		p = d.popKind(kType)
	}
	return d.with(k, p)
}

func (d *demangler) popFunctionParamLabels(t *node) *node {
	if !d.oldTypes && d.popKind(kEmptyList) != nil {
		return d.newNode(kLabelList)
	}
	if t == nil || t.kind != kType {
		return nil
	}
	f := t.first()
	if f.is(kDependentGenericType) {
		f = f.child(1).first()
	}
	if f == nil || f.kind != kFunctionType && f.kind != kNoEscapeFunctionType {
		return nil
	}
	i := 0
	for _, k := range []kind{kSendingResultFunctionType, kGlobalActorFunctionType, kIsolatedAnyFunctionType,
		kNonIsolatedCallerFunctionType, kDifferentiableFunctionType} {
		if f.child(i).is(k) {
			i++
		}
	}
	if f.child(i).is(kThrowsAnnotation) || f.child(i).is(kTypedThrowsAnnotation) {
		i++
	}
	if f.child(i).is(kConcurrentFunctionType) {
		i++
	}
	if f.child(i).is(kAsyncAnnotation) {
		i++
	}
	argTuple := f.child(i)
	if !argTuple.is(kArgumentTuple) {
		return nil
	}
	params := argTuple.first().first()
	if params == nil {
		return nil
	}
	num := 1
	if params.kind == kTuple {
		num = params.numChildren()
	}
	if num == 0 {
		return nil
	}
	labels := d.newNode(kLabelList)
	if labels == nil {
		return nil
	}
	tuple := params
	if d.oldTypes && tuple.kind != kTuple {
		return labels
	}
	hasLabels := false
	for i := 0; i < num; i++ {
		var l *node
		if d.oldTypes {
			p := tuple.child(i)
			if p == nil {
				return nil
			}
			l = d.newNode(kFirstElementMarker)
			for j, c := range p.children {
				if c.kind == kTupleElementName {
					p.children = append(p.children[:j:j], p.children[j+1:]...)
					l = d.textNode(kIdentifier, c.text)
					break
				}
			}
		} else {
			l = d.pop()
		}
		if l == nil || l.kind != kIdentifier && l.kind != kFirstElementMarker {
			return nil
		}
		labels.add(l)
		hasLabels = hasLabels || l.kind != kFirstElementMarker
	}
	if !hasLabels {
		return d.newNode(kLabelList)
	}
	if !d.oldTypes {
		labels.reverseFrom(0)
	}
	return labels
}

// popList pops a list of items up to an EmptyList or FirstElementMarker
// (the grammar's "list ::= item '_' item*" or "y"), in order.
func (d *demangler) popList(k kind, item func() *node) *node {
	root := d.newNode(k)
	if root == nil {
		return nil
	}
	if d.popKind(kEmptyList) != nil {
		return root
	}
	for {
		first := d.popKind(kFirstElementMarker) != nil
		it := item()
		if it == nil {
			return nil
		}
		root.add(it)
		if first {
			break
		}
	}
	root.reverseFrom(0)
	return root
}

func (d *demangler) popTuple() *node {
	root := d.popList(kTuple, func() *node {
		e := d.newNode(kTupleElement)
		if e == nil {
			return nil
		}
		e.add(d.popKind(kVariadicMarker))
		if id := d.popKind(kIdentifier); id != nil {
			e.add(d.textNode(kTupleElementName, id.text))
		}
		t := d.popKind(kType)
		if t == nil {
			return nil
		}
		e.add(t)
		return e
	})
	return d.typ(root)
}

func (d *demangler) popTypeList() *node {
	return d.popList(kTypeList, func() *node { return d.popKind(kType) })
}

func (d *demangler) popProtocol() *node {
	if t := d.popKind(kType); t != nil {
		if t.numChildren() < 1 || !isProtocolNode(t) {
			return nil
		}
		return t
	}
	if r := d.popKind(kProtocolSymbolicReference); r != nil {
		return r
	}
	if r := d.popKind(kObjectiveCProtocolSymbolicReference); r != nil {
		return r
	}
	name := d.popIf(isDeclName)
	ctx := d.popContext()
	return d.typ(d.with(kProtocol, ctx, name))
}

func isAnyConformance(k kind) bool {
	switch k {
	case kConcreteProtocolConformance, kPackProtocolConformance, kDependentProtocolConformanceRoot,
		kDependentProtocolConformanceInherited, kDependentProtocolConformanceAssociated,
		kDependentProtocolConformanceOpaque:
		return true
	}
	return false
}

func (d *demangler) popAnyConformance() *node { return d.popIf(isAnyConformance) }

func (d *demangler) popAnyConformanceList() *node {
	return d.popList(kAnyProtocolConformanceList, d.popAnyConformance)
}

func (d *demangler) concreteConformance() *node {
	cond := d.popAnyConformanceList()
	ref := d.popKind(kProtocolConformanceRefInTypeModule)
	if ref == nil {
		ref = d.popKind(kProtocolConformanceRefInProtocolModule)
	}
	if ref == nil {
		mod := d.popModule()
		proto := d.popProtocol()
		ref = d.with(kProtocolConformanceRefInOtherModule, proto, mod)
	}
	t := d.popKind(kType)
	return d.with(kConcreteProtocolConformance, t, ref, cond)
}

func (d *demangler) popDependentConformance() *node {
	return d.popIf(func(k kind) bool {
		return k == kDependentProtocolConformanceRoot || k == kDependentProtocolConformanceInherited ||
			k == kDependentProtocolConformanceAssociated
	})
}

func (d *demangler) conformanceIndex() *node {
	i := d.index()
	if i <= 0 {
		return nil
	}
	if i == 1 {
		return d.newNode(kUnknownIndex)
	}
	return d.indexNode(kIndex, uint64(i-2))
}

func (d *demangler) dependentConformanceRoot() *node {
	idx := d.conformanceIndex()
	proto := d.popProtocol()
	t := d.popKind(kType)
	return d.with(kDependentProtocolConformanceRoot, t, proto, idx)
}

func (d *demangler) dependentConformanceInherited() *node {
	idx := d.conformanceIndex()
	proto := d.popProtocol()
	nested := d.popDependentConformance()
	return d.with(kDependentProtocolConformanceInherited, nested, proto, idx)
}

func (d *demangler) dependentConformanceAssociated() *node {
	idx := d.conformanceIndex()
	proto := d.popProtocol()
	t := d.popKind(kType)
	assoc := d.with(kDependentAssociatedConformance, t, proto)
	nested := d.popDependentConformance()
	return d.with(kDependentProtocolConformanceAssociated, nested, assoc, idx)
}

func (d *demangler) dependentConformanceOpaque() *node {
	t := d.popKind(kType)
	c := d.popDependentConformance()
	return d.with(kDependentProtocolConformanceOpaque, c, t)
}

func (d *demangler) popRetroactiveConformances() *node {
	var list *node
	for {
		c := d.popKind(kRetroactiveConformance)
		if c == nil {
			break
		}
		if list == nil {
			list = d.newNode(kTypeList)
			if list == nil {
				return nil
			}
		}
		list.add(c)
	}
	if list != nil {
		list.reverseFrom(0)
	}
	return list
}

// boundGenerics pops the type lists of a bound generic type, innermost
// first in the stack, outermost first in the result.
func (d *demangler) boundGenerics() (lists []*node, retro *node, ok bool) {
	retro = d.popRetroactiveConformances()
	for {
		l := d.newNode(kTypeList)
		if l == nil {
			return nil, nil, false
		}
		lists = append(lists, l)
		for t := d.popKind(kType); t != nil; t = d.popKind(kType) {
			l.add(t)
		}
		l.reverseFrom(0)
		if d.popKind(kEmptyList) != nil {
			break
		}
		if d.popKind(kFirstElementMarker) == nil {
			return nil, nil, false
		}
	}
	return lists, retro, true
}

func (d *demangler) boundGenericType() *node {
	lists, retro, ok := d.boundGenerics()
	if !ok {
		return nil
	}
	nom := d.popTypeChild()
	if nom == nil || !isAnyGeneric(nom.kind) {
		return nil
	}
	b := d.boundGenericArgs(nom, lists, 0, 0)
	if b == nil {
		return nil
	}
	if retro != nil {
		b.add(retro)
	}
	t := d.typ(b)
	d.addSubst(t)
	return t
}

func consumesGenericArgs(n *node) bool {
	switch n.kind {
	case kVariable, kSubscript, kImplicitClosure, kExplicitClosure, kDefaultArgumentInitializer,
		kInitializer, kPropertyWrapperBackingInitializer, kPropertyWrapperInitFromProjectedValue,
		kPropertyWrappedFieldInitAccessor, kStatic:
		return false
	}
	return true
}

func (d *demangler) boundGenericArgs(nom *node, lists []*node, i, depth int) *node {
	if nom == nil || i >= len(lists) || depth > 256 {
		return nil
	}
	if nom.kind == kTypeSymbolicReference || nom.kind == kProtocolSymbolicReference {
		rest := d.newNode(kTypeList)
		if rest == nil {
			return nil
		}
		for j := len(lists) - 1; j >= i; j-- {
			rest.children = append(rest.children, lists[j].children...)
		}
		return d.with(kBoundGenericOtherNominalType, d.typ(nom), rest)
	}
	if nom.numChildren() == 0 {
		return nil
	}
	ctx := nom.first()
	consumes := consumesGenericArgs(nom)
	args := lists[i]
	if consumes {
		i++
	}
	if i < len(lists) {
		var parent *node
		if ctx.kind == kExtension {
			parent = d.boundGenericArgs(ctx.child(1), lists, i, depth+1)
			parent = d.with(kExtension, ctx.first(), parent)
			if ctx.numChildren() == 3 {
				parent = addChild(parent, ctx.child(2))
			}
		} else {
			parent = d.boundGenericArgs(ctx, lists, i, depth+1)
		}
		nn := d.with(nom.kind, parent)
		if nn == nil {
			return nil
		}
		nn.children = append(nn.children, nom.children[1:]...)
		nom = nn
	}
	if !consumes || args.numChildren() == 0 {
		return nom
	}
	var k kind
	switch nom.kind {
	case kClass:
		k = kBoundGenericClass
	case kStructure:
		k = kBoundGenericStructure
	case kEnum:
		k = kBoundGenericEnum
	case kProtocol:
		k = kBoundGenericProtocol
	case kOtherNominalType:
		k = kBoundGenericOtherNominalType
	case kTypeAlias:
		k = kBoundGenericTypeAlias
	case kFunction, kConstructor:
		return d.with(kBoundGenericFunction, nom, args)
	default:
		return nil
	}
	return d.with(k, d.typ(nom), args)
}
