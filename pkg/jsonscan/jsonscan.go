// Package jsonscan reads the members of stored JSON objects without decoding them: each member's
// name and raw value, in order. It is for hot paths that need a few members of a large object
// (the garbage collector's graph, a Table's rows) and must not pay for decoding the rest; anything
// it does not understand is reported, so that the caller can decode the object the ordinary way.
package jsonscan

import "bytes"

// WalkObject calls fn with each member of the JSON object data until fn returns false. It reports
// false when it stopped early or met something it does not understand (a name with escapes,
// malformed input).
func WalkObject(data []byte, fn func(key, val []byte) bool) bool {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return true
	}
	for {
		i = skipSpace(data, i)
		if i >= len(data) || data[i] != '"' {
			return false
		}
		end, ok := skipString(data, i)
		if !ok {
			return false
		}
		key := data[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return false
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		i = skipSpace(data, i+1)
		valEnd, ok := SkipValue(data, i)
		if !ok {
			return false
		}
		if !fn(key, data[i:valEnd]) {
			return false
		}
		if i, ok = next(data, valEnd, '}'); !ok || i < 0 {
			return ok
		}
	}
}

// WalkArray calls fn with each element of the JSON array data until fn returns false. It reports
// false when it stopped early or met malformed input.
func WalkArray(data []byte, fn func(val []byte) bool) bool {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return true
	}
	for {
		i = skipSpace(data, i)
		end, ok := SkipValue(data, i)
		if !ok {
			return false
		}
		if !fn(data[i:end]) {
			return false
		}
		if i, ok = next(data, end, ']'); !ok || i < 0 {
			return ok
		}
	}
}

// next reads the separator after a member or element: the offset of the next one after a comma,
// -1 at the closing bracket, or false for anything else.
func next(data []byte, i int, closing byte) (int, bool) {
	i = skipSpace(data, i)
	if i >= len(data) {
		return 0, false
	}
	switch data[i] {
	case ',':
		return i + 1, true
	case closing:
		return -1, true
	}
	return 0, false
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\n' || data[i] == '\t' || data[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at data[i] ('"').
func skipString(data []byte, i int) (int, bool) {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return 0, false
}

// SkipValue returns the index after the value starting at data[i]. Objects and arrays are skipped
// by counting brackets outside strings; a scalar ends at the next delimiter, unchecked.
func SkipValue(data []byte, i int) (int, bool) {
	if i >= len(data) {
		return 0, false
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for ; i < len(data); i++ {
			switch data[i] {
			case '"':
				end, ok := skipString(data, i)
				if !ok {
					return 0, false
				}
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
		}
		return 0, false
	default:
		for ; i < len(data); i++ {
			switch data[i] {
			case ',', '}', ']', ' ', '\n', '\t', '\r':
				return i, true
			}
		}
		return i, true
	}
}

// PlainString returns the contents of the JSON string val when encoding/json would write those
// contents back unchanged (Plain). A caller can then copy val instead of decoding and encoding it
// again.
func PlainString(val []byte) ([]byte, bool) {
	if len(val) < 2 || val[0] != '"' || val[len(val)-1] != '"' || !Plain(val[1:len(val)-1]) {
		return nil, false
	}
	return val[1 : len(val)-1], true
}

// Plain reports whether encoding/json writes the string s as it is between its quotes: printable
// ASCII with no quote, no backslash and none of the characters it escapes for HTML (<, >, &).
func Plain[S string | []byte](s S) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
