package demangle

import (
	"encoding/binary"
	"math/bits"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// rust demangles a legacy (_ZN…E) or v0 (_R…) Rust symbol, with the hash
// when full is set, as rustc-demangle's "{}" and "{:#}" forms. ok is false
// when s is neither.
func rust(s string, full bool) (string, bool) {
	s = stripLLVMSuffix(s)
	if rest, ok := legacyRest(s); ok {
		// What follows the path decides before anything is built:
		// most _ZN names are C++, whose parameters follow the "E".
		if rest != "" && (rest[0] != '.' || !symbolLike(rest)) {
			return "", false
		}
		out, rest, _ := rustLegacy(s, full)
		return out + rest, true
	}
	return rustV0(s, full)
}

// mayBeRustLegacy reports whether rust may take s, an Itanium-prefixed
// (_Z) name, as a legacy Rust name: its identifiers end in an "E" that
// ends s or is followed by a "." suffix. rust's own check, on s less
// its ".llvm." suffix, can only fail where this one does, as that suffix
// begins with a "." (and a prefix of s holds no "E" that s does not).
func mayBeRustLegacy(s string) bool {
	// Such a name ends with that "E" or holds a "."; most C++ names,
	// whose last parameter is not a nested name, are ruled out here
	// without their identifiers being read.
	if s == "" || s[len(s)-1] != 'E' && strings.IndexByte(s, '.') < 0 {
		return false
	}
	rest, ok := legacyRest(s)
	return ok && (rest == "" || rest[0] == '.')
}

// cutLegacyPrefix strips a legacy Rust name's "_ZN" (or, as some tools
// print it, "__ZN" or "ZN"); ok is false when s has none of them.
func cutLegacyPrefix(s string) (string, bool) {
	switch {
	case strings.HasPrefix(s, "_ZN"):
		return s[3:], true
	case strings.HasPrefix(s, "__ZN"):
		return s[4:], true
	case strings.HasPrefix(s, "ZN"):
		return s[2:], true
	}
	return "", false
}

// legacyRest returns what follows the "E" of a legacy Rust name's
// length-prefixed identifiers (as rustLegacy reads them), without
// decoding them; ok is false when s is not such a name.
func legacyRest(s string) (rest string, ok bool) {
	s, ok = cutLegacyPrefix(s)
	if !ok {
		return "", false
	}
	for {
		if s == "" {
			return "", false
		}
		if s[0] == 'E' {
			return s[1:], true
		}
		n, l := 0, 0
		for n < len(s) && s[n] >= '0' && s[n] <= '9' {
			if l = l*10 + int(s[n]-'0'); l > len(s) {
				return "", false // no room, or more digits than an int holds
			}
			n++
		}
		if n == 0 || l > len(s)-n || !isASCII(s[n:n+l]) {
			return "", false
		}
		s = s[n+l:]
	}
}

// rustLegacyHashed demangles t, an Itanium-prefixed ("_ZN") name that
// ends in a Rust hash (endsInRustHash), as rustLegacy does, when its
// path ends it, all of it is ASCII and none of its identifiers begins as
// C++'s anonymous namespace (_GLOBAL__N_1), which C++ takes first (see
// demangleName); ok is false otherwise. It reads the name once, checking
// and unescaping each identifier as it goes, and allocates only the
// result (when it fits buf).
func rustLegacyHashed(t string, full bool) (string, bool) {
	var buf [256]byte
	out := buf[:0]
	s := t[len("_ZN"):]
	for i := 0; ; i++ {
		if s == "" {
			return "", false
		}
		if s[0] == 'E' {
			if len(s) != 1 {
				return "", false
			}
			return string(out), true
		}
		n, l := 0, 0
		for n < len(s) && s[n] >= '0' && s[n] <= '9' {
			if l = l*10 + int(s[n]-'0'); l > len(s) {
				return "", false
			}
			n++
		}
		if n == 0 || l > len(s)-n {
			return "", false
		}
		from := s[n:] // e and the rest of the name
		e := from[:l]
		s = from[l:]
		if strings.HasPrefix(e, "_GLOBAL_") {
			return "", false
		}
		if !full && i > 0 && s == "E" && isRustHash(e) {
			// The hash, ASCII as it is hexadecimal.
			return string(out), true
		}
		if i > 0 {
			out = append(out, ':', ':')
		}
		var ok bool
		if out, ok = appendUnescaped(out, from, l); !ok {
			return "", false
		}
	}
}

// isASCII reports whether s holds no byte from 0x80 up, eight at a time.
func isASCII(s string) bool {
	j := 0
	for ; j+8 <= len(s); j += 8 {
		if load64(s[j:j+8])&0x8080808080808080 != 0 {
			return false
		}
	}
	for ; j < len(s); j++ {
		if s[j] >= 0x80 {
			return false
		}
	}
	return true
}

// load64 is w's first eight bytes as a little-endian word: one load, w
// being sliced to its length by the caller (as binary.LittleEndian's
// Uint64, for a string).
func load64(w string) uint64 {
	_ = w[7]
	return uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
		uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
}

// stripLLVMSuffix drops a ThinLTO ".llvm.HEX" suffix, the last thing LLVM
// appends to a symbol name.
func stripLLVMSuffix(s string) string {
	i := strings.Index(s, ".llvm.")
	if i < 0 {
		return s
	}
	for _, c := range s[i+len(".llvm."):] {
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'F' || c == '@') {
			return s
		}
	}
	return s[:i]
}

