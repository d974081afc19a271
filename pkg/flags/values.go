package flags

import (
	"sort"
	"strings"
)

// mapStringString is kube's mapStringString flag value: comma-separated key=value pairs, a key without
// "=" maps to "", whitespace is trimmed, and repeated flags merge. Parsing never fails, so that
// Validate can report every bad entry at once instead of the flag parser stopping at the first.
type mapStringString struct {
	m *map[string]string
}

func newMapStringString(m *map[string]string) *mapStringString {
	return &mapStringString{m: m}
}

func (v *mapStringString) String() string {
	if v.m == nil || len(*v.m) == 0 {
		return ""
	}
	keys := make([]string, 0, len(*v.m))
	for k := range *v.m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	pairs := make([]string, len(keys))
	for i, k := range keys {
		pairs[i] = k + "=" + (*v.m)[k]
	}
	return strings.Join(pairs, ",")
}

func (v *mapStringString) Set(s string) error {
	if *v.m == nil {
		*v.m = map[string]string{}
	}
	for _, pair := range strings.Split(s, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		key, value, _ := strings.Cut(pair, "=")
		(*v.m)[strings.TrimSpace(key)] = strings.TrimSpace(value)
	}
	return nil
}

func (v *mapStringString) Type() string { return "mapStringString" }
