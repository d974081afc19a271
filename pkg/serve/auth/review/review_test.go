package review

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apictl/apictl/pkg/serve/auth"
	"github.com/apictl/apictl/pkg/serve/handlers"
	"github.com/apictl/apictl/pkg/serve/request"
)

func TestCreatersCoverTheReviewResources(t *testing.T) {
	got := Creaters(Config{})
	for _, key := range []handlers.CreateKey{
		{Group: "authentication.k8s.io", Version: "v1", Resource: "tokenreviews"},
		{Group: "authentication.k8s.io", Version: "v1", Resource: "selfsubjectreviews"},
		{Group: "authorization.k8s.io", Version: "v1", Resource: "subjectaccessreviews"},
		{Group: "authorization.k8s.io", Version: "v1", Resource: "localsubjectaccessreviews"},
		{Group: "authorization.k8s.io", Version: "v1", Resource: "selfsubjectaccessreviews"},
		{Group: "authorization.k8s.io", Version: "v1", Resource: "selfsubjectrulesreviews"},
	} {
		if got[key] == nil {
			t.Errorf("no creater for %v", key)
		}
	}
	if len(got) != 6 {
		t.Errorf("%d creaters, want 6", len(got))
	}
}

// decider answers from a table keyed by verb: the decision and reason a mode gives.
func decider(answers map[string]auth.Decision) auth.Authorizer {
	return auth.AuthorizerFunc(func(_ context.Context, _ *request.User, info *request.RequestInfo) (auth.Decision, string, error) {
		d := answers[info.Verb]
		if d == auth.NoOpinion {
			return d, "no rule", nil
		}
		return d, "decided " + info.Verb, nil
	})
}

