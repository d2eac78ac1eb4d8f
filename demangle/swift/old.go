package swift

import (
	"strings"
)

// oldDemangler parses the mangling of Swift 3 and earlier ("_T" without
// "0", and "_Tt" type names that Objective-C metadata still holds): a
// prefix grammar, read left to right by recursive descent.
type oldDemangler struct {
	*demangler
	subs []*node
}

const oldMaxDepth = 1024

// demangleOld parses an old-mangling symbol into a Global node.
func demangleOld(s string) *node {
	o := &oldDemangler{demangler: &demangler{text: s}}
	return o.topLevel()
}

func (o *oldDemangler) empty() bool { return o.pos >= len(o.text) }

// peek and next see "." past the end, as Swift's old demangler does.
func (o *oldDemangler) peek() byte {
	if o.empty() {
		return '.'
	}
	return o.text[o.pos]
}

func (o *oldDemangler) next() byte {
	c := o.peek()
	if !o.empty() {
		o.pos++
	}
	return c
}

func (o *oldDemangler) nextIf(c byte) bool {
	if o.empty() || o.text[o.pos] != c {
		return false
	}
	o.pos++
	return true
}

func (o *oldDemangler) topLevel() *node {
	if !o.nextIfStr("_T") {
		return nil
	}
	top := o.newNode(kGlobal)
	if top == nil {
		return nil
	}
	switch {
	case o.nextIfStr("TS"):
		for {
			spec := o.specializedAttribute(0)
			if spec == nil {
				return nil
			}
			top.add(spec)
			o.subs = o.subs[:0]
			if !o.nextIfStr("_TTS") {
				break
			}
		}
		if !o.nextIfStr("_T") {
			return nil
		}
	case o.nextIfStr("To"):
		top.add(o.newNode(kObjCAttribute))
	case o.nextIfStr("TO"):
		top.add(o.newNode(kNonObjCAttribute))
	case o.nextIfStr("TD"):
		top.add(o.newNode(kDynamicAttribute))
	case o.nextIfStr("Td"):
		top.add(o.newNode(kDirectMethodReferenceAttribute))
	case o.nextIfStr("TV"):
		top.add(o.newNode(kVTableAttribute))
	}
	g := o.global(0)
	if g == nil {
		return nil
	}
	top.add(g)
	if !o.empty() {
		top.add(o.textNode(kSuffix, o.text[o.pos:]))
		o.pos = len(o.text)
	}
	return top
}

// child runs f and adds its result to p; false if either is nil.
func child(p, c *node) bool {
	if p == nil || c == nil {
		return false
	}
	p.add(c)
	return true
}

func (o *oldDemangler) withType(k kind, depth int) *node {
	n := o.newNode(k)
	if !child(n, o.oldType(depth+1)) {
		return nil
	}
	return n
}

func (o *oldDemangler) withConformance(k kind, depth int) *node {
	n := o.newNode(k)
	if !child(n, o.protocolConformance(depth+1)) {
		return nil
	}
	return n
}

