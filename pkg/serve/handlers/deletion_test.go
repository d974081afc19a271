package handlers_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestDeletePropagation pins what DELETE does with propagationPolicy and orphanDependents, step by
// step on the same server, as kube-apiserver v1.37.2 answers (checked against it): the garbage
// collector's finalizers, the marking, the codes and the bodies. The server runs its garbage
// collector, which removes its finalizers from deleted objects as soon as it has handled their
// dependents; so only the DELETE answers, and objects it does not touch, are checked here.
func TestDeletePropagation(t *testing.T) {
	a := start(t)
	const widgets = "/apis/example.com/v1/namespaces/default/widgets"
	for _, name := range []string{"fg", "or", "od", "bg", "dry"} {
		a.do("POST", cmPath, configMap(name, `{}`)).expect(t, 201)
	}
	for _, name := range []string{"fin", "fin2"} {
		a.do("POST", cmPath, `{"metadata":{"name":"`+name+`","finalizers":["x/y"]}}`).expect(t, 201)
	}
	// An "orphan" finalizer on an object not being deleted is nothing the garbage collector acts on.
	for _, name := range []string{"has-orphan", "has-orphan-dry"} {
		a.do("POST", cmPath, `{"metadata":{"name":"`+name+`","finalizers":["orphan"]}}`).expect(t, 201)
	}
	a.do("POST", widgets, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","finalizers":["x/y"]}}`).expect(t, 201, `"generation":1`)

	const marked = `"deletionGracePeriodSeconds":0`
	success := func(name string) string {
		return `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"` + name + `","kind":"configmaps","uid":"`
	}
	steps := []struct {
		name, method, path, body string
		code                     int
		parts                    []string
		absent                   []string
	}{
		{"foreground marks", "DELETE", cmPath + "/fg?propagationPolicy=Foreground", "", 200,
			[]string{`"kind":"ConfigMap"`, `"deletionTimestamp":"`, marked, `"finalizers":["foregroundDeletion"]`}, nil},
		{"orphan marks", "DELETE", cmPath + "/or?propagationPolicy=Orphan", "", 200, []string{marked, `"finalizers":["orphan"]`}, nil},
		{"orphanDependents=true marks", "DELETE", cmPath + "/od?orphanDependents=true", "", 200, []string{`"finalizers":["orphan"]`}, nil},
		{"background deletes at once", "DELETE", cmPath + "/bg?propagationPolicy=Background", "", 200, []string{success("bg")}, nil},
		{"background removes an orphan finalizer, and with it the object", "DELETE", cmPath + "/has-orphan", `{"propagationPolicy":"Background"}`, 200,
			[]string{success("has-orphan")}, nil},
		{"other finalizers: marked, 202 for orphanDependents=false", "DELETE", cmPath + "/fin?orphanDependents=false", "", 202,
			[]string{marked, `"finalizers":["x/y"]`}, nil},
		{"and 202 again on a second such delete", "DELETE", cmPath + "/fin", `{"orphanDependents":false}`, 202, []string{`"finalizers":["x/y"]`}, nil},
		{"foreground appends after the others", "DELETE", cmPath + "/fin?propagationPolicy=Foreground", "", 200,
			[]string{`"finalizers":["x/y","foregroundDeletion"]`}, nil},
		{"a later delete changes the policy", "DELETE", cmPath + "/fin?propagationPolicy=Orphan", "", 200,
			[]string{`"finalizers":["x/y","orphan"]`}, []string{"foregroundDeletion"}},
		{"the first marking bumps a generation", "DELETE", widgets + "/w", "", 200, []string{`"generation":2`, marked}, nil},
		{"only the first", "DELETE", widgets + "/w?propagationPolicy=Orphan", "", 200, []string{`"generation":2`, `"finalizers":["x/y","orphan"]`}, nil},
		{"dry run: a Status", "DELETE", cmPath + "/dry?dryRun=All", "", 200, []string{success("dry")}, nil},
		{"dry run: nothing deleted", "GET", cmPath + "/dry", "", 200, nil, []string{"deletionTimestamp"}},
		{"dry run foreground: the marked object", "DELETE", cmPath + "/dry?dryRun=All&propagationPolicy=Foreground", "", 200,
			[]string{`"finalizers":["foregroundDeletion"]`, marked}, nil},
		{"dry run foreground: nothing marked", "GET", cmPath + "/dry", "", 200, nil, []string{"deletionTimestamp", "finalizers"}},
		// kube's quirk: its update path fails with "delete now" and the dry run returns the store's
		// empty object.
		{"dry run that removes the last finalizer", "DELETE", cmPath + "/has-orphan-dry?dryRun=All&propagationPolicy=Background", "", 200,
			[]string{`{"kind":"ConfigMap","apiVersion":"v1","metadata":{}}`}, nil},
		{"dry run: finalizer kept", "GET", cmPath + "/has-orphan-dry", "", 200, []string{`"finalizers":["orphan"]`}, []string{"deletionTimestamp"}},
		{"a pending delete", "DELETE", cmPath + "/fin2", "", 200, []string{`"finalizers":["x/y"]`, marked}, nil},
		{"removing the last finalizer removes the object", "PATCH", cmPath + "/fin2", `{"metadata":{"finalizers":null}}`, 200, nil, nil},
		{"removed", "GET", cmPath + "/fin2", "", 404, nil, nil},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			var headers []string
			if st.method == "PATCH" {
				headers = []string{"Content-Type: application/merge-patch+json"}
			}
			r := a.do(st.method, st.path, st.body, headers...)
			r.expect(t, st.code, st.parts...)
			for _, p := range st.absent {
				if strings.Contains(r.body, p) {
					t.Errorf("body has %s:\n%s", p, r.body)
				}
			}
		})
	}
}

