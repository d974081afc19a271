// Package request holds what the handler chain learns about a request — its RequestInfo and the
// authenticated user — and carries it in the request's context.
package request

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/fields"
)

// RequestInfo is what a request's path, method and query say about it, resolved the way kube's
// RequestInfoResolver does so that authorization, metrics and audit see the same verbs as in kube.
type RequestInfo struct {
	// IsResourceRequest is false for paths like /healthz and for discovery of groups (/apis/<group>).
	IsResourceRequest bool
	Path              string
	// Verb is get, list, watch, create, update, patch, delete or deletecollection for resource requests,
	// and the lower-cased HTTP method otherwise.
	Verb        string
	APIPrefix   string
	APIGroup    string
	APIVersion  string
	Namespace   string
	Resource    string
	Subresource string
	Name        string
	// Parts are the path segments from the resource on.
	Parts []string
}

// namespaceSubresources are the subresources of a namespace object itself: /namespaces/x/status is
// the status of namespace x, not a resource called "status" in namespace x.
func isNamespaceSubresource(s string) bool { return s == "status" || s == "finalize" }

// NewRequestInfo resolves r. It never fails: a path it cannot read as a resource request is a
// non-resource request.
func NewRequestInfo(r *http.Request) *RequestInfo {
	info := &RequestInfo{Path: r.URL.Path, Verb: strings.ToLower(r.Method)}
	if resource, ok := resourceInfo(*info, r); ok {
		*info = resource
	}
	return info
}

// resourceInfo resolves r as a resource request, starting from what every request has; false if it is
// none. It works on a copy, which stays on the stack, so that NewRequestInfo allocates only the
// RequestInfo it returns.
func resourceInfo(resource RequestInfo, r *http.Request) (RequestInfo, bool) {
	parts := splitPath(r.URL.Path)
	if len(parts) < 3 || (parts[0] != "api" && parts[0] != "apis") {
		return RequestInfo{}, false
	}
	resource.APIPrefix = parts[0]
	parts = parts[1:]
	if resource.APIPrefix == "apis" {
		if len(parts) < 3 {
			return RequestInfo{}, false // /apis/<group>/<version> is discovery
		}
		resource.APIGroup = parts[0]
		parts = parts[1:]
	}
	resource.IsResourceRequest = true
	resource.APIVersion = parts[0]
	parts = parts[1:]

	if parts[0] == "watch" {
		if len(parts) < 2 {
			return RequestInfo{}, false
		}
		resource.Verb = "watch"
		parts = parts[1:]
	} else {
		switch r.Method {
		case http.MethodPost:
			resource.Verb = "create"
		case http.MethodGet, http.MethodHead:
			resource.Verb = "get"
		case http.MethodPut:
			resource.Verb = "update"
		case http.MethodPatch:
			resource.Verb = "patch"
		case http.MethodDelete:
			resource.Verb = "delete"
		default:
			resource.Verb = ""
		}
	}

	if parts[0] == "namespaces" {
		if len(parts) > 1 {
			resource.Namespace = parts[1]
			if len(parts) > 2 && !isNamespaceSubresource(parts[2]) {
				parts = parts[2:]
			}
		}
	}
	resource.Parts = parts
	switch {
	case len(parts) >= 3:
		resource.Subresource = parts[2]
		fallthrough
	case len(parts) >= 2:
		resource.Name = parts[1]
		fallthrough
	case len(parts) >= 1:
		resource.Resource = parts[0]
	}

	if resource.Name == "" && resource.Verb == "get" {
		query := r.URL.Query()
		resource.Verb = "list"
		if watch, _ := QueryParamBool(query, "watch"); watch {
			resource.Verb = "watch"
		}
		if name, ok := exactNameSelector(query.Get("fieldSelector")); ok {
			resource.Name = name
		}
	}
	if resource.Name == "" && resource.Verb == "delete" {
		resource.Verb = "deletecollection"
	}
	return resource, true
}

// QueryParamBool reads the boolean query parameter key as kube's conversion does
// (runtime.Convert_Slice_string_To_bool): absent is false, 0 and false in any case are false, anything
// else is true, an empty value ("?watch=") and "f" included. present says whether the parameter was
// given at all, for options that are pointers in kube (sendInitialEvents, force, orphanDependents).
func QueryParamBool(q url.Values, key string) (value, present bool) {
	v, present := q[key]
	if !present || len(v) == 0 {
		return false, false
	}
	return v[0] != "0" && !strings.EqualFold(v[0], "false"), true
}

// exactNameSelector returns x for a field selector that pins metadata.name=x, so that a list or watch
// of one object is authorized as access to that object, as in kube.
func exactNameSelector(selector string) (string, bool) {
	if selector == "" {
		return "", false
	}
	sel, err := fields.ParseSelector(selector)
	if err != nil {
		return "", false
	}
	name, ok := sel.RequiresExactMatch("metadata.name")
	if !ok || len(content.IsPathSegmentName(name)) > 0 {
		return "", false
	}
	return name, true
}

func splitPath(path string) []string {
	path = strings.Trim(path, "/")
	if path == "" {
		return nil
	}
	return strings.Split(path, "/")
}

type contextKey int

const (
	requestInfoKey contextKey = iota
	userKey
	longRunningDoneKey
)

// WithRequestInfo returns ctx carrying info.
func WithRequestInfo(ctx context.Context, info *RequestInfo) context.Context {
	return context.WithValue(ctx, requestInfoKey, info)
}

// RequestInfoFrom returns the request info the chain resolved, if any.
func RequestInfoFrom(ctx context.Context) (*RequestInfo, bool) {
	info, ok := ctx.Value(requestInfoKey).(*RequestInfo)
	return info, ok
}

// WithLongRunningDone returns ctx carrying a channel that closes when the server stops accepting new
// requests. Long-running handlers (watches) end their streams cleanly when it closes, while ordinary
// requests are left to finish.
func WithLongRunningDone(ctx context.Context, done <-chan struct{}) context.Context {
	return context.WithValue(ctx, longRunningDoneKey, done)
}

// LongRunningDone returns the channel of WithLongRunningDone; nil (never ready) if there is none.
func LongRunningDone(ctx context.Context) <-chan struct{} {
	done, _ := ctx.Value(longRunningDoneKey).(<-chan struct{})
	return done
}