func TestSubjectAccessReview(t *testing.T) {
	chain := auth.Chain(&auth.Named{Name: "table", Authorizer: decider(map[string]auth.Decision{"get": auth.Allow, "delete": auth.Deny})})
	creaters := Creaters(Config{Authorization: chain})
	sar := creaters[handlers.CreateKey{Group: "authorization.k8s.io", Version: "v1", Resource: "subjectaccessreviews"}]
	tests := []struct {
		name string
		spec authorizationv1.SubjectAccessReviewSpec
		want authorizationv1.SubjectAccessReviewStatus
		err  string
	}{
		{"allowed", authorizationv1.SubjectAccessReviewSpec{User: "u", ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Resource: "pods"}},
			authorizationv1.SubjectAccessReviewStatus{Allowed: true, Reason: "decided get"}, ""},
		{"denied", authorizationv1.SubjectAccessReviewSpec{User: "u", ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "delete", Resource: "pods"}},
			authorizationv1.SubjectAccessReviewStatus{Denied: true, Reason: "decided delete"}, ""},
		{"no opinion is neither", authorizationv1.SubjectAccessReviewSpec{Groups: []string{"g"}, NonResourceAttributes: &authorizationv1.NonResourceAttributes{Verb: "post", Path: "/x"}},
			authorizationv1.SubjectAccessReviewStatus{Reason: "table: no rule"}, ""},
		{"system:masters", authorizationv1.SubjectAccessReviewSpec{Groups: []string{"system:masters"}, ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "delete"}},
			authorizationv1.SubjectAccessReviewStatus{Allowed: true}, ""},
		{"no subject", authorizationv1.SubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get"}}, authorizationv1.SubjectAccessReviewStatus{},
			`.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified`},
		{"both kinds of attributes", authorizationv1.SubjectAccessReviewSpec{User: "u", ResourceAttributes: &authorizationv1.ResourceAttributes{},
			NonResourceAttributes: &authorizationv1.NonResourceAttributes{Verb: "get"}}, authorizationv1.SubjectAccessReviewStatus{},
			`.authorization.k8s.io "" is invalid: spec: Invalid value: {"Path":"","Verb":"get"}: exactly one of nonResourceAttributes or resourceAttributes must be specified`},
		{"a selector without requirements", authorizationv1.SubjectAccessReviewSpec{User: "u", ResourceAttributes: &authorizationv1.ResourceAttributes{
			LabelSelector: &authorizationv1.LabelSelectorAttributes{}}}, authorizationv1.SubjectAccessReviewStatus{},
			`.authorization.k8s.io "" is invalid: spec.resourceAttributes.labelSelector.requirements: Required value: when spec.resourceAttributes.labelSelector is specified, requirements or rawSelector is required`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := sar(context.Background(), handlers.CreateRequest{Object: &authorizationv1.SubjectAccessReview{Spec: tt.spec}})
			if tt.err != "" {
				if !apierrors.IsInvalid(err) || err.Error() != tt.err {
					t.Errorf("error %v, want %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := out.(*authorizationv1.SubjectAccessReview).Status; got != tt.want {
				t.Errorf("status %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestRequestInfo(t *testing.T) {
	got := requestInfo(&authorizationv1.ResourceAttributes{Namespace: "ns", Verb: "get", Group: "apps", Resource: "deployments", Subresource: "scale", Name: "d"}, nil)
	want := request.RequestInfo{IsResourceRequest: true, Verb: "get", APIGroup: "apps", APIVersion: "*", Namespace: "ns", Resource: "deployments", Subresource: "scale", Name: "d"}
	if got.IsResourceRequest != want.IsResourceRequest || got.Verb != want.Verb || got.APIGroup != want.APIGroup || got.APIVersion != want.APIVersion ||
		got.Namespace != want.Namespace || got.Resource != want.Resource || got.Subresource != want.Subresource || got.Name != want.Name {
		t.Errorf("resource attributes: %+v, want %+v", got, want)
	}
	got = requestInfo(nil, &authorizationv1.NonResourceAttributes{Path: "/healthz", Verb: "get"})
	if got.IsResourceRequest || got.Path != "/healthz" || got.Verb != "get" {
		t.Errorf("non-resource attributes: %+v", got)
	}
}

func TestSelfSubjectRulesReview(t *testing.T) {
	abac, err := auth.ParseABAC(strings.NewReader(`{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"user":"alice","namespace":"ns","resource":"pods","apiGroup":"","readonly":true}}
{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"group":"system:authenticated","readonly":true,"namespace":"*","nonResourcePath":"*"}}`))
	if err != nil {
		t.Fatal(err)
	}
	alice := &request.User{Name: "alice", Groups: []string{"system:authenticated"}}
	tests := []struct {
		name       string
		modes      []auth.Authorizer
		namespace  string
		wantRules  string
		incomplete bool
	}{
		{"AlwaysAllow", []auth.Authorizer{auth.AlwaysAllow}, "ns", "[*]/[*]/[*] | [*] [*]", false},
		{"AlwaysDeny", []auth.Authorizer{auth.AlwaysDeny}, "ns", " | ", false},
		{"ABAC in its namespace", []auth.Authorizer{abac}, "ns", "[get list watch]/[]/[pods] | [get list watch] [*]", false},
		{"ABAC elsewhere", []auth.Authorizer{abac}, "other", " | [get list watch] [*]", false},
		{"a mode that cannot list", []auth.Authorizer{decider(nil), auth.AlwaysDeny}, "ns", " | ", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			named := make([]auth.Authorizer, len(tt.modes))
			for i, m := range tt.modes {
				named[i] = &auth.Named{Name: "m", Authorizer: m}
			}
			ssrr := Creaters(Config{Authorization: auth.Chain(named...)})[handlers.CreateKey{Group: "authorization.k8s.io", Version: "v1", Resource: "selfsubjectrulesreviews"}]
			ctx := request.WithUser(context.Background(), alice)
			out, err := ssrr(ctx, handlers.CreateRequest{Object: &authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: tt.namespace}}})
			if err != nil {
				t.Fatal(err)
			}
			st := out.(*authorizationv1.SelfSubjectRulesReview).Status
			var res, nonRes []string
			for _, r := range st.ResourceRules {
				res = append(res, strings.Join([]string{fmtList(r.Verbs), fmtList(r.APIGroups), fmtList(r.Resources)}, "/"))
			}
			for _, r := range st.NonResourceRules {
				nonRes = append(nonRes, fmtList(r.Verbs)+" "+fmtList(r.NonResourceURLs))
			}
			if got := strings.Join(res, ",") + " | " + strings.Join(nonRes, ","); got != tt.wantRules || st.Incomplete != tt.incomplete {
				t.Errorf("rules %q incomplete %v, want %q %v", got, st.Incomplete, tt.wantRules, tt.incomplete)
			}
			if st.ResourceRules == nil || st.NonResourceRules == nil {
				t.Errorf("null rule lists: kube sends []")
			}
		})
	}
}

func fmtList(s []string) string { return "[" + strings.Join(s, " ") + "]" }

func TestTokenReview(t *testing.T) {
	tokens, err := auth.ParseTokens(strings.NewReader("secret,bob,42,\"g1,g2\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		authn     auth.Authenticator
		spec      authenticationv1.TokenReviewSpec
		audiences []string
		want      authenticationv1.TokenReviewStatus
	}{
		{"a known token", auth.Union(auth.Anonymous, tokens), authenticationv1.TokenReviewSpec{Token: "secret"}, nil,
			authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: "bob", UID: "42", Groups: []string{"g1", "g2", "system:authenticated"}}}},
		{"the API's audiences", auth.Union(nil, tokens), authenticationv1.TokenReviewSpec{Token: "secret"}, []string{"https://kubernetes.default.svc"},
			authenticationv1.TokenReviewStatus{Authenticated: true, Audiences: []string{"https://kubernetes.default.svc"},
				User: authenticationv1.UserInfo{Username: "bob", UID: "42", Groups: []string{"g1", "g2", "system:authenticated"}}}},
		{"the review's audiences", auth.Union(nil, tokens), authenticationv1.TokenReviewSpec{Token: "secret", Audiences: []string{"a"}}, []string{"api"},
			authenticationv1.TokenReviewStatus{Authenticated: true, Audiences: []string{"a"},
				User: authenticationv1.UserInfo{Username: "bob", UID: "42", Groups: []string{"g1", "g2", "system:authenticated"}}}},
		{"an audience-checking authenticator says which", auth.Union(nil, auth.AuthenticatorFunc(func(r *http.Request) (*request.User, bool, error) {
			request.ReportMatchedAudiences(r.Context(), []string{"b"})
			return &request.User{Name: "system:serviceaccount:ns:sa"}, true, nil
		})), authenticationv1.TokenReviewSpec{Token: "jwt", Audiences: []string{"a", "b"}}, nil,
			authenticationv1.TokenReviewStatus{Authenticated: true, Audiences: []string{"b"},
				User: authenticationv1.UserInfo{Username: "system:serviceaccount:ns:sa", Groups: []string{"system:authenticated"}}}},
		{"an unknown token", auth.Union(auth.Anonymous, tokens), authenticationv1.TokenReviewSpec{Token: "nope"}, nil,
			authenticationv1.TokenReviewStatus{Error: "invalid bearer token"}},
		{"no token authenticator is not anonymous", auth.Union(auth.Anonymous), authenticationv1.TokenReviewSpec{Token: "nope"}, nil,
			authenticationv1.TokenReviewStatus{Error: "invalid bearer token"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := Creaters(Config{Authentication: tt.authn, APIAudiences: tt.audiences})[handlers.CreateKey{Group: "authentication.k8s.io", Version: "v1", Resource: "tokenreviews"}]
			out, err := tr(context.Background(), handlers.CreateRequest{Object: &authenticationv1.TokenReview{Spec: tt.spec}})
			if err != nil {
				t.Fatal(err)
			}
			got := out.(*authenticationv1.TokenReview).Status
			if got.Authenticated != tt.want.Authenticated || got.Error != tt.want.Error || got.User.Username != tt.want.User.Username ||
				got.User.UID != tt.want.User.UID || strings.Join(got.User.Groups, ",") != strings.Join(tt.want.User.Groups, ",") ||
				strings.Join(got.Audiences, ",") != strings.Join(tt.want.Audiences, ",") {
				t.Errorf("status %+v, want %+v", got, tt.want)
			}
		})
	}
	tr := Creaters(Config{})[handlers.CreateKey{Group: "authentication.k8s.io", Version: "v1", Resource: "tokenreviews"}]
	if _, err := tr(context.Background(), handlers.CreateRequest{Object: &authenticationv1.TokenReview{}}); !apierrors.IsBadRequest(err) ||
		err.Error() != "token is required for TokenReview in authentication" {
		t.Errorf("empty token: %v", err)
	}
}

