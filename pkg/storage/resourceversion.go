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

// WithResourceVersion returns value with "resourceVersion":"<rv>" in its top-level metadata object
// where kube's encoders put it, so that responses match kube's byte for byte: after name,
// generateName, namespace, selfLink and uid in a built-in kind's ObjectMeta order, and in key order in
// a custom resource's (unstructured JSON sorts keys). Which order an object is in is told from its
// first metadata key: typed ObjectMeta starts with one of those five, sorted keys never do (stored
// objects always have a creationTimestamp). value must not already carry a resourceVersion there. It
// appends to dst (which may be nil) and returns the result, so callers can reuse buffers. Only the
// keys before the insertion point are scanned, without decoding or allocating; AppendWithResourceVersion
// skips even that for values whose place the watch cache found once.
func WithResourceVersion(dst, value []byte, rv int64) ([]byte, error) {
	at, last, err := ResourceVersionPlace(value)
	if err != nil {
		return dst, err
	}
	return spliceResourceVersion(dst, value, rv, at, last), nil
}

// AppendWithResourceVersion is WithResourceVersion for a stored object, using the place recorded in
// kv (RVAt) when there is one.
func AppendWithResourceVersion(dst []byte, kv KeyValue) ([]byte, error) {
	if kv.RVAt > 0 {
		return spliceResourceVersion(dst, kv.Value, kv.ModRevision, int(kv.RVAt), kv.RVLast), nil
	}
	return WithResourceVersion(dst, kv.Value, kv.ModRevision)
}

// WithPlace returns kv with the place of its resourceVersion recorded (RVAt, RVLast), for values read
// many times: the watch cache records it once per change. kv is returned as it is when its value has
// no metadata object.
func (kv KeyValue) WithPlace() KeyValue {
	if at, last, err := ResourceVersionPlace(kv.Value); err == nil && at <= math.MaxInt32 {
		kv.RVAt, kv.RVLast = int32(at), last
	}
	return kv
}

// ResourceVersionPlace returns where WithResourceVersion puts the resourceVersion member in value: the
// offset of the member it goes before or, with last, the offset just after the last member, which it
// follows.
func ResourceVersionPlace(value []byte) (at int, last bool, err error) {
	at, empty := metadataBody(value)
	if at < 0 {
		return 0, false, ErrNoMetadata
	}
	if empty {
		return at, false, nil
	}
	if at, last = resourceVersionAt(value, at); at < 0 {
		return 0, false, ErrNoMetadata
	}
	return at, last, nil
}

func spliceResourceVersion(dst, value []byte, rv int64, at int, last bool) []byte {
	dst = append(dst, value[:at]...)
	dst = appendResourceVersionMember(dst, value, rv, at, last)
	return append(dst, value[at:]...)
}

// ResourceVersionParts returns what AppendWithResourceVersion would append, in three parts that
// share the stored bytes: the bytes before the resourceVersion member, the member with its commas
// (appended to member), and the bytes after. ok is false when kv has no recorded place (RVAt).
// Writing the parts one after another spares a reader the copy of the whole object.
func (kv KeyValue) ResourceVersionParts(member []byte) (head, withRV, tail []byte, ok bool) {
	if kv.RVAt <= 0 {
		return nil, nil, nil, false
	}
	at := int(kv.RVAt)
	// head's capacity ends where it does: the stored bytes are the watch cache's, and a writer that
	// appended to head must not write into them.
	return kv.Value[:at:at], appendResourceVersionMember(member, kv.Value, kv.ModRevision, at, kv.RVLast), kv.Value[at:], true
}

// appendResourceVersionMember appends the resourceVersion member that goes at value[at], with the
// comma before it (last) or after it (unless the metadata object is otherwise empty).
func appendResourceVersionMember(dst, value []byte, rv int64, at int, last bool) []byte {
	empty := !last && value[skipSpace(value, at)] == '}'
	if last {
		dst = append(dst, ',')
	}
	dst = append(dst, `"resourceVersion":"`...)
	dst = strconv.AppendInt(dst, rv, 10)
	dst = append(dst, '"')
	if !empty && !last {
		dst = append(dst, ',')
	}
	return dst
}

// resourceVersionAt returns where in the metadata object starting at body (just after its '{') the
// resourceVersion member goes: the offset of the first member that comes after it, or, with last, the
// offset just after the last member. -1 for malformed JSON.
func resourceVersionAt(v []byte, body int) (at int, last bool) {
	i := skipSpace(v, body)
	sorted := true
	for first := true; ; first = false {
		if i >= len(v) || v[i] != '"' {
			return -1, false
		}
		keyStart := i + 1
		end := skipString(v, i)
		if end < 0 {
			return -1, false
		}
		key := string(v[keyStart : end-1])
		if first {
			sorted = !typedLeading(key)
		}
		if (sorted && key > "resourceVersion") || (!sorted && !typedLeading(key)) {
			return i, false
		}
		i = skipSpace(v, end)
		if i >= len(v) || v[i] != ':' {
			return -1, false
		}
		if i = skipValue(v, skipSpace(v, i+1)); i < 0 {
			return -1, false
		}
		after := i
		i = skipSpace(v, i)
		if i >= len(v) {
			return -1, false
		}
		if v[i] == '}' {
			return after, true
		}
		if v[i] != ',' {
			return -1, false
		}
		i = skipSpace(v, i+1)
	}
}

// typedLeading reports whether key comes before resourceVersion in ObjectMeta's field order.
func typedLeading(key string) bool {
	switch key {
	case "name", "generateName", "namespace", "selfLink", "uid":
		return true
	}
	return false
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