// symbolLike reports whether s is ASCII letters, digits and punctuation
// only (the ".exit.i.i" of an LLVM IR label, say).
func symbolLike(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f {
			return false
		}
	}
	return true
}

// rustLegacy demangles a legacy Rust name: "_ZN", length-prefixed
// identifiers, "E", the last identifier usually the "h" + 16 hex digit
// hash. Unlike Itanium C++, a leading "_" is part of the identifier;
// rustc only adds one before a "$" escape. rest is what follows the "E".
func rustLegacy(s string, full bool) (out, rest string, ok bool) {
	s, ok = cutLegacyPrefix(s)
	if !ok {
		return "", "", false
	}
	if !isASCII(s) {
		return "", "", false
	}
	var buf [16]string
	elems, size := buf[:0], 0
	for {
		if s == "" {
			return "", "", false
		}
		if s[0] == 'E' {
			s = s[1:]
			break
		}
		n := 0
		for n < len(s) && s[n] >= '0' && s[n] <= '9' {
			n++
		}
		if n == 0 {
			return "", "", false
		}
		l, err := strconv.Atoi(s[:n])
		if err != nil || l > len(s)-n {
			return "", "", false
		}
		elems = append(elems, s[n:n+l])
		size += l + 2 // and "::"
		s = s[n+l:]
	}
	var bytes [256]byte
	b := bytes[:0]
	if size > len(bytes) {
		b = make([]byte, 0, size) // escapes only shorten
	}
	for i, e := range elems {
		if !full && i == len(elems)-1 && i > 0 && isRustHash(e) {
			break
		}
		if i > 0 {
			b = append(b, ':', ':')
		}
		b, _ = appendUnescaped(b, e, len(e)) // s is ASCII
	}
	return string(b), s, true
}

// isRustHash reports whether e is "h" followed by hex digits.
func isRustHash(e string) bool {
	if len(e) < 1 || e[0] != 'h' {
		return false
	}
	for i := 1; i < len(e); i++ {
		if hexDigit[e[i]]&anyCase == 0 {
			return false
		}
	}
	return true
}

// hexDigit classes the bytes that are hexadecimal digits: lower (digits
// and a-f, as rustc writes a hash) or anyCase (A-F too); a table, as a
// name's hash is checked twice and each check's compares per byte cost
// more than the lookups.
var hexDigit = func() (t [256]uint8) {
	for c := '0'; c <= '9'; c++ {
		t[c] = lower | anyCase
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = lower | anyCase
	}
	for c := 'A'; c <= 'F'; c++ {
		t[c] = anyCase
	}
	return t
}()

const (
	lower = 1 << iota
	anyCase
)

// legacyEscape is the character a legacy "$XX$" escape stands for; a
// switch, not a map, so that the package's init builds nothing.
func legacyEscape(esc string) (string, bool) {
	switch esc {
	case "SP":
		return "@", true
	case "BP":
		return "*", true
	case "RF":
		return "&", true
	case "LT":
		return "<", true
	case "GT":
		return ">", true
	case "LP":
		return "(", true
	case "RP":
		return ")", true
	case "C":
		return ",", true
	}
	return "", false
}

