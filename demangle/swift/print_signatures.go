package swift

import "strconv"

// Printing generic signatures and the parameter lists of specializations.

func (p *printer) genericSignature(n *node, depth int) {
	p.s("<")
	num := n.numChildren()
	params := 0
	for params < num && n.child(params).kind == kDependentGenericParamCount {
		params++
	}
	firstReq := params
	for ; firstReq < num; firstReq++ {
		c := n.child(firstReq)
		if c.kind == kType {
			c = c.first()
		}
		if c == nil || c.kind != kDependentGenericParamPackMarker && c.kind != kDependentGenericParamValueMarker {
			break
		}
	}
	matches := func(gp *node, depth, index uint64) bool {
		return gp.is(kDependentGenericParamType) && gp.child(0).index == index && gp.child(1).index == depth
	}
	isPack := func(depth, index uint64) bool {
		for i := params; i < firstReq; i++ {
			c := n.child(i)
			if c.kind != kDependentGenericParamPackMarker {
				continue
			}
			c = c.first()
			if !c.is(kType) {
				continue
			}
			if matches(c.first(), depth, index) {
				return true
			}
		}
		return false
	}
	value := func(depth, index uint64) (bool, *node) {
		for i := params; i < firstReq; i++ {
			c := n.child(i)
			if c.kind != kDependentGenericParamValueMarker {
				continue
			}
			c = c.first()
			if !c.is(kType) {
				continue
			}
			if matches(c.first(), depth, index) {
				return true, c.child(1)
			}
		}
		return false, nil
	}
	for gd := 0; gd < params; gd++ {
		if gd != 0 {
			p.s("><")
		}
		count := n.child(gd).index
		for idx := uint64(0); idx < count; idx++ {
			if idx != 0 {
				p.s(", ")
			}
			if idx >= 128 {
				p.s("...")
				break
			}
			if isPack(uint64(gd), idx) {
				p.s("each ")
			}
			isValue, vt := value(uint64(gd), idx)
			if isValue {
				p.s("let ")
			}
			p.s(genericParameterName(uint64(gd), idx))
			if vt != nil {
				p.s(": ")
				p.print(vt, depth+1, false)
			}
		}
	}
	if firstReq != num && p.opt.displayWhere {
		p.s(" where ")
		for i := firstReq; i < num; i++ {
			if i > firstReq {
				p.s(", ")
			}
			p.print(n.child(i), depth+1, false)
		}
	}
	p.s(">")
}

func (p *printer) funcSigSpecParams(n *node, depth int) {
	i, end := 0, n.numChildren()
	for i < end {
		v := n.child(i).index
		switch v {
		case fsBoxToValue, fsBoxToStack, fsInOutToOut:
			p.print(n.child(i), depth+1, false)
			i++
		case fsConstantPropFunction, fsConstantPropGlobal:
			if i+2 > end {
				return
			}
			p.s("[")
			p.print(n.child(i), depth+1, false)
			p.s(" : ")
			text := n.child(i + 1).text
			if dm := demangleAsString(text, defaultOptions); dm != "" {
				p.s(dm)
			} else {
				p.s(text)
			}
			p.s("]")
			i += 2
		case fsConstantPropInteger, fsConstantPropFloat:
			if i+2 > end {
				return
			}
			p.s("[")
			p.print(n.child(i), depth+1, false)
			p.s(" : ")
			p.print(n.child(i+1), depth+1, false)
			p.s("]")
			i += 2
		case fsConstantPropString:
			if i+3 > end {
				return
			}
			p.s("[")
			p.print(n.child(i), depth+1, false)
			p.s(" : ")
			p.print(n.child(i+1), depth+1, false)
			p.s("'")
			p.print(n.child(i+2), depth+1, false)
			p.s("']")
			i += 3
		case fsConstantPropKeyPath:
			if i+4 > end {
				return
			}
			p.s("[")
			p.print(n.child(i), depth+1, false)
			p.s(" : ")
			p.print(n.child(i+1), depth+1, false)
			p.s("<")
			p.print(n.child(i+2), depth+1, false)
			p.s(",")
			p.print(n.child(i+3), depth+1, false)
			p.s(">]")
			i += 4
		case fsConstantPropStruct:
			if i+2 > end {
				return
			}
			p.s("[")
			p.print(n.child(i), depth+1, false)
			p.s(" : ")
			p.print(n.child(i+1), depth+1, false)
			p.s("]")
			i += 2
		case fsClosurePropPrevious:
			if i+2 > end {
				return
			}
			p.s("[Same As Argument ")
			p.u(n.child(i + 1).index)
			p.s("]")
			i += 2
		case fsClosureProp, fsEscapingClosureProp:
			if i+2 > end {
				return
			}
			p.s("[")
			p.print(n.child(i), depth+1, false)
			p.s(" : ")
			p.print(n.child(i+1), depth+1, false)
			p.s(", Argument Types : [")
			i += 2
			for i < end {
				c := n.child(i)
				if c.kind != kType {
					break
				}
				p.print(c, depth+1, false)
				i++
				if i < end && n.child(i).hasText {
					p.s(", ")
				}
			}
			p.s("]")
		default:
			p.print(n.child(i), depth+1, false)
			i++
		}
	}
}

func (p *printer) specializationPrefix(n *node, desc string, depth int, paramPrefix string) {
	if !p.opt.displaySpecs {
		if !p.specPrinted {
			p.s("specialized ")
			p.specPrinted = true
		}
		return
	}
	if n.first().is(kRepresentationChanged) {
		p.s("representation changed of ")
		return
	}
	p.s(desc + " <")
	sep := ""
	arg := 0
	for _, c := range n.children {
		switch c.kind {
		case kSpecializationPassID, kDroppedArgument:
		case kIsSerialized:
			p.s(sep)
			sep = ", "
			p.print(c, depth+1, false)
		default:
			if c.numChildren() > 0 {
				p.s(sep + paramPrefix)
				sep = ", "
				switch c.kind {
				case kFunctionSignatureSpecializationParam:
					p.s("Arg[" + strconv.Itoa(arg) + "] = ")
					p.funcSigSpecParams(c, depth)
				case kFunctionSignatureSpecializationReturn:
					p.s("Return = ")
					p.funcSigSpecParams(c, depth)
				default:
					p.print(c, depth+1, false)
				}
			}
			arg++
		}
	}
	p.s("> of ")
}
