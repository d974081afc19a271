package storage

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Stored objects never carry metadata.resourceVersion: an object's version is its etcd mod revision,
// known only once it is written. Readers splice it into the stored bytes with WithResourceVersion, so
// a list can stream stored JSON without decoding and re-encoding each object.

// ParseResourceVersion reads a resourceVersion a client sent back: a revision number from a previous
// response. "0" and "" mean something else to every caller, which handles them first; anything else
// that is not a positive number is an Invalid StorageError saying what to send.
func ParseResourceVersion(rv string) (int64, error) {
	// Unsigned, as kube parses it: a sign ("+5") is not part of a revision.
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil || n == 0 || n > math.MaxInt64 {
		return 0, &StorageError{Code: Invalid, Err: fmt.Errorf(
			"resourceVersion %q is not valid: use a revision number from a previous response, \"0\" or none", rv)}
	}
	return int64(n), nil
}

// ErrNoMetadata is returned for a stored value that is not a JSON object with a metadata object.
var ErrNoMetadata = errors.New("stored value has no metadata object")

// WithResourceVersion returns value with "resourceVersion":"<rv>" as the first member of its
// top-level metadata object. value must not already carry a resourceVersion there. It appends to dst
// (which may be nil) and returns the result, so callers can reuse buffers.
func WithResourceVersion(dst, value []byte, rv int64) ([]byte, error) {
	at, empty := metadataBody(value)
	if at < 0 {
		return dst, ErrNoMetadata
	}
	dst = append(dst, value[:at]...)
	dst = append(dst, `"resourceVersion":"`...)
	dst = strconv.AppendInt(dst, rv, 10)
	dst = append(dst, '"')
	if !empty {
		dst = append(dst, ',')
	}
	return append(dst, value[at:]...), nil
}

// metadataBody returns the offset just after the '{' that opens the top-level "metadata" object, and
// whether that object is empty; -1 when there is none. It scans only the top level, skipping strings
// and nested values, and stops at metadata, which encoders put near the front.
func metadataBody(v []byte) (int, bool) {
	i := skipSpace(v, 0)
	if i >= len(v) || v[i] != '{' {
		return -1, false
	}
	i++
	for {
		i = skipSpace(v, i)
		if i >= len(v) || v[i] != '"' {
			return -1, false
		}
		keyStart := i + 1
		i = skipString(v, i)
		if i < 0 {
			return -1, false
		}
		key := v[keyStart : i-1]
		i = skipSpace(v, i)
		if i >= len(v) || v[i] != ':' {
			return -1, false
		}
		i = skipSpace(v, i+1)
		if string(key) == "metadata" {
			if i >= len(v) || v[i] != '{' {
				return -1, false
			}
			j := skipSpace(v, i+1)
			return i + 1, j < len(v) && v[j] == '}'
		}
		if i = skipValue(v, i); i < 0 {
			return -1, false
		}
		i = skipSpace(v, i)
		if i >= len(v) || v[i] != ',' {
			return -1, false
		}
		i++
	}
}

func skipSpace(v []byte, i int) int {
	for i < len(v) && (v[i] == ' ' || v[i] == '\t' || v[i] == '\n' || v[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the offset after the string starting at v[i] == '"', or -1.
func skipString(v []byte, i int) int {
	for i++; i < len(v); i++ {
		switch v[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipValue returns the offset after the JSON value starting at v[i], or -1.
func skipValue(v []byte, i int) int {
	if i >= len(v) {
		return -1
	}
	switch v[i] {
	case '"':
		return skipString(v, i)
	case '{', '[':
		depth := 0
		for ; i < len(v); i++ {
			switch v[i] {
			case '"':
				if i = skipString(v, i); i < 0 {
					return -1
				}
				i--
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	default:
		for ; i < len(v); i++ {
			switch v[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
		}
		return i
	}
}