func (o *oldDemangler) global(depth int) *node {
	if depth > oldMaxDepth || o.empty() {
		return nil
	}
	if o.nextIf('M') {
		switch {
		case o.nextIf('P'):
			return o.withType(kGenericTypeMetadataPattern, depth)
		case o.nextIf('a'):
			return o.withType(kTypeMetadataAccessFunction, depth)
		case o.nextIf('L'):
			return o.withType(kTypeMetadataLazyCache, depth)
		case o.nextIf('m'):
			return o.withType(kMetaclass, depth)
		case o.nextIf('n'):
			return o.withType(kNominalTypeDescriptor, depth)
		case o.nextIf('f'):
			return o.withType(kFullTypeMetadata, depth)
		case o.nextIf('p'):
			n := o.newNode(kProtocolDescriptor)
			if !child(n, o.protocolName(depth+1)) {
				return nil
			}
			return n
		}
		return o.withType(kTypeMetadata, depth)
	}
	if o.nextIfStr("PA") {
		k := kPartialApplyForwarder
		if o.nextIf('o') {
			k = kPartialApplyObjCForwarder
		}
		f := o.newNode(k)
		if o.nextIfStr("__T") && !child(f, o.global(depth+1)) {
			return nil
		}
		return f
	}
	if o.nextIf('t') {
		return o.withType(kTypeMangling, depth)
	}
	if o.nextIf('w') {
		if o.pos+2 > len(o.text) {
			return nil
		}
		k, ok := valueWitnessKinds.get()[o.text[o.pos:o.pos+2]]
		o.pos += 2
		if !ok {
			return nil
		}
		w := o.newNode(kValueWitness)
		if w == nil {
			return nil
		}
		w.add(o.indexNode(kIndex, uint64(k)))
		if !child(w, o.oldType(depth+1)) {
			return nil
		}
		return w
	}
	if o.nextIf('W') {
		switch {
		case o.nextIf('V'):
			return o.withType(kValueWitnessTable, depth)
		case o.nextIf('v'):
			f := o.newNode(kFieldOffset)
			var dir uint64
			switch {
			case o.nextIf('d'):
			case o.nextIf('i'):
				dir = 1
			default:
				return nil
			}
			if !child(f, o.indexNode(kDirectness, dir)) || !child(f, o.entity(depth+1)) {
				return nil
			}
			return f
		case o.nextIf('P'):
			return o.withConformance(kProtocolWitnessTable, depth)
		case o.nextIf('G'):
			return o.withConformance(kGenericProtocolWitnessTable, depth)
		case o.nextIf('I'):
			return o.withConformance(kGenericProtocolWitnessTableInstantiationFunction, depth)
		case o.nextIf('l'), o.nextIf('L'):
			k := kLazyProtocolWitnessTableAccessor
			if o.text[o.pos-1] == 'L' {
				k = kLazyProtocolWitnessTableCacheVariable
			}
			n := o.newNode(k)
			if !child(n, o.oldType(depth+1)) || !child(n, o.protocolConformance(depth+1)) {
				return nil
			}
			return n
		case o.nextIf('a'):
			return o.withConformance(kProtocolWitnessTableAccessor, depth)
		case o.nextIf('t'):
			n := o.newNode(kAssociatedTypeMetadataAccessor)
			if !child(n, o.protocolConformance(depth+1)) || !child(n, o.declName(depth+1)) {
				return nil
			}
			return n
		case o.nextIf('T'):
			n := o.newNode(kAssociatedTypeWitnessTableAccessor)
			if !child(n, o.protocolConformance(depth+1)) || !child(n, o.declName(depth+1)) ||
				!child(n, o.protocolName(depth+1)) {
				return nil
			}
			return n
		}
		return nil
	}
	if o.nextIf('T') {
		switch {
		case o.nextIf('R'), o.nextIf('r'):
			k := kReabstractionThunk
			if o.text[o.pos-1] == 'R' {
				k = kReabstractionThunkHelper
			}
			t := o.newNode(k)
			if t == nil || !o.reabstractSignature(t, depth+1) {
				return nil
			}
			return t
		case o.nextIf('W'):
			t := o.newNode(kProtocolWitness)
			if !child(t, o.protocolConformance(depth+1)) || !child(t, o.entity(depth+1)) {
				return nil
			}
			return t
		}
		return nil
	}
	return o.entity(depth + 1)
}

func (o *oldDemangler) specializedAttribute(depth int) *node {
	notReAbstracted := false
	if o.nextIf('g') || func() bool { notReAbstracted = o.nextIf('r'); return notReAbstracted }() {
		k := kGenericSpecialization
		if notReAbstracted {
			k = kGenericSpecializationNotReAbstracted
		}
		spec := o.newNode(k)
		if spec == nil {
			return nil
		}
		if o.nextIf('q') {
			spec.add(o.newNode(kIsSerialized))
		}
		spec.add(o.indexNode(kSpecializationPassID, uint64(uint32(int32(o.next())-48))))
		for !o.nextIf('_') {
			param := o.newNode(kGenericSpecializationParam)
			if !child(param, o.oldType(depth+1)) {
				return nil
			}
			for !o.nextIf('_') {
				if !child(param, o.protocolConformance(depth+1)) {
					return nil
				}
			}
			spec.add(param)
		}
		return spec
	}
	if o.nextIf('f') {
		spec := o.newNode(kFunctionSignatureSpecialization)
		if spec == nil {
			return nil
		}
		if o.nextIf('q') {
			spec.add(o.newNode(kIsSerialized))
		}
		spec.add(o.indexNode(kSpecializationPassID, uint64(uint32(int32(o.next())-48))))
		return o.funcSigSpecialization(spec, depth+1)
	}
	return nil
}