// TestDeleteKinds pins the kinds whose deletes kube answers otherwise: a ServiceAccount's removal
// returns the object, an Event never gets the garbage collector's finalizers.
func TestDeleteKinds(t *testing.T) {
	a := start(t)
	const sas = "/api/v1/namespaces/default/serviceaccounts"
	a.do("POST", sas, `{"metadata":{"name":"sa"}}`).expect(t, 201)
	a.do("DELETE", sas+"/sa?dryRun=All", "").expect(t, 200, `{"kind":"ServiceAccount","apiVersion":"v1","metadata":{"name":"sa"`)
	a.do("DELETE", sas+"/sa", "").expect(t, 200, `{"kind":"ServiceAccount","apiVersion":"v1","metadata":{"name":"sa"`)
	a.do("GET", sas+"/sa", "").expect(t, 404)

	const events = "/api/v1/namespaces/default/events"
	a.do("POST", events, `{"metadata":{"name":"ev"},"involvedObject":{"name":"x","namespace":"default"},"reason":"R"}`).expect(t, 201)
	a.do("DELETE", events+"/ev?propagationPolicy=Foreground", "").expect(t, 200, `"status":"Success"`)
}

// TestDeleteCollection pins deletecollection's answer (the list of the objects as listed, one page
// with a limit) and that each object is deleted with the request's options. The objects carry a
// finalizer of their own, so they stay whatever the garbage collector does with its finalizers.
func TestDeleteCollection(t *testing.T) {
	a := start(t)
	for _, name := range []string{"a", "b", "c"} {
		a.do("POST", cmPath, `{"metadata":{"name":"`+name+`","labels":{"set":"x"},"finalizers":["x/y"]}}`).expect(t, 201)
	}
	a.do("POST", cmPath, `{"metadata":{"name":"other"}}`).expect(t, 201)

	a.do("DELETE", cmPath+"?labelSelector=set%3Dnone", "").expect(t, 200, `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"`, `"items":[]}`)
	dry := a.do("DELETE", cmPath+"?labelSelector=set%3Dx&dryRun=All", "")
	dry.expect(t, 200, `"items":[{"metadata":{"name":"a",`)
	a.do("GET", cmPath+"/a", "").expect(t, 200)

	page := a.do("DELETE", cmPath+"?labelSelector=set%3Dx&limit=1&propagationPolicy=Foreground", "")
	page.expect(t, 200, `"continue":"`, `"items":[{"metadata":{"name":"a",`)
	if strings.Contains(page.body, "deletionTimestamp") {
		t.Errorf("the answer shows the objects as listed, before the delete: %s", page.body)
	}
	a.do("GET", cmPath+"/a", "").expect(t, 200, `"deletionTimestamp"`)
	r := a.do("GET", cmPath+"/b", "")
	if r.expect(t, 200); strings.Contains(r.body, "deletionTimestamp") {
		t.Errorf("a deletecollection with limit=1 deleted more: %s", r.body)
	}

	all := a.do("DELETE", cmPath+"?labelSelector=set%3Dx", `{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Orphan"}`)
	all.expect(t, 200)
	var list struct {
		Items []struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name              string  `json:"name"`
				DeletionTimestamp *string `json:"deletionTimestamp"`
			} `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(all.body), &list); err != nil || len(list.Items) != 3 {
		t.Fatalf("deletecollection answered %v: %s", err, all.body)
	}
	for i, it := range list.Items {
		if it.Kind != "" {
			t.Errorf("item %s has kind %q; kube's built-in list items have none", it.Metadata.Name, it.Kind)
		}
		if marked := it.Metadata.DeletionTimestamp != nil; marked != (i == 0) {
			t.Errorf("item %s as listed: marked %v", it.Metadata.Name, marked)
		}
	}
	for _, name := range []string{"b", "c"} {
		a.do("GET", cmPath+"/"+name, "").expect(t, 200, `"deletionTimestamp"`, `"deletionGracePeriodSeconds":0`, `"x/y"`)
	}
	a.do("GET", cmPath+"/other", "").expect(t, 200)

	const widgets = "/apis/example.com/v1/namespaces/default/widgets"
	a.do("POST", widgets, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"}}`).expect(t, 201)
	// A custom resource's list is unstructured JSON: sorted keys, metadata.continue always written.
	a.do("DELETE", widgets, "").expect(t, 200, `{"apiVersion":"example.com/v1","items":[{"apiVersion":"example.com/v1","kind":"Widget",`,
		`],"kind":"WidgetList","metadata":{"continue":"","resourceVersion":"`)
	a.do("GET", widgets+"/w", "").expect(t, 404)
}

