// Package user mirrors kube's k8s.io/apiserver/pkg/authentication/user.DefaultInfo, field for field,
// so that a message kube formats with %#v of that type ("requested &user.DefaultInfo{Name:...}
// without impersonating a user name") is printed byte for byte the same without importing
// k8s.io/apiserver.
package user

// DefaultInfo has kube's field names, types and order; only its %#v form matters.
type DefaultInfo struct {
	Name   string
	UID    string
	Groups []string
	Extra  map[string][]string
}
