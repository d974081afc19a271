package routes

import (
	"fmt"
	"reflect"
	"slices"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/apictl/apictl/pkg/kinds"
	kindsbuiltin "github.com/apictl/apictl/pkg/kinds/builtin"
	"github.com/apictl/apictl/pkg/routes/model"
)

// Built-in group names.
const (
	GroupCore             = ""
	GroupAuthentication   = "authentication.k8s.io"
	GroupAuthorization    = "authorization.k8s.io"
	GroupCoordination     = "coordination.k8s.io"
	GroupRBAC             = "rbac.authorization.k8s.io"
	GroupAPIExtensions    = "apiextensions.k8s.io"
	GroupDiscovery        = "discovery.k8s.io"
	GroupCertificates     = "certificates.k8s.io"
	GroupNetworking       = "networking.k8s.io"
	GroupFlowControl      = "flowcontrol.apiserver.k8s.io"
	GroupStorageMigration = "storagemigration.k8s.io"
)

// Builtin returns the API apictl serves without any --api-config: a small generic control plane.
// Verbs, short names, categories, scopes and printer columns are those kube-apiserver 1.32 reports
// for these resources (services alone are in "all"; CRDs, APIServices and the admissionregistration.k8s.io resources in
// "api-extensions"). Groups follow
// kube's discovery order, by the priority kube gives each group and then by name: core, then authentication.k8s.io
// and authorization.k8s.io (17700 and 17600, the review APIs, which are create-only), then
// rbac.authorization.k8s.io (17000), apiextensions.k8s.io (16700), coordination.k8s.io (16500) and
// discovery.k8s.io (16200).
// Every call returns a new value.
func Builtin() *API {
	return newAPI(withKinds([]Group{
		{Name: GroupCore, Versions: []Version{{Name: "v1"}}},
		// The aggregator's own group comes first, as kube-aggregator lists it before every delegate.
		{Name: GroupAPIRegistration, Versions: []Version{{Name: "v1"}}},
		// events.k8s.io (17750) comes next: kube's apps (17800) is not served.
		{Name: GroupEvents, Versions: []Version{{Name: "v1"}}},
		{Name: GroupAuthentication, Versions: []Version{{Name: "v1", Resources: authenticationV1()}}},
		{Name: GroupAuthorization, Versions: []Version{{Name: "v1", Resources: authorizationV1()}}},
		// Groups whose kinds all have packages of their own (pkg/kinds) start empty here; withKinds
		// fills them and drops what stays empty.
		{Name: GroupCertificates, Versions: []Version{{Name: "v1"}}},
		{Name: GroupNetworking, Versions: []Version{{Name: "v1"}}},
		{Name: GroupRBAC, Versions: []Version{{Name: "v1"}}},
		// admissionregistration.k8s.io shares 16700 with apiextensions.k8s.io and sorts first by name.
		{Name: GroupAdmissionRegistration, Versions: []Version{{Name: "v1"}}},
		{Name: GroupAPIExtensions, Versions: []Version{{Name: "v1"}}},
		{Name: GroupCoordination, Versions: []Version{{Name: "v1"}}},
		{Name: GroupDiscovery, Versions: []Version{{Name: "v1"}}},
		{Name: GroupFlowControl, Versions: []Version{{Name: "v1"}}},
		{Name: GroupStorageMigration, Versions: []Version{{Name: "v1"}}},
	}, kindsbuiltin.Kinds()))
}

// withKinds adds the route-model entry of each kind described in a package of its own (pkg/kinds) to
// its group version, which must be one of groups.
func withKinds(groups []Group, described []kinds.Kind) []Group {
	for _, k := range described {
		v := findVersion(groups, k.Group, k.Version)
		if v == nil {
			panic(fmt.Sprintf("kind %s is served at %s/%s, which the built-in API does not list: add the group version to routes.Builtin",
				k.Resource.Kind, k.Group, k.Version))
		}
		v.Resources = append(v.Resources, k.Resource)
	}
	return withoutEmpty(groups)
}

// withoutEmpty drops the versions that serve no resource, and the groups left with no version.
func withoutEmpty(groups []Group) []Group {
	out := groups[:0]
	for _, g := range groups {
		g.Versions = slices.DeleteFunc(g.Versions, func(v Version) bool { return len(v.Resources) == 0 })
		if len(g.Versions) > 0 {
			out = append(out, g)
		}
	}
	return out
}

func findVersion(groups []Group, group, version string) *Version {
	for gi := range groups {
		if groups[gi].Name != group {
			continue
		}
		for vi := range groups[gi].Versions {
			if groups[gi].Versions[vi].Name == version {
				return &groups[gi].Versions[vi]
			}
		}
	}
	return nil
}

// authenticationV1 are the authentication review APIs: create-only, nothing stored.
func authenticationV1() []Resource {
	return []Resource{
		review("selfsubjectreviews", "selfsubjectreview", "SelfSubjectReview", false, reflect.TypeFor[authenticationv1.SelfSubjectReview]()),
		review("tokenreviews", "tokenreview", "TokenReview", false, reflect.TypeFor[authenticationv1.TokenReview]()),
	}
}

// authorizationV1 are the access review APIs: create-only, nothing stored.
func authorizationV1() []Resource {
	return []Resource{
		review("localsubjectaccessreviews", "localsubjectaccessreview", "LocalSubjectAccessReview", true, reflect.TypeFor[authorizationv1.LocalSubjectAccessReview]()),
		review("selfsubjectaccessreviews", "selfsubjectaccessreview", "SelfSubjectAccessReview", false, reflect.TypeFor[authorizationv1.SelfSubjectAccessReview]()),
		review("selfsubjectrulesreviews", "selfsubjectrulesreview", "SelfSubjectRulesReview", false, reflect.TypeFor[authorizationv1.SelfSubjectRulesReview]()),
		review("subjectaccessreviews", "subjectaccessreview", "SubjectAccessReview", false, reflect.TypeFor[authorizationv1.SubjectAccessReview]()),
	}
}

// review is a create-only resource (Resource.CreateOnly): kube lists no list kind, short names,
// printer columns or storageVersionHash for it, since nothing is stored.
func review(plural, singular, kind string, namespaced bool, obj reflect.Type) Resource {
	return Resource{Plural: plural, Singular: singular, Kind: kind, Namespaced: namespaced, Verbs: []string{VerbCreate}, GoType: obj}
}

func nameColumn() PrinterColumn { return model.NameColumn() }
func ageColumn() PrinterColumn  { return model.AgeColumn() }
