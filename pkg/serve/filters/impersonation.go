package filters

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apictl/apictl/pkg/serve/auth"
	"github.com/apictl/apictl/pkg/serve/filters/internal/user"
	"github.com/apictl/apictl/pkg/serve/request"
	"github.com/apictl/apictl/pkg/serve/status"
)

// The impersonation headers, as kube names them (Go canonicalizes header keys this way).
const (
	headerImpersonateUser  = authenticationv1.ImpersonateUserHeader
	headerImpersonateGroup = authenticationv1.ImpersonateGroupHeader
	headerImpersonateUID   = authenticationv1.ImpersonateUIDHeader
	headerImpersonateExtra = authenticationv1.ImpersonateUserExtraHeaderPrefix
)

// Users and groups impersonation gives, as kube names them.
const (
	serviceAccountPrefix = "system:serviceaccount:"
	nodePrefix           = "system:node:"
	groupServiceAccounts = "system:serviceaccounts"
	groupNodes           = "system:nodes"
)

// WithImpersonation lets the authenticated user act as another, as kube-apiserver's constrained
// impersonation (ConstrainedImpersonation, on by default since 1.36) does with the Impersonate-User,
// Impersonate-Group, Impersonate-Uid and Impersonate-Extra-<key> headers. The modes are tried in
// kube's order, the first that allows the request wins, and a refusal is the first mode's error:
//
//   - arbitrary-node (only a system:node:<name> user) and serviceaccount (only a
//     system:serviceaccount:<ns>:<name> user) and user-info (any other user, with groups, uid and
//     extras) need the verb impersonate-on:<mode>:<the request's verb> on what the request touches,
//     then impersonate:<mode> on each of users (or nodes, serviceaccounts), groups, uids and
//     userextras/<key> in authentication.k8s.io; system:masters and the empty group cannot be
//     impersonated this way;
//   - legacy needs the verb impersonate on users, groups, serviceaccounts (core group) and uids,
//     userextras/<key> (authentication.k8s.io).
//
// The impersonated user joins system:authenticated (system:unauthenticated for system:anonymous), a
// service account without groups gets its own; the user who authenticated is kept in the context
// (request.ImpersonatorFrom) for audit and the access log. kube's associated-node mode (a pod's
// service account acting as its node) does not apply: apictl runs no nodes.
//
// A request without the headers costs a few map lookups and no allocation.
func WithImpersonation(a auth.Authorizer, log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !hasImpersonationHeaders(r.Header) {
				next.ServeHTTP(w, r)
				return
			}
			wanted, err := impersonationHeaders(r.Header)
			if err != nil {
				status.WriteError(w, r, err)
				return
			}
			if wanted == nil {
				next.ServeHTTP(w, r)
				return
			}
			ctx := r.Context()
			requestor, ok := request.UserFrom(ctx)
			if !ok || requestor == nil {
				status.WriteError(w, r, apierrors.NewInternalError(errors.New("no User found in the context")))
				return
			}
			info, ok := request.RequestInfoFrom(ctx)
			if !ok {
				info = request.NewRequestInfo(r)
			}
			u, err := impersonate(ctx, a, requestor, wanted, info)
			if err != nil {
				log.Debug("impersonation refused", "URI", r.RequestURI, "user", requestor.Name, "err", err)
				status.WriteError(w, r, err)
				return
			}
			if rec, ok := request.AccessRecordFrom(ctx); ok {
				rec.User, rec.Impersonator = u, requestor
			}
			ctx = request.WithImpersonator(request.WithUser(ctx, u), requestor)
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}

// hasImpersonationHeaders reports, without allocating, whether any impersonation header is present.
func hasImpersonationHeaders(h http.Header) bool {
	// One pass over the few headers a request has costs less than three lookups and then the pass
	// that Impersonate-Extra-<key> needs anyway.
	for k := range h {
		if strings.HasPrefix(k, "Impersonate-") {
			return true
		}
	}
	return false
}

// impersonationHeaders reads the wanted user from the headers and removes them, so that nothing
// downstream acts on them again; nil when no user is named. Groups, a uid or extras without a user are
// kube's 400.
func impersonationHeaders(h http.Header) (*user.DefaultInfo, error) {
	wanted := &user.DefaultInfo{Name: h.Get(headerImpersonateUser), UID: h.Get(headerImpersonateUID)}
	hasGroups, hasExtra := false, false
	for _, g := range h[headerImpersonateGroup] {
		hasGroups = true
		wanted.Groups = append(wanted.Groups, g)
	}
	for k, values := range h {
		if !strings.HasPrefix(k, headerImpersonateExtra) {
			continue
		}
		hasExtra = true
		if len(values) == 0 {
			continue
		}
		key := unescapeExtraKey(strings.ToLower(k[len(headerImpersonateExtra):]))
		if wanted.Extra == nil {
			wanted.Extra = map[string][]string{}
		}
		wanted.Extra[key] = append(wanted.Extra[key], values...)
	}
	if wanted.Name == "" {
		if wanted.UID != "" || hasGroups || hasExtra {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("requested %#v without impersonating a user name", wanted))
		}
		return nil, nil
	}
	h.Del(headerImpersonateUser)
	h.Del(headerImpersonateUID)
	h.Del(headerImpersonateGroup)
	for k := range h {
		if strings.HasPrefix(k, headerImpersonateExtra) {
			h.Del(k)
		}
	}
	return wanted, nil
}

