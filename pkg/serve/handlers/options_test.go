package handlers

import (
	"errors"
	"net/url"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// BenchmarkParseListOptions measures the option parsing every LIST and WATCH does: none, the ones
// informers send, and a label selector.
func BenchmarkParseListOptions(b *testing.B) {
	for _, bc := range []struct{ name, query string }{
		{"none", ""},
		{"informer-watch", "allowWatchBookmarks=true&resourceVersion=12345&timeoutSeconds=300&watch=true"},
		{"paged-list", "limit=500&resourceVersion=0"},
		{"label-selector", "labelSelector=app%3Dweb"},
	} {
		q, err := url.ParseQuery(bc.query)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := parseListOptions(q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestListOptionErrors pins kube's answers to list and watch options, checked against
// kube-apiserver v1.37.2: the parsers' own messages, then kube's ValidateListOptions, causes in its
// order, then (checkResourceVersion) the resourceVersion as kube's storage reads it.
func TestListOptionErrors(t *testing.T) {
	for _, tc := range []struct {
		name, query string
		code        int32
		message     string
	}{
		{"label selector", "labelSelector=a%3D%3D%3Db", 400, "unable to parse requirement: found '=', expected: identifier"},
		{"label selector of no key", "labelSelector=%3D%3D%3D", 400, "found '==', expected: !, identifier, or 'end of string'"},
		{"label selector before field selector", "labelSelector=a%3D%3D%3Db&fieldSelector=a%3D%3D%3Db", 400, "unable to parse requirement: found '=', expected: identifier"},
		{"field selector", "fieldSelector=a", 400, "invalid selector: 'a'; can't understand 'a'"},
		{"timeoutSeconds before limit", "timeoutSeconds=x&limit=y", 400, `strconv.ParseInt: parsing "x": invalid syntax`},
		{"limit", "limit=1.5", 400, `strconv.ParseInt: parsing "1.5": invalid syntax`},
		{"unknown match", "resourceVersionMatch=Bogus", 422, `ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided, resourceVersionMatch: Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""]`},
		{"exact match on a watch", "watch=true&resourceVersionMatch=Exact", 422, `ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided, resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]`},
		{"sendInitialEvents without match", "watch=true&sendInitialEvents=true", 422, `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan`},
		{"sendInitialEvents of any value", "watch=true&sendInitialEvents=abc", 422, `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan`},
		{"a list of everything wrong", "sendInitialEvents=true&resourceVersionMatch=Exact&continue=x", 422, `ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided, resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided, sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list]`},
		{"list resourceVersion", "resourceVersion=abc", 400, `invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`},
		{"list resourceVersion out of range", "resourceVersion=99999999999999999999", 400, `invalid resource version: resourceVersion: Invalid value: "99999999999999999999": strconv.ParseUint: parsing "99999999999999999999": value out of range`},
		{"list resourceVersion beside a token", "resourceVersion=abc&continue=x", 0, ""}, // the token's checks come first
		{"watch resourceVersion", "watch=true&resourceVersion=-1", 500, `resourceVersion: Invalid value: "-1": strconv.ParseUint: parsing "-1": invalid syntax`},
		{"resourceVersion 0", "resourceVersion=0&limit=5", 0, ""},
		{"a revision", "watch=1&resourceVersion=18446744073709551615", 0, ""}, // too large: the storage's to judge
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, err := url.ParseQuery(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			o, err := parseListOptions(q)
			if err == nil {
				err = o.checkResourceVersion()
			}
			if tc.code == 0 {
				if err != nil {
					t.Errorf("error %v", err)
				}
				return
			}
			var se *apierrors.StatusError
			if !errors.As(err, &se) || se.ErrStatus.Code != tc.code || se.ErrStatus.Message != tc.message {
				t.Errorf("error %v (%#v)\nwant %d %s", err, se, tc.code, tc.message)
			}
			if tc.code == 500 && se.ErrStatus.Reason != "" {
				t.Errorf("reason %q, want none, as kube's for an error that is not a Status", se.ErrStatus.Reason)
			}
		})
	}
}

// TestWriteOptionErrors pins kube's metav1 validation of create and update options.
func TestWriteOptionErrors(t *testing.T) {
	for _, tc := range []struct{ query, want string }{
		{"dryRun=Some", `CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Some"]: supported values: "All"`},
		{"dryRun=All&dryRun=", `CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["All",""]: supported values: "All"`},
		{"fieldValidation=Loud", `CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loud": supported values: "", "Ignore", "Strict", "Warn"`},
		{"fieldManager=a%07b", `CreateOptions.meta.k8s.io "" is invalid: fieldManager: Invalid value: "a\ab": invalid character U+0007 (at position 1)`},
		{"dryRun=All&fieldValidation=Strict&fieldManager=k%C3%BCbectl", ""},
	} {
		t.Run(tc.query, func(t *testing.T) {
			q, err := url.ParseQuery(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			_, err = parseWriteOptions(q, "CreateOptions")
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("error %v", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Errorf("error %v\nwant  %s", err, tc.want)
			}
		})
	}
}
