package routes

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestApplyRuntimeConfig(t *testing.T) {
	tests := []struct {
		name string
		rc   map[string]string
		// want lists the group versions left, and resources after a colon when not all are.
		want []string
		// errs are substrings of the problems, in key order.
		errs []string
	}{
		{name: "nothing", want: []string{"v1", "apiregistration.k8s.io/v1", "events.k8s.io/v1", "authentication.k8s.io/v1", "authorization.k8s.io/v1", "certificates.k8s.io/v1", "networking.k8s.io/v1", "rbac.authorization.k8s.io/v1", "admissionregistration.k8s.io/v1", "apiextensions.k8s.io/v1", "coordination.k8s.io/v1", "discovery.k8s.io/v1", "flowcontrol.apiserver.k8s.io/v1", "storagemigration.k8s.io/v1", "example.com/v1", "example.com/v1beta1", "other.io/v1"}},
		{name: "core off as v1", rc: map[string]string{"v1": "false"},
			want: []string{"apiregistration.k8s.io/v1", "events.k8s.io/v1", "authentication.k8s.io/v1", "authorization.k8s.io/v1", "certificates.k8s.io/v1", "networking.k8s.io/v1", "rbac.authorization.k8s.io/v1", "admissionregistration.k8s.io/v1", "apiextensions.k8s.io/v1", "coordination.k8s.io/v1", "discovery.k8s.io/v1", "flowcontrol.apiserver.k8s.io/v1", "storagemigration.k8s.io/v1", "example.com/v1", "example.com/v1beta1", "other.io/v1"}},
		{name: "core off as api/v1, legacy ignored", rc: map[string]string{"api/v1": "false", "api/legacy": "true"},
			want: []string{"apiregistration.k8s.io/v1", "events.k8s.io/v1", "authentication.k8s.io/v1", "authorization.k8s.io/v1", "certificates.k8s.io/v1", "networking.k8s.io/v1", "rbac.authorization.k8s.io/v1", "admissionregistration.k8s.io/v1", "apiextensions.k8s.io/v1", "coordination.k8s.io/v1", "discovery.k8s.io/v1", "flowcontrol.apiserver.k8s.io/v1", "storagemigration.k8s.io/v1", "example.com/v1", "example.com/v1beta1", "other.io/v1"}},
		{name: "completed core key", rc: map[string]string{"/v1": "false", "api/all": "true"},
			want: []string{"apiregistration.k8s.io/v1", "events.k8s.io/v1", "authentication.k8s.io/v1", "authorization.k8s.io/v1", "certificates.k8s.io/v1", "networking.k8s.io/v1", "rbac.authorization.k8s.io/v1", "admissionregistration.k8s.io/v1", "apiextensions.k8s.io/v1", "coordination.k8s.io/v1", "discovery.k8s.io/v1", "flowcontrol.apiserver.k8s.io/v1", "storagemigration.k8s.io/v1", "example.com/v1", "example.com/v1beta1", "other.io/v1"}},
		{name: "all off, two on", rc: map[string]string{"api/all": "false", "v1": "", "coordination.k8s.io/v1": "true"},
			want: []string{"v1", "coordination.k8s.io/v1"}},
		{name: "ga off keeps beta", rc: map[string]string{"api/ga": "false", "rbac.authorization.k8s.io/v1": "true"},
			want: []string{"rbac.authorization.k8s.io/v1", "example.com/v1beta1"}},
		{name: "beta off", rc: map[string]string{"api/beta": "false"},
			want: []string{"v1", "apiregistration.k8s.io/v1", "events.k8s.io/v1", "authentication.k8s.io/v1", "authorization.k8s.io/v1", "certificates.k8s.io/v1", "networking.k8s.io/v1", "rbac.authorization.k8s.io/v1", "admissionregistration.k8s.io/v1", "apiextensions.k8s.io/v1", "coordination.k8s.io/v1", "discovery.k8s.io/v1", "flowcontrol.apiserver.k8s.io/v1", "storagemigration.k8s.io/v1", "example.com/v1", "other.io/v1"}},
		{name: "a resource off", rc: map[string]string{"v1/secrets": "false", "example.com/v1/widgets": "false", "other.io/v1": "false"},
			want: []string{"v1:configmaps,endpoints,events,namespaces,podtemplates,resourcequotas,serviceaccounts,services", "apiregistration.k8s.io/v1", "events.k8s.io/v1", "authentication.k8s.io/v1", "authorization.k8s.io/v1", "certificates.k8s.io/v1", "networking.k8s.io/v1", "rbac.authorization.k8s.io/v1", "admissionregistration.k8s.io/v1", "apiextensions.k8s.io/v1", "coordination.k8s.io/v1", "discovery.k8s.io/v1", "flowcontrol.apiserver.k8s.io/v1", "storagemigration.k8s.io/v1", "example.com/v1:gadgets", "example.com/v1beta1"}},
		{name: "a resource on in a version off", rc: map[string]string{"rbac.authorization.k8s.io/v1": "false", "rbac.authorization.k8s.io/v1/roles": "true"},
			want: []string{"v1", "apiregistration.k8s.io/v1", "events.k8s.io/v1", "authentication.k8s.io/v1", "authorization.k8s.io/v1", "certificates.k8s.io/v1", "networking.k8s.io/v1", "rbac.authorization.k8s.io/v1:roles", "admissionregistration.k8s.io/v1", "apiextensions.k8s.io/v1", "coordination.k8s.io/v1", "discovery.k8s.io/v1", "flowcontrol.apiserver.k8s.io/v1", "storagemigration.k8s.io/v1", "example.com/v1", "example.com/v1beta1", "other.io/v1"}},
		{name: "only api/all=false", rc: map[string]string{"api/all": "false", "api/legacy": ""},
			errs: []string{"--runtime-config api/all=false is an invalid key with only api/all=false"}},
		{name: "unknown group", rc: map[string]string{"apps/v1": "true", "batch/v1/jobs": "false"},
			errs: []string{"--runtime-config apps/v1=true has unknown api groups apps: this server serves v1, apiregistration.k8s.io/v1, events.k8s.io/v1, authentication.k8s.io/v1, authorization.k8s.io/v1, certificates.k8s.io/v1, networking.k8s.io/v1, rbac.authorization.k8s.io/v1",
				"--runtime-config batch/v1/jobs=false has unknown api groups batch"}},
		{name: "unknown version and resource", rc: map[string]string{"coordination.k8s.io/v1beta1": "false", "v1/pods": "false", "v2": "true"},
			errs: []string{"coordination.k8s.io/v1beta1=false names group version coordination.k8s.io/v1beta1 that has not been registered: use coordination.k8s.io/v1",
				"v1/pods=false names resource pods that v1 does not serve: it serves configmaps, endpoints, events, namespaces, podtemplates, resourcequotas, secrets, serviceaccounts, services",
				"v2=true has an invalid key v2: use <group>/<version>"}},
		{name: "syntax", rc: map[string]string{"api/all": "", "api/nope": "true", "apps": "", "apps/v1/Deployments": "false", "coordination.k8s.io/v1": "maybe"},
			errs: []string{"api/all= has an invalid value api/all=: api/* keys take exactly true or false",
				"api/nope=true has an invalid key api/nope: use api/all",
				"apps= has an invalid key apps: use <group>/<version>",
				`apps/v1/Deployments=false has an invalid key apps/v1/Deployments: group/version/resource and resource is always lowercase plural, not "Deployments"`,
				`coordination.k8s.io/v1=maybe has an invalid value of coordination.k8s.io/v1: maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ApplyRuntimeConfig(testAPI(t), tt.rc)
			problems := Errors(err)
			if len(problems) != len(tt.errs) {
				t.Fatalf("problems %q, want %d", problems, len(tt.errs))
			}
			for i, p := range problems {
				var rc *RuntimeConfigError
				if !errors.As(p, &rc) || !strings.Contains(p.Error(), tt.errs[i]) {
					t.Errorf("problem %d = %v, want it to contain %q", i, p, tt.errs[i])
				}
			}
			if err != nil {
				return
			}
			if have := describeVersions(got); !slices.Equal(have, tt.want) {
				t.Errorf("group versions %q, want %q", have, tt.want)
			}
		})
	}
}

// describeVersions lists group versions, and their resources when some are off.
func describeVersions(api *API) []string {
	full := testAPIForDescribe()
	var out []string
	for _, g := range api.Groups() {
		for _, v := range g.Versions {
			s := groupVersionString(g.Name, v.Name)
			var names []string
			for _, r := range v.Resources {
				names = append(names, r.Plural)
			}
			if fv := full[schema.GroupVersion{Group: g.Name, Version: v.Name}]; fv != len(names) {
				s += ":" + strings.Join(names, ",")
			}
			out = append(out, s)
		}
	}
	return out
}

func testAPIForDescribe() map[schema.GroupVersion]int {
	return map[schema.GroupVersion]int{
		{Version: "v1"}: 9, {Group: "authentication.k8s.io", Version: "v1"}: 2, {Group: "authorization.k8s.io", Version: "v1"}: 4,
		{Group: "rbac.authorization.k8s.io", Version: "v1"}: 4, {Group: "apiextensions.k8s.io", Version: "v1"}: 1,
		{Group: "coordination.k8s.io", Version: "v1"}: 1, {Group: "discovery.k8s.io", Version: "v1"}: 1,
		{Group: "flowcontrol.apiserver.k8s.io", Version: "v1"}: 2,
		{Group: "admissionregistration.k8s.io", Version: "v1"}: 6, {Group: "apiregistration.k8s.io", Version: "v1"}: 1, {Group: "events.k8s.io", Version: "v1"}: 1,
		{Group: "storagemigration.k8s.io", Version: "v1"}: 1, {Group: "certificates.k8s.io", Version: "v1"}: 2,
		{Group: "networking.k8s.io", Version: "v1"}: 2,
		{Group: "example.com", Version: "v1"}:       2, {Group: "example.com", Version: "v1beta1"}: 1, {Group: "other.io", Version: "v1"}: 1,
	}
}

func TestVersionKind(t *testing.T) {
	for v, want := range map[string]string{"v1": "ga", "v12": "ga", "v1beta1": "beta", "v2alpha3": "alpha", "v1beta": "", "v": "", "1": "", "v1gamma1": "", "v1beta1x": ""} {
		if got := versionKind(v); got != want {
			t.Errorf("versionKind(%s) = %q, want %q", v, got, want)
		}
	}
}