// appendUnescaped appends identifier e, s[:n], to out with its "$XX$"
// escapes and ".." path separators decoded; an escape it does not know
// ends decoding, and the rest is appended as it is. ok is false, and out
// of no use, when e is not ASCII. What follows e in s (the rest of the
// name) lets it read eight bytes at a time even near e's end.
func appendUnescaped(out []byte, s string, n int) (_ []byte, ok bool) {
	i := 0
	if n >= 2 && s[0] == '_' && s[1] == '$' {
		i = 1
	}
	for i < n {
		// The plain run: each eight bytes of s stored whole into out's
		// room, then out lengthened by those of the run (most of an
		// identifier's runs are a word or two, and a copy of each was
		// a call of memmove); then byte by byte, where s or out's
		// room ends.
		for i+8 <= len(s) && cap(out)-len(out) >= 8 {
			x := load64(s[i : i+8])
			binary.LittleEndian.PutUint64(out[len(out):len(out)+8], x)
			k := min(plainWord(x), n-i)
			out, i = out[:len(out)+k], i+k
			if k < 8 {
				break
			}
		}
		j := i
		for j < n && !legacySpecial[s[j]] {
			j++
		}
		out = append(out, s[i:j]...)
		if i = j; i == n {
			break
		}
		switch s[i] {
		case '.':
			if i+1 < n && s[i+1] == '.' {
				out = append(out, ':', ':')
				i += 2
			} else {
				out = append(out, '.')
				i++
			}
			continue
		case '$':
			end := i + 1 // the escape's closing "$"; escapes are short
			for end < n && s[end] != '$' {
				end++
			}
			if end == n {
				return append(out, s[i:n]...), isASCII(s[i:n])
			}
			esc := s[i+1 : end]
			if c, ok := asciiEscape(esc); ok {
				out = append(out, c)
			} else if c, ok := escapedRune(esc); ok {
				out = utf8.AppendRune(out, c)
			} else {
				return append(out, s[i:n]...), isASCII(s[i:n])
			}
			i = end + 1
			continue
		}
		return out, false // not ASCII
	}
	return out, true
}

// plainWord is how many of the eight bytes of x (the first in its lowest
// byte) are, from the first, ASCII and neither "$" nor ".": the first
// other byte found by the zero-byte test on the bytes less "$" and less
// ".", 8 when there is none.
func plainWord(x uint64) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	d, p := x^('$'*ones), x^('.'*ones)
	// (A zero byte's high bit is set by v-ones&^v, and no byte's below
	// it; bytes above may be flagged wrongly, which the lowest set bit
	// never is.)
	m := ((d-ones)&^d | (p-ones)&^p | x) & highs
	return bits.TrailingZeros64(m) / 8 // 64 / 8 when m is 0
}

// legacySpecial marks the bytes a plain run (plainWord) stops at.
var legacySpecial = func() (t [256]bool) {
	t['$'], t['.'] = true, true
	for c := 0x80; c < 0x100; c++ {
		t[c] = true
	}
	return t
}()

// asciiEscape is the ASCII character a legacy "$XX$" escape stands for:
// legacyEscape's, or a "$uXX$" escape of a printable one (escapedRune's
// reading, without its parse).
func asciiEscape(esc string) (byte, bool) {
	if len(esc) == 3 && esc[0] == 'u' {
		hi, lo := hexDigit[esc[1]]&lower != 0, hexDigit[esc[2]]&lower != 0
		if !hi || !lo {
			return 0, false
		}
		c := hexValue(esc[1])<<4 | hexValue(esc[2])
		if c < ' ' || c >= 0x7f {
			return 0, false // a control character or past ASCII: escapedRune's
		}
		return c, true
	}
	if r, ok := legacyEscape(esc); ok {
		return r[0], true
	}
	return 0, false
}

// hexValue is the value of c, a lower-case hexadecimal digit.
func hexValue(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

// escapedRune decodes "u" + lower-case hex, a printable code point.
func escapedRune(esc string) (rune, bool) {
	if len(esc) < 2 || esc[0] != 'u' {
		return 0, false
	}
	for i := 1; i < len(esc); i++ {
		if c := esc[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return 0, false
		}
	}
	v, err := strconv.ParseUint(esc[1:], 16, 32)
	if err != nil || v > unicode.MaxRune || !utf8.ValidRune(rune(v)) || unicode.IsControl(rune(v)) {
		return 0, false
	}
	return rune(v), true
}