func TestSelfSubjectReview(t *testing.T) {
	now := time.Date(2026, 11, 26, 0, 36, 10, 0, time.UTC)
	ssr := Creaters(Config{Now: func() time.Time { return now }})[handlers.CreateKey{Group: "authentication.k8s.io", Version: "v1", Resource: "selfsubjectreviews"}]
	u := &request.User{Name: "alice", UID: "1", Groups: []string{"dev", "system:authenticated"}, Extra: map[string][]string{"k": {"v"}}}
	out, err := ssr(request.WithUser(context.Background(), u), handlers.CreateRequest{Object: &authenticationv1.SelfSubjectReview{ObjectMeta: metav1.ObjectMeta{Name: "ignored"}}})
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*authenticationv1.SelfSubjectReview)
	if got.Name != "" || !got.CreationTimestamp.Time.Equal(now) || got.Status.UserInfo.Username != "alice" || got.Status.UserInfo.UID != "1" ||
		len(got.Status.UserInfo.Groups) != 2 || got.Status.UserInfo.Extra["k"][0] != "v" || got.Kind != "SelfSubjectReview" {
		t.Errorf("got %+v", got)
	}
	if _, err := ssr(context.Background(), handlers.CreateRequest{Object: &authenticationv1.SelfSubjectReview{}}); !apierrors.IsBadRequest(err) {
		t.Errorf("no user: %v", err)
	}
}
