package storage

import "strings"

// ObjectKey is the key of one object: <resource>/<namespace>/<name> for the core group ("") and
// <group>/<resource>/<namespace>/<name> otherwise; a cluster-scoped object (namespace "") has no
// namespace segment. The segments must not contain "/": the handlers validate names first.
func ObjectKey(group, resource, namespace, name string) string {
	return ResourcePrefix(group, resource, namespace) + name
}

// ResourcePrefix is the list and watch prefix of a resource, in one namespace or, with namespace "",
// across all namespaces (and for cluster-scoped resources). It ends in "/", so that the prefix of
// namespace "a" never matches the keys of namespace "ab".
func ResourcePrefix(group, resource, namespace string) string {
	var b strings.Builder
	b.Grow(len(group) + len(resource) + len(namespace) + 3)
	if group != "" {
		b.WriteString(group)
		b.WriteByte('/')
	}
	b.WriteString(resource)
	b.WriteByte('/')
	if namespace != "" {
		b.WriteString(namespace)
		b.WriteByte('/')
	}
	return b.String()
}
