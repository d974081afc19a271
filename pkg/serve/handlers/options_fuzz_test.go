package handlers

//lint:file-ignore SA1019 orphanDependents is deprecated in kube's API, and kube still honours it

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/apictl/apictl/pkg/serve/store"
	"github.com/apictl/apictl/pkg/storage"
)

// fuzzStored are stored objects, one for each of fuzzScopes' first scopes, that the selector target
// filters: a selector must look into them without failing.
var fuzzStored = []string{
	`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"default","labels":{"app":"web","tier":"1"}},"data":{"k":"v"}}`,
	`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"default"},"type":"Opaque"}`,
	`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"default","labels":{"kubernetes.io/metadata.name":"default"}},"status":{"phase":"Active"}}`,
	`{"apiVersion":"v1","kind":"Event","metadata":{"name":"e","namespace":"default"},"involvedObject":{"kind":"Pod","name":"p","uid":"u"},"reason":"Started","source":{"component":"kubelet"},"type":"Normal"}`,
}

// FuzzSelectors parses arbitrary label and field selectors as a list or watch does, checks the field
// selector against a kind's selectable fields, and filters a stored object with both. Nothing may
// panic; refusals are 400 Statuses; a selector that parses prints as a selector that parses to the
// same thing.
func FuzzSelectors(f *testing.F) {
	scopes := fuzzScopes(f)
	for _, tc := range []struct {
		labels, fields string
		kind           uint8
	}{
		{"app=web", "", 0},
		{"app in (web,db),tier!=2,!legacy", "metadata.name=cm", 0},
		{"environment notin (prod), has-it", "metadata.namespace!=kube-system", 0},
		{"a.b/c-d_e==f", "type=kubernetes.io/service-account-token", 1},
		{"", "status.phase=Active", 2},
		{"", "involvedObject.kind=Pod,involvedObject.name=p,reason=Started,source=kubelet,type=Normal", 3},
		{"", "metadata.name=a\\,b\\=c", 0},
		{"x>1,y<2", "spec.nodeName=n", 4},
		{"(((", "=,=", 0},
		{"a in ()", "metadata.name==x", 10},
		{"!", "!", 0},
	} {
		f.Add(tc.labels, tc.fields, tc.kind)
	}
	f.Fuzz(func(t *testing.T, labelSelector, fieldSelector string, kind uint8) {
		if len(labelSelector)+len(fieldSelector) > maxFuzzBody {
			return
		}
		s := scopes[int(kind)%len(scopes)]
		o, err := parseListOptions(url.Values{"labelSelector": {labelSelector}, "fieldSelector": {fieldSelector}})
		if err != nil {
			clientError(t, err)
			return
		}
		// A printed selector parses again, and printing is stable from then on. (apimachinery's own
		// printing may reorder terms once: "==x,=A" prints as "=x,=A", which parses to "=A,=x".)
		if again, err := labels.Parse(o.labels.String()); err != nil {
			t.Fatalf("label selector %q prints as %q, which does not parse: %v", labelSelector, o.labels, err)
		} else if thrice, err := labels.Parse(again.String()); err != nil || thrice.String() != again.String() {
			t.Fatalf("label selector %q: %q prints unstably as %v, %v", labelSelector, again, thrice, err)
		}
		if again, err := fields.ParseSelector(o.fields.String()); err != nil {
			t.Fatalf("field selector %q prints as %q, which does not parse: %v", fieldSelector, o.fields, err)
		} else if thrice, err := fields.ParseSelector(again.String()); err != nil || thrice.String() != again.String() {
			t.Fatalf("field selector %q: %q prints unstably as %v, %v", fieldSelector, again, thrice, err)
		}
		if err := s.fields.check(o.fields); err != nil {
			clientError(t, err)
			return
		}
		filter := s.fields.filter(o.labels, o.fields)
		if filter == nil {
			if !o.labels.Empty() || !o.fields.Empty() {
				t.Fatalf("no filter for %q and %q", labelSelector, fieldSelector)
			}
			return
		}
		value := fuzzStored[int(kind)%len(fuzzStored)]
		if _, err := filter(storage.KeyValue{Key: "k", Value: []byte(value)}); err != nil {
			t.Fatalf("filtering %s: %v", value, err)
		}
	})
}