// TestDeleteOptionsBody pins kube's answers to DeleteOptions bodies it cannot use.
func TestDeleteOptionsBody(t *testing.T) {
	a := start(t)
	// x has a finalizer of its own, so that it stays whatever the garbage collector does.
	a.do("POST", cmPath, `{"metadata":{"name":"x","finalizers":["x/y"]}}`).expect(t, 201)
	tests := []struct {
		name, path, body string
		headers          []string
		code             int
		parts            []string
	}{
		{"bad JSON", cmPath + "/x", `{"kind":`, nil, 400, []string{`"message":"couldn't get version/kind; json parse error: unexpected end of JSON input"`}},
		{"wrong kind", cmPath + "/x", `{"apiVersion":"v1","kind":"ConfigMap"}`, nil, 400,
			[]string{`"message":"no kind \"ConfigMap\" is registered for version \"v1\" in scheme \"pkg/runtime/scheme.go:111\""`}},
		{"wrong type", cmPath + "/x", `{"gracePeriodSeconds":"x"}`, nil, 400, []string{`cannot unmarshal string`}},
		{"both policies", cmPath + "/x", `{"orphanDependents":true,"propagationPolicy":"Orphan"}`, nil, 422,
			[]string{`DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Invalid value: \"Orphan\": orphanDependents and deletionPropagation cannot be both set`}},
		{"bad dry run", cmPath + "/x?dryRun=Some", "", nil, 422, []string{`dryRun: Unsupported value: [\"Some\"]: supported values: \"All\"`}},
		{"another group's DeleteOptions", cmPath + "/x", `{"kind":"DeleteOptions","apiVersion":"apps/v1","dryRun":["All"]}`, nil, 200, []string{`"finalizers":["x/y"]`}},
		// kube reads the body or, without one, the query: never both.
		{"body wins over the query", cmPath + "/x?dryRun=All", `{"propagationPolicy":"Foreground"}`, nil, 200, []string{`"finalizers":["x/y","foregroundDeletion"]`}},
		{"YAML", cmPath + "/x", "propagationPolicy: Orphan\n", []string{"Content-Type: application/yaml"}, 200, []string{`"finalizers":["x/y","orphan"]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a.do("DELETE", tt.path, tt.body, tt.headers...).expect(t, tt.code, tt.parts...)
		})
	}
}

// TestDeleteRepresentations pins the encodings of DELETE answers, as kube answers (checked against
// it): negotiated before anything is deleted, in YAML when asked, and as PartialObjectMetadata for an
// object (a Status stays a Status).
func TestDeleteRepresentations(t *testing.T) {
	a := start(t)
	for _, name := range []string{"y1", "y2", "y3", "y4"} {
		a.do("POST", cmPath, `{"metadata":{"name":"`+name+`","labels":{"yy":"1"},"finalizers":["x/y"]}}`).expect(t, 201)
	}
	const (
		partial     = "Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
		partialList = "Accept: application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
	)
	tests := []struct {
		name, method, path, accept string
		code                       int
		parts                      []string
	}{
		{"unacceptable: nothing deleted", "DELETE", cmPath + "/y1", "Accept: application/xml", 406, nil},
		{"still there", "GET", cmPath + "/y1", "", 200, nil},
		{"YAML", "DELETE", cmPath + "/y1", "Accept: application/yaml", 200, []string{"apiVersion: v1\nkind: ConfigMap\nmetadata:\n"}},
		{"partial", "DELETE", cmPath + "/y2", partial, 200,
			[]string{`{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"y2",`, `"finalizers":["x/y"]`}},
		{"a list asked for one: deleted, then 406", "DELETE", cmPath + "/y3", partialList, 406,
			[]string{`"message": "you requested PartialObjectMetadataList, but the requested object is not a list (*core.ConfigMap)"`}},
		{"marked", "GET", cmPath + "/y3", "", 200, []string{`"deletionTimestamp"`}},
		{"dry run as partial", "DELETE", cmPath + "/y4?dryRun=All", partial, 200, []string{`{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"y4",`}},
		{"deletecollection as PartialObjectMetadataList", "DELETE", cmPath + "?labelSelector=yy&dryRun=All", partialList, 200,
			[]string{`{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"`, `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"y4",`}},
		{"deletecollection asked for one: 406", "DELETE", cmPath + "?labelSelector=yy&dryRun=All", partial, 406,
			[]string{`(*core.ConfigMapList)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var headers []string
			if tt.accept != "" {
				headers = []string{tt.accept}
			}
			a.do(tt.method, tt.path, "", headers...).expect(t, tt.code, tt.parts...)
		})
	}
	// A Status stays a Status.
	a.do("POST", cmPath, configMap("gone", `{}`)).expect(t, 201)
	a.do("DELETE", cmPath+"/gone", "", partial).expect(t, 200, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"gone","kind":"configmaps","uid":"`)
}
