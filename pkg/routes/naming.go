package routes

import (
	"strings"
	"unicode"
)

// operationVerbs are the verb prefixes kube's OpenAPI builder recognises at the start of an
// operation name. The shortest that matches wins, so deletecollection… yields delete.
var operationVerbs = []string{"get", "log", "read", "replace", "patch", "delete", "deletecollection", "watch", "connect", "proxy", "list", "create"}

// appendOperationName appends kube's go-restful operation name to dst:
// verb + [Namespaced] + Kind + Title(subresource) + [List] + [WithPath] + [ForAllNamespaces];
// titledSub is title(subresource).
func appendOperationName(dst []byte, a Action, method, kind, titledSub string, namespaced, allNamespaces, withPath bool) []byte {
	switch a {
	case ActionGet:
		dst = append(dst, "read"...)
	case ActionList:
		dst = append(dst, "list"...)
	case ActionPut:
		dst = append(dst, "replace"...)
	case ActionPatch:
		dst = append(dst, "patch"...)
	case ActionPost:
		dst = append(dst, "create"...)
	case ActionDelete:
		dst = append(dst, "delete"...)
	case ActionDeleteCollection:
		dst = append(dst, "deletecollection"...)
	case ActionWatch, ActionWatchList:
		dst = append(dst, "watch"...)
	case ActionConnect:
		dst = append(dst, "connect"...)
		dst = appendTitle(dst, strings.ToLower(method))
	}
	if namespaced && !allNamespaces {
		dst = append(dst, "Namespaced"...)
	}
	dst = append(dst, kind...)
	dst = append(dst, titledSub...)
	if a == ActionWatchList {
		dst = append(dst, "List"...)
	}
	if withPath {
		dst = append(dst, "WithPath"...)
	}
	if allNamespaces {
		dst = append(dst, "ForAllNamespaces"...)
	}
	return dst
}

// verbPrefixLen is the length of the shortest operationVerbs entry that starts the operation names
// of an action: the verb word itself, except "delete" for deletecollection.
func verbPrefixLen(a Action) int {
	switch a {
	case ActionGet:
		return len("read")
	case ActionList:
		return len("list")
	case ActionPut:
		return len("replace")
	case ActionPatch:
		return len("patch")
	case ActionPost:
		return len("create")
	case ActionDelete, ActionDeleteCollection:
		return len("delete")
	case ActionWatch, ActionWatchList:
		return len("watch")
	case ActionConnect:
		return len("connect")
	}
	return 0
}

// appendOperationID appends the OpenAPI operationId of a resource operation name: the shortest verb
// prefix (its length given), the group version's part (CoreV1), the rest capitalised. It is
// openAPIOperation for resource paths, without splitting the path again for every route.
func appendOperationID(dst, op []byte, prefixLen int, gvID string) []byte {
	prefix, rest := op[:prefixLen], op[prefixLen:]
	dst = append(dst, prefix...)
	dst = append(dst, gvID...)
	for _, c := range rest {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return append(dst, validOperationID(string(rest), true)...)
		}
	}
	if len(rest) > 0 && rest[0] >= 'a' && rest[0] <= 'z' {
		dst = append(dst, rest[0]-'a'+'A')
		rest = rest[1:]
	}
	return append(dst, rest...)
}

// groupVersionID is what openAPIOperation inserts for a group version (CoreV1,
// RbacAuthorizationV1), and the tag (core_v1, rbacAuthorization_v1).
func groupVersionID(group, version string) (id, tag string) {
	if group == "" {
		group = "core"
	}
	group = strings.TrimSuffix(group, ".k8s.io")
	return validOperationID(group, true) + validOperationID(version, true),
		validOperationID(group, false) + "_" + validOperationID(version, false)
}

// openAPIOperation turns a go-restful operation name and its path into the OpenAPI operationId and
// tag, as kube's GetOperationIDAndTags does: the group (without .k8s.io) and version of the path are
// inserted after the verb; /api counts as /apis/core.
func openAPIOperation(op, path string) (id, tag string) {
	prefix := shortestVerbPrefix(op)
	if prefix == "" {
		return op, ""
	}
	rest := op[len(prefix):]
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) >= 1 && parts[0] == "api" {
		parts = append([]string{"apis", "core"}, parts[1:]...)
	}
	switch {
	case len(parts) >= 2 && parts[0] == "apis":
		group := strings.TrimSuffix(parts[1], ".k8s.io")
		prefix += validOperationID(group, true)
		tag = validOperationID(group, false)
		if len(parts) > 2 {
			prefix += validOperationID(parts[2], true)
			tag += "_" + validOperationID(parts[2], false)
		}
	case len(parts) >= 1:
		tag = parts[0]
	}
	return prefix + validOperationID(rest, true), tag
}

