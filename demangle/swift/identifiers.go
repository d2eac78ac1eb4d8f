package swift

import "strings"

func isWordStart(c byte) bool { return !isDigit(c) && c != '_' && c != 0 }
func isWordEnd(c, prev byte) bool {
	return c == '_' || c == 0 || !isUpper(prev) && isUpper(c)
}

func (d *demangler) identifier() *node {
	words, puny := false, false
	c := d.peek()
	if !isDigit(c) {
		return nil
	}
	if c == '0' {
		d.next()
		if d.peek() == '0' {
			d.next()
			puny = true
		} else {
			words = true
		}
	}
	// An identifier of one run of the name's text (most) is that run;
	// one spelled with words is put together in d.idBuf.
	var one string
	parts := 0
	for {
		for words && (isLower(d.peek()) || isUpper(d.peek())) {
			c := d.next()
			var w int
			if isLower(c) {
				w = int(c - 'a')
			} else {
				w = int(c - 'A')
				words = false
			}
			if w >= len(d.words) {
				return nil
			}
			d.idPart(&one, &parts, d.words[w])
		}
		if d.nextIf('0') {
			break
		}
		n := d.natural()
		if n <= 0 {
			return nil
		}
		if puny {
			d.nextIf('_')
		}
		if n > len(d.text)-d.pos {
			return nil
		}
		s := d.text[d.pos : d.pos+n]
		if puny {
			u, ok := punycode(s)
			if !ok {
				return nil
			}
			d.idPart(&one, &parts, u)
		} else {
			d.idPart(&one, &parts, s)
			start := -1
			// (Past maxWords no word is kept: the scan stops.)
			for i := 0; i <= len(s) && len(d.words) < maxWords; i++ {
				var c byte
				if i < len(s) {
					c = s[i]
				}
				if start >= 0 && isWordEnd(c, s[i-1]) {
					if i-start >= 2 && len(d.words) < maxWords {
						d.words = append(d.words, s[start:i])
					}
					start = -1
				}
				if start < 0 && isWordStart(c) {
					start = i
				}
			}
		}
		d.pos += n
		if !words {
			break
		}
	}
	if parts > 1 {
		one = string(d.idBuf)
	}
	if one == "" {
		return nil
	}
	n := d.textNode(kIdentifier, one)
	d.addSubst(n)
	return n
}

// idPart adds x to the identifier being read, whose first part is one and
// whose parts number parts.
func (d *demangler) idPart(one *string, parts *int, x string) {
	switch *parts {
	case 0:
		*one = x
	case 1:
		d.idBuf = append(append(d.idBuf[:0], *one...), x...)
	default:
		d.idBuf = append(d.idBuf, x...)
	}
	*parts++
}

func (d *demangler) operatorIdentifier() *node {
	id := d.popKind(kIdentifier)
	if id == nil {
		return nil
	}
	const table = "& @/= >    <*!|+?%-~   ^ ."
	var op strings.Builder
	for i := 0; i < len(id.text); i++ {
		c := id.text[i]
		if c >= 0x80 {
			op.WriteByte(c)
			continue
		}
		if !isLower(c) || table[c-'a'] == ' ' {
			return nil
		}
		op.WriteByte(table[c-'a'])
	}
	switch d.next() {
	case 'i':
		return d.textNode(kInfixOperator, op.String())
	case 'p':
		return d.textNode(kPrefixOperator, op.String())
	case 'P':
		return d.textNode(kPostfixOperator, op.String())
	}
	return nil
}

func (d *demangler) localIdentifier() *node {
	if d.nextIf('L') {
		disc := d.popKind(kIdentifier)
		return d.with(kPrivateDeclName, disc, d.popIf(isDeclName))
	}
	if d.nextIf('l') {
		return d.with(kPrivateDeclName, d.popKind(kIdentifier))
	}
	if c := d.peek(); c >= 'a' && c <= 'j' || c >= 'A' && c <= 'J' {
		d.next()
		kindNd := d.textNode(kIdentifier, string(c))
		r := d.newNode(kRelatedEntityDeclName)
		r = addChild(r, kindNd)
		return addChild(r, d.pop())
	}
	disc := d.indexAsNode()
	return d.with(kLocalDeclName, disc, d.popIf(isDeclName))
}