// unescapeExtraKey decodes a percent-encoded extra key, keeping a malformed one as it is, as kube does.
func unescapeExtraKey(encoded string) string {
	key, err := url.PathUnescape(encoded)
	if err != nil {
		return encoded
	}
	return key
}

// impersonationMode is one of kube's ways to be allowed to impersonate.
type impersonationMode struct {
	// name is the mode in the verbs: impersonate-on:<name>:<verb> and impersonate:<name>; "" is legacy.
	name string
	// applies says whether the mode can grant wanted.
	applies func(wanted *user.DefaultInfo) bool
}

// impersonationModes are kube's constrained modes, in its order, then legacy.
var impersonationModes = []impersonationMode{
	{name: "arbitrary-node", applies: func(w *user.DefaultInfo) bool {
		_, ok := nodeName(w.Name)
		return ok && onlyUsername(w)
	}},
	{name: "serviceaccount", applies: func(w *user.DefaultInfo) bool {
		_, _, ok := serviceAccountName(w.Name)
		return ok && onlyUsername(w)
	}},
	{name: "user-info", applies: func(w *user.DefaultInfo) bool {
		_, node := nodeName(w.Name)
		_, _, sa := serviceAccountName(w.Name)
		return !node && !sa
	}},
	{name: "", applies: func(*user.DefaultInfo) bool { return true }},
}

func onlyUsername(w *user.DefaultInfo) bool {
	return w.UID == "" && len(w.Groups) == 0 && len(w.Extra) == 0
}