func shortestVerbPrefix(op string) string {
	best := ""
	for _, v := range operationVerbs {
		if strings.HasPrefix(op, v) && (best == "" || len(v) < len(best)) {
			best = v
		}
	}
	return best
}

// validOperationID keeps letters, underscores and (after the first character) digits; any other
// character is dropped and capitalises the next kept letter.
func validOperationID(s string, capitalizeFirst bool) string {
	var b strings.Builder
	b.Grow(len(s))
	capitalize := capitalizeFirst
	for i, r := range s {
		if unicode.IsLetter(r) || r == '_' || (i != 0 && unicode.IsDigit(r)) {
			if capitalize {
				r = unicode.ToUpper(r)
				capitalize = false
			}
			b.WriteRune(r)
			continue
		}
		capitalize = true
	}
	return b.String()
}

// title upper-cases the first letter of each word, as strings.Title did for kube's subresource
// names: a letter after anything but a letter, digit or underscore starts a word.
func title(s string) string {
	if s == "" {
		return ""
	}
	return string(appendTitle(nil, s))
}

func appendTitle(dst []byte, s string) []byte {
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !inWord && c >= 'a' && c <= 'z' {
			c = c - 'a' + 'A'
		}
		dst = append(dst, c)
		inWord = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
	}
	return dst
}

const (
	watchDeprecation     = ". deprecated: use the 'watch' parameter with a list operation instead, filtered to a single item with the 'fieldSelector' parameter."
	watchListDeprecation = ". deprecated: use the 'watch' parameter with a list operation instead."
)

// appendDoc appends to dst the description kube's installer gives a route; kind is the parent's
// for a subresource.
func appendDoc(dst []byte, a Action, method, kind, sub string, watchable bool) []byte {
	// of appends "<verb><middle><kind>" or, for a subresource, "<verb> <sub> of<middle><kind>".
	of := func(verb, middle string) []byte {
		dst = append(dst, verb...)
		if sub != "" {
			dst = append(append(append(dst, ' '), sub...), " of"...)
		}
		return append(append(dst, middle...), kind...)
	}
	switch a {
	case ActionGet:
		return of("read", " the specified ")
	case ActionList:
		if watchable {
			return of("list or watch", " objects of kind ")
		}
		return of("list", " objects of kind ")
	case ActionPut:
		return of("replace", " the specified ")
	case ActionPatch:
		return of("partially update", " the specified ")
	case ActionPost:
		return of("create", articleFor(kind))
	case ActionDelete:
		return of("delete", articleFor(kind))
	case ActionDeleteCollection:
		dst = append(dst, "delete collection of "...)
		if sub != "" {
			dst = append(append(dst, sub...), " of a "...)
		}
		return append(dst, kind...)
	case ActionWatch:
		dst = append(dst, "watch changes to "...)
		if sub != "" {
			dst = append(append(dst, sub...), " of "...)
		}
		return append(append(append(dst, "an object of kind "...), kind...), watchDeprecation...)
	case ActionWatchList:
		dst = append(dst, "watch individual changes to a list of "...)
		if sub != "" {
			dst = append(append(dst, sub...), " of "...)
		}
		return append(append(dst, kind...), watchListDeprecation...)
	case ActionConnect:
		dst = append(append(append(dst, "connect "...), method...), " requests to "...)
		if sub != "" {
			dst = append(append(dst, sub...), " of "...)
		}
		return append(dst, kind...)
	}
	return dst
}

// articleFor pads the article for a noun: " a ", " an " before a vowel, or a single space for a
// plural (Endpoints) that takes none; a word ending in "ss" (Class) is singular.
func articleFor(noun string) string {
	if !strings.HasSuffix(noun, "ss") && strings.HasSuffix(noun, "s") {
		return " "
	}
	if noun != "" && strings.ContainsRune("aeiouAEIOU", rune(noun[0])) {
		return " an "
	}
	return " a "
}
