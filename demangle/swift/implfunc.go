package swift

// SIL implementation function types: conventions, results, coroutine
// yields, differentiability and Clang types.

func (d *demangler) implParamConvention(k kind) *node {
	var attr string
	switch d.next() {
	case 'i':
		attr = "@in"
	case 'c':
		attr = "@in_constant"
	case 'l':
		attr = "@inout"
	case 'b':
		attr = "@inout_aliasable"
	case 'n':
		attr = "@in_guaranteed"
	case 'X':
		attr = "@in_cxx"
	case 'x':
		attr = "@owned"
	case 'g':
		attr = "@guaranteed"
	case 'e':
		attr = "@deallocating"
	case 'y':
		attr = "@unowned"
	case 'v':
		attr = "@pack_owned"
	case 'p':
		attr = "@pack_guaranteed"
	case 'm':
		attr = "@pack_inout"
	default:
		d.back()
		return nil
	}
	return d.with(k, d.textNode(kImplConvention, attr))
}

func (d *demangler) implResultConvention(k kind) *node {
	var attr string
	switch d.next() {
	case 'r':
		attr = "@out"
	case 'o':
		attr = "@owned"
	case 'd':
		attr = "@unowned"
	case 'u':
		attr = "@unowned_inner_pointer"
	case 'a':
		attr = "@autoreleased"
	case 'k':
		attr = "@pack_out"
	default:
		d.back()
		return nil
	}
	return d.with(k, d.textNode(kImplConvention, attr))
}

func (d *demangler) clangType() *node {
	n := d.natural()
	if n <= 0 || n > len(d.text)-d.pos {
		return nil
	}
	s := d.text[d.pos : d.pos+n]
	d.pos += n
	return d.textNode(kClangType, s)
}

func (d *demangler) implFunctionType() *node {
	t := d.newNode(kImplFunctionType)
	if t == nil {
		return nil
	}
	if d.nextIf('s') {
		lists, retro, ok := d.boundGenerics()
		if !ok {
			return nil
		}
		sig := d.popKind(kDependentGenericSignature)
		if sig == nil || len(lists) != 1 {
			return nil
		}
		subs := d.with(kImplPatternSubstitutions, sig, lists[0])
		if subs == nil {
			return nil
		}
		subs.add(retro)
		t.add(subs)
	}
	if d.nextIf('I') {
		lists, retro, ok := d.boundGenerics()
		if !ok || len(lists) != 1 {
			return nil
		}
		subs := d.with(kImplInvocationSubstitutions, lists[0])
		if subs == nil {
			return nil
		}
		subs.add(retro)
		t.add(subs)
	}
	sig := d.popKind(kDependentGenericSignature)
	if sig != nil && d.nextIf('P') {
		sig = d.changeKind(sig, kDependentPseudogenericSignature)
	}
	if d.nextIf('e') {
		t.add(d.newNode(kImplEscaping))
	}
	if d.nextIf('A') {
		t.add(d.newNode(kImplErasedIsolation))
	}
	if d.nextIf('N') {
		t.add(d.newNode(kImplNonisolatedNonsendingIsolation))
	}
	if d.nextIf('O') {
		t.add(d.newNode(kImplCalledOnceFunction))
	}
	switch c := d.peek(); c {
	case 'd', 'l', 'f', 'r':
		d.next()
		t.add(d.indexNode(kImplDifferentiabilityKind, uint64(c)))
	}
	var callee string
	switch d.next() {
	case 'y':
		callee = "@callee_unowned"
	case 'g':
		callee = "@callee_guaranteed"
	case 'x':
		callee = "@callee_owned"
	case 't':
		callee = "@convention(thin)"
	default:
		return nil
	}
	t.add(d.textNode(kImplConvention, callee))
	conv, clang := "", false
	switch d.next() {
	case 'B':
		conv = "block"
	case 'C':
		conv = "c"
	case 'z':
		switch d.next() {
		case 'B':
			conv, clang = "block", true
		case 'C':
			conv, clang = "c", true
		default:
			d.back()
			d.back()
		}
	case 'M':
		conv = "method"
	case 'O':
		conv = "objc_method"
	case 'K':
		conv = "closure"
	case 'W':
		conv = "witness_method"
	default:
		d.back()
	}
	if conv != "" {
		f := d.with(kImplFunctionConvention, d.textNode(kImplFunctionConventionName, conv))
		if f == nil {
			return nil
		}
		if clang {
			f = addChild(f, d.clangType())
		}
		if f == nil {
			return nil
		}
		t.add(f)
	}
	switch {
	case d.nextIf('A'):
		t.add(d.textNode(kImplCoroutineKind, "yield_once"))
	case d.nextIf('I'):
		t.add(d.textNode(kImplCoroutineKind, "yield_once_2"))
	case d.nextIf('G'):
		t.add(d.textNode(kImplCoroutineKind, "yield_many"))
	}
	if d.nextIf('h') {
		t.add(d.textNode(kImplFunctionAttribute, "@Sendable"))
	}
	if d.nextIf('H') {
		t.add(d.textNode(kImplFunctionAttribute, "@async"))
	}
	if d.nextIf('T') {
		t.add(d.newNode(kImplSendingResult))
	}
	t.add(sig)
	n := 0
	for p := d.implParamConvention(kImplParameter); p != nil; p = d.implParamConvention(kImplParameter) {
		t.add(p)
		p.add(d.implDifferentiability())
		if d.nextIf('T') {
			p.add(d.textNode(kImplParameterSending, "sending"))
		}
		if d.nextIf('I') {
			p.add(d.textNode(kImplParameterIsolated, "isolated"))
		}
		if d.nextIf('L') {
			p.add(d.textNode(kImplParameterImplicitLeading, "sil_implicit_leading_param"))
		}
		n++
	}
	for r := d.implResultConvention(kImplResult); r != nil; r = d.implResultConvention(kImplResult) {
		t.add(r)
		r.add(d.implDifferentiability())
		n++
	}
	for d.nextIf('Y') {
		y := d.implParamConvention(kImplYield)
		if y == nil {
			return nil
		}
		t.add(y)
		n++
	}
	if d.nextIf('z') {
		e := d.implResultConvention(kImplErrorResult)
		if e == nil {
			return nil
		}
		t.add(e)
		n++
	}
	if !d.nextIf('_') {
		return nil
	}
	for i := 0; i < n; i++ {
		ty := d.popKind(kType)
		if ty == nil {
			return nil
		}
		t.child(t.numChildren() - i - 1).add(ty)
	}
	return d.typ(t)
}

func (d *demangler) implDifferentiability() *node {
	attr := ""
	if d.nextIf('w') {
		attr = "@noDerivative"
	}
	return d.textNode(kImplParameterResultDifferentiability, attr)
}