// impersonate returns the user requestor may act as, or the refusal of the first mode that applied.
func impersonate(ctx context.Context, a auth.Authorizer, requestor *request.User, wanted *user.DefaultInfo, info *request.RequestInfo) (*request.User, error) {
	var firstErr error
	for _, m := range impersonationModes {
		if !m.applies(wanted) {
			continue
		}
		u, err := m.check(ctx, a, requestor, wanted, info)
		if err == nil {
			return u, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, firstErr
}

// check applies one mode: for a constrained mode, the impersonate-on verb on the request itself, then
// the mode's verb on each part of the wanted user.
func (m impersonationMode) check(ctx context.Context, a auth.Authorizer, requestor *request.User, wanted *user.DefaultInfo, info *request.RequestInfo) (*request.User, error) {
	verb, gv := "impersonate", schema.GroupVersion{Version: "v1"}
	constrained := m.name != ""
	if constrained {
		on := *info
		on.Verb = "impersonate-on:" + m.name + ":" + info.Verb
		if err := authorize(ctx, a, requestor, &on); err != nil {
			return nil, err
		}
		verb, gv = "impersonate:"+m.name, authenticationv1.SchemeGroupVersion
	}
	attrs := func(group, resource, name string) *request.RequestInfo {
		return &request.RequestInfo{IsResourceRequest: true, Verb: verb, APIGroup: group, APIVersion: "v1", Resource: resource, Name: name}
	}
	u := &request.User{Name: wanted.Name, UID: wanted.UID, Groups: slices.Clone(wanted.Groups), Extra: wanted.Extra}

	// The user name: a node or a service account is checked as such.
	name := attrs(gv.Group, "users", wanted.Name)
	if node, ok := nodeName(wanted.Name); ok && constrained {
		name.Resource, name.Name = "nodes", node
		if len(wanted.Groups) > 0 {
			return nil, forbidden(requestor, name, fmt.Sprintf("when impersonating a node, cannot impersonate groups %q", wanted.Groups))
		}
		u.Groups = []string{groupNodes}
	}
	if ns, sa, ok := serviceAccountName(wanted.Name); ok {
		name.Resource, name.Namespace, name.Name = "serviceaccounts", ns, sa
		if constrained && len(wanted.Groups) > 0 {
			return nil, forbidden(requestor, name, fmt.Sprintf("when impersonating a service account, cannot impersonate groups %q", wanted.Groups))
		}
		if len(wanted.Groups) == 0 {
			u.Groups = []string{groupServiceAccounts, groupServiceAccounts + ":" + ns}
		}
	}
	if err := authorize(ctx, a, requestor, name); err != nil {
		return nil, err
	}
	if wanted.UID != "" {
		if err := authorize(ctx, a, requestor, attrs(authenticationv1.GroupName, "uids", wanted.UID)); err != nil {
			return nil, err
		}
	}
	if err := checkGroups(ctx, a, requestor, wanted.Groups, attrs(gv.Group, "groups", ""), constrained); err != nil {
		return nil, err
	}
	if err := checkExtra(ctx, a, requestor, wanted.Extra, attrs(authenticationv1.GroupName, "userextras", ""), constrained); err != nil {
		return nil, err
	}
	switch {
	case u.Name == request.UserAnonymous:
		u.Groups = ensureGroup(u.Groups, request.GroupUnauthenticated)
	case !slices.Contains(u.Groups, request.GroupUnauthenticated):
		u.Groups = ensureGroup(u.Groups, request.GroupAuthenticated)
	}
	return u, nil
}

// manyChecks is where kube first asks for "*" rather than each group or extra value.
const manyChecks = 4

// checkGroups asks for each wanted group (or all of them at once, when there are many).
func checkGroups(ctx context.Context, a auth.Authorizer, requestor *request.User, groups []string, info *request.RequestInfo, constrained bool) error {
	if len(groups) == 0 {
		return nil
	}
	if constrained {
		if slices.Contains(groups, "") {
			return forbidden(requestor, info, "impersonating the empty string group is not allowed")
		}
		if slices.Contains(groups, request.GroupMasters) {
			info.Name = request.GroupMasters
			return forbidden(requestor, info, "impersonating the system:masters group is not allowed")
		}
		if len(groups) >= manyChecks {
			info.Name = "*"
			if authorize(ctx, a, requestor, info) == nil {
				return nil
			}
		}
	}
	for _, g := range groups {
		info.Name = g
		if err := authorize(ctx, a, requestor, info); err != nil {
			return err
		}
	}
	return nil
}

// checkExtra asks for each wanted extra value, as userextras/<key> named by the value.
func checkExtra(ctx context.Context, a auth.Authorizer, requestor *request.User, extra map[string][]string, info *request.RequestInfo, constrained bool) error {
	if len(extra) == 0 {
		return nil
	}
	if constrained {
		if err := validateExtra(extra); err != nil {
			return forbidden(requestor, info, err.Error())
		}
		if largeExtra(extra) {
			info.Subresource, info.Name = "*", "*"
			if authorize(ctx, a, requestor, info) == nil {
				return nil
			}
		}
	}
	for key, values := range extra {
		info.Subresource = key
		for _, v := range values {
			info.Name = v
			if err := authorize(ctx, a, requestor, info); err != nil {
				return err
			}
		}
	}
	return nil
}

// validateExtra is what constrained impersonation requires of extras, with kube's messages.
func validateExtra(extra map[string][]string) error {
	fp := field.NewPath("extra", "key")
	for key, values := range extra {
		if key == "" {
			return errors.New("impersonating the empty string key in extra is not allowed")
		}
		if err := utilvalidation.IsDomainPrefixedPath(fp, key).ToAggregate(); err != nil {
			return fmt.Errorf("impersonating an invalid key in extra is not allowed: %w", err)
		}
		if key != strings.ToLower(key) {
			return fmt.Errorf("impersonating a non-lowercase key in extra is not allowed: %q", key)
		}
		if len(values) == 0 {
			return errors.New("impersonating empty values in extra is not allowed")
		}
		if slices.Contains(values, "") {
			return errors.New("impersonating the empty string value in extra is not allowed")
		}
	}
	return nil
}

func largeExtra(extra map[string][]string) bool {
	if len(extra) >= manyChecks {
		return true
	}
	n := 0
	for _, values := range extra {
		if n += len(values); n >= manyChecks {
			return true
		}
	}
	return false
}

// authorize asks a whether requestor may do what info describes, with kube's 403 when not.
func authorize(ctx context.Context, a auth.Authorizer, requestor *request.User, info *request.RequestInfo) error {
	d, reason, err := a.Authorize(ctx, requestor, info)
	if d == auth.Allow {
		return nil
	}
	msg := reason
	switch {
	case err != nil && reason != "":
		msg = fmt.Sprintf("%v: %s", err, reason)
	case err != nil:
		msg = err.Error()
	}
	return forbidden(requestor, info, msg)
}

// forbidden is kube's 403 for info, with reason after the explanation when there is one.
func forbidden(u *request.User, info *request.RequestInfo, reason string) error {
	msg := auth.ForbiddenMessage(u, info)
	if reason != "" {
		msg += ": " + reason
	}
	return apierrors.NewForbidden(schema.GroupResource{Group: info.APIGroup, Resource: info.Resource}, info.Name, forbiddenError(msg))
}

func ensureGroup(groups []string, g string) []string {
	if slices.Contains(groups, g) {
		return groups
	}
	return append(slices.Clip(groups), g)
}

// serviceAccountName splits system:serviceaccount:<namespace>:<name>, with kube's checks of both
// parts (SplitUsername).
func serviceAccountName(username string) (namespace, name string, ok bool) {
	rest, found := strings.CutPrefix(username, serviceAccountPrefix)
	if !found {
		return "", "", false
	}
	parts := strings.Split(rest, ":")
	if len(parts) != 2 || len(validation.NameIsDNSLabel(parts[0], false)) != 0 || len(validation.NameIsDNSSubdomain(parts[1], false)) != 0 {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// nodeName returns the node of a system:node:<name> user.
func nodeName(username string) (string, bool) {
	name, found := strings.CutPrefix(username, nodePrefix)
	if !found || len(validation.NameIsDNSSubdomain(name, false)) != 0 {
		return "", false
	}
	return name, true
}