// FuzzListOptions reads arbitrary list and watch queries. It must never panic; refusals are 400 or
// 422 Statuses; what it accepts is within kube's rules.
func FuzzListOptions(f *testing.F) {
	for _, q := range []string{
		"",
		"limit=500",
		"limit=500&continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ",
		"watch=1&allowWatchBookmarks=true&resourceVersion=12&timeoutSeconds=300",
		"watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true",
		"resourceVersion=0&resourceVersionMatch=Exact",
		"resourceVersion=5&resourceVersionMatch=NotOlderThan&limit=-1",
		"resourceVersion=5&continue=x",
		"sendInitialEvents=false",
		"timeoutSeconds=9223372036854775807&limit=9223372036854775808",
		"labelSelector=a%3Db&fieldSelector=metadata.name%3Dx",
		"labelSelector=%zz;watch",
	} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, query string) {
		if len(query) > maxFuzzBody {
			return
		}
		q := (&url.URL{RawQuery: query}).Query()
		o, err := parseListOptions(q)
		if err != nil {
			clientError(t, err)
			return
		}
		if o.labels == nil || o.fields == nil {
			t.Fatal("accepted options without selectors")
		}
		if o.limit < 0 {
			t.Fatalf("limit %d", o.limit)
		}
		switch o.resourceVersionMatch {
		case storage.MatchUnset:
		case storage.MatchExact, storage.MatchNotOlderThan:
			if o.resourceVersion == "" && !o.watch {
				t.Fatalf("resourceVersionMatch %q without a resourceVersion", o.resourceVersionMatch)
			}
		default:
			t.Fatalf("accepted resourceVersionMatch %q", o.resourceVersionMatch)
		}
		if o.sendInitialEvents != nil && !o.watch {
			t.Fatal("accepted sendInitialEvents for a list")
		}
	})
}

// FuzzParseResourceVersion reads the resourceVersion a client sends with an object. It must never
// panic; it accepts "" (none) and the decimal revisions a server hands out, digits only as kube
// parses them, and refuses anything else with a 400.
func FuzzParseResourceVersion(f *testing.F) {
	for _, rv := range []string{"", "1", "42", "0", "-1", "+5", "007", "9223372036854775807", "9223372036854775808", "18446744073709551615", "1.0", "abc"} {
		f.Add(rv)
	}
	f.Fuzz(func(t *testing.T, rv string) {
		n, err := store.ParseResourceVersion(rv)
		if err != nil {
			clientError(t, err)
			return
		}
		if rv == "" {
			if n != 0 {
				t.Fatalf("\"\" parses as %d", n)
			}
			return
		}
		for _, c := range []byte(rv) {
			if c < '0' || c > '9' {
				t.Fatalf("accepted %q as %d", rv, n)
			}
		}
		if back, err := strconv.ParseUint(rv, 10, 64); n <= 0 || err != nil || int64(back) != n {
			t.Fatalf("%q parses as %d; kube reads %d, %v", rv, n, back, err)
		}
	})
}

// FuzzDeleteOptions reads arbitrary DELETE bodies (JSON, YAML or protobuf DeleteOptions) and queries.
// It must never panic, refuses with 400 or 422 Statuses, and what it accepts is valid.
func FuzzDeleteOptions(f *testing.F) {
	for _, tc := range []struct{ contentType, body, query string }{
		{"", "", ""},
		{"", "", "gracePeriodSeconds=0&propagationPolicy=Foreground&dryRun=All"},
		{mediaJSON, `{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background","preconditions":{"uid":"u","resourceVersion":"5"}}`, ""},
		{mediaJSON, `{"orphanDependents":true,"propagationPolicy":"Orphan"}`, ""},
		{mediaYAML, "gracePeriodSeconds: -1\ndryRun: [All, None]\n", "orphanDependents=f"},
		{mediaProtobuf, "k8s\x00\n\x13\n\x02v1\x12\rDeleteOptions\x12\x04\x08\x1e\x2a\x00", ""},
		{mediaProtobuf, "\x08\x1e", ""},
		{mediaJSON, `{"gracePeriodSeconds":1e400}`, ""},
	} {
		f.Add(tc.contentType, []byte(tc.body), tc.query)
	}
	f.Fuzz(func(t *testing.T, contentType string, body []byte, query string) {
		if len(body)+len(query) > maxFuzzBody {
			return
		}
		r := httptest.NewRequest(http.MethodDelete, "/", bytes.NewReader(body))
		r.URL.RawQuery = query
		r.Header.Set("Content-Type", contentType)
		o, err := parseDeleteOptions(r)
		if err != nil {
			clientError(t, err)
			return
		}
		if g := o.GracePeriodSeconds; g != nil && *g < 0 {
			t.Fatalf("accepted gracePeriodSeconds %d", *g)
		}
		if o.OrphanDependents != nil && o.PropagationPolicy != nil {
			t.Fatal("accepted both orphanDependents and propagationPolicy")
		}
	})
}