func (o *oldDemangler) paramKind(v uint64) *node {
	return o.indexNode(kFunctionSignatureSpecializationParamKind, v)
}

func (o *oldDemangler) payload(s string) *node {
	return o.textNode(kFunctionSignatureSpecializationParamPayload, s)
}

func (o *oldDemangler) readUntil(c byte) (string, bool) {
	i := strings.IndexByte(o.text[o.pos:], c)
	if i < 0 {
		o.pos = len(o.text)
		return "", false
	}
	s := o.text[o.pos : o.pos+i]
	o.pos += i
	return s, true
}

func (o *oldDemangler) funcSigSpecialization(spec *node, depth int) *node {
	for !o.nextIf('_') {
		param := o.newNode(kFunctionSignatureSpecializationParam)
		if param == nil {
			return nil
		}
		switch {
		case o.nextIfStr("n_"):
		case o.nextIfStr("cp"):
			if !o.constantProp(param, depth+1) {
				return nil
			}
		case o.nextIfStr("cl"):
			name := o.identifier(depth+1, kNone)
			if name == nil {
				return nil
			}
			param.add(o.paramKind(fsClosureProp))
			param.add(o.payload(name.text))
			for o.peek() != '_' {
				t := o.oldType(depth + 1)
				if t == nil {
					break
				}
				param.add(t)
			}
			if !o.nextIf('_') {
				return nil
			}
		case o.nextIfStr("i_"):
			param.add(o.paramKind(fsBoxToValue))
		case o.nextIfStr("k_"):
			param.add(o.paramKind(fsBoxToStack))
		case o.nextIfStr("r_"):
			param.add(o.paramKind(fsInOutToOut))
		default:
			var v uint64
			if o.nextIf('d') {
				v |= fsDead
			}
			if o.nextIf('g') {
				v |= fsOwnedToGuaranteed
			}
			if o.nextIf('o') {
				v |= fsGuaranteedToOwned
			}
			if o.nextIf('s') {
				v |= fsSROA
			}
			if !o.nextIf('_') || v == 0 {
				return nil
			}
			param.add(o.paramKind(v))
		}
		spec.add(param)
	}
	return spec
}

func (o *oldDemangler) constantProp(p *node, depth int) bool {
	switch {
	case o.nextIfStr("fr"), o.nextIf('g'):
		k := uint64(fsConstantPropFunction)
		if o.text[o.pos-1] == 'g' {
			k = fsConstantPropGlobal
		}
		name := o.identifier(depth+1, kNone)
		if name == nil || !o.nextIf('_') {
			return false
		}
		p.add(o.paramKind(k))
		p.add(o.payload(name.text))
		return true
	case o.nextIf('i'), o.nextIfStr("fl"):
		k := uint64(fsConstantPropInteger)
		if o.text[o.pos-1] == 'l' {
			k = fsConstantPropFloat
		}
		s, ok := o.readUntil('_')
		if !ok || !o.nextIf('_') {
			return false
		}
		p.add(o.paramKind(k))
		p.add(o.payload(s))
		return true
	case o.nextIf('s'):
		if !o.nextIf('e') {
			return false
		}
		enc := o.peek()
		if enc != '0' && enc != '1' {
			return false
		}
		encStr := "u8"
		if enc == '1' {
			encStr = "u16"
		}
		o.pos++
		if !o.nextIf('v') {
			return false
		}
		str := o.identifier(depth+1, kNone)
		if str == nil || !o.nextIf('_') {
			return false
		}
		p.add(o.paramKind(fsConstantPropString))
		p.add(o.payload(encStr))
		p.add(o.payload(str.text))
		return true
	}
	return false
}
