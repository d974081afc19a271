package handlers_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestNamespaceLifecycle(t *testing.T) {
	a := start(t)
	for _, ns := range []string{"default", "kube-system", "kube-public"} {
		a.do("GET", "/api/v1/namespaces/"+ns, "").expect(t, 200, `"phase":"Active"`)
	}
	a.do("POST", "/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"doomed"}}`).
		expect(t, 201, `"spec":{"finalizers":["kubernetes"]}`, `"status":{"phase":"Active"}`)
	cms := "/api/v1/namespaces/doomed/configmaps"
	a.do("POST", cms, configMap("plain", `{}`)).expect(t, 201)
	a.do("POST", cms, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"held","finalizers":["example.com/hold"]}}`).expect(t, 201)
	a.do("POST", "/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"Bad.Name"}}`).expect(t, 422)

	a.do("DELETE", "/api/v1/namespaces/doomed", "").expect(t, 200, `"deletionTimestamp":"`, `"phase":"Terminating"`)
	a.do("POST", cms, configMap("late", `{}`)).expect(t, 403, `"reason":"Forbidden"`,
		`unable to create new content in namespace doomed because it is being terminated`, `"reason":"NamespaceTerminating"`)
	eventually(t, "plain configmap deleted by the namespace controller", func() bool { return a.do("GET", cms+"/plain", "").code == 404 })
	held := a.do("GET", cms+"/held", "")
	held.expect(t, 200, `"deletionTimestamp":"`)
	a.do("GET", "/api/v1/namespaces/doomed", "").expect(t, 200, `"phase":"Terminating"`)

	// Releasing the finalizer lets the configmap go, and then the namespace.
	var cm map[string]any
	if err := json.Unmarshal([]byte(held.body), &cm); err != nil {
		t.Fatal(err)
	}
	delete(cm["metadata"].(map[string]any), "finalizers")
	body, _ := json.Marshal(cm)
	a.do("PUT", cms+"/held", string(body)).expect(t, 200)
	a.do("GET", cms+"/held", "").expect(t, 404)
	eventually(t, "namespace gone", func() bool { return a.do("GET", "/api/v1/namespaces/doomed", "").code == 404 })
}

func TestFinalizers(t *testing.T) {
	a := start(t)
	a.do("POST", cmPath, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"f","finalizers":["example.com/x"]}}`).expect(t, 201)
	a.do("DELETE", cmPath+"/f", "").expect(t, 200, `"kind":"ConfigMap"`, `"deletionTimestamp":"`, `"deletionGracePeriodSeconds":0`)
	a.do("DELETE", cmPath+"/f", "").expect(t, 200, `"deletionTimestamp":"`) // a second delete changes nothing
	a.do("GET", cmPath+"/f", "").expect(t, 200, `"finalizers":["example.com/x"]`)
	a.do("PUT", cmPath+"/f", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"f"}}`).expect(t, 200)
	a.do("GET", cmPath+"/f", "").expect(t, 404)

	a.do("POST", cmPath, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"p"}}`).expect(t, 201)
	a.do("DELETE", cmPath+"/p", `{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":"not-it"}}`).
		expect(t, 409, `"message":"Operation cannot be fulfilled on ConfigMap \"p\": the UID in the precondition (not-it) does not match the UID in record (`,
			`"details":{"name":"p","kind":"ConfigMap"}`)
}

const widgets = "/apis/example.com/v1/namespaces/default/widgets"

func TestCustomResourceStatusAndGeneration(t *testing.T) {
	a := start(t)
	a.do("POST", widgets, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":"s"},"status":{"phase":"ignored"}}`).
		expect(t, 201, `"generation":1`, `"apiVersion":"example.com/v1"`)
	got := a.do("GET", widgets+"/w", "")
	if strings.Contains(got.body, "ignored") {
		t.Errorf("a create set status through the main resource: %s", got.body)
	}
	rv := field(t, got.body, "metadata", "resourceVersion")
	status := fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","resourceVersion":%q},"spec":{"size":"XL"},"status":{"phase":"Ready"}}`, rv)
	r := a.do("PUT", widgets+"/w/status", status)
	r.expect(t, 200, `"phase":"Ready"`, `"size":"s"`, `"generation":1`)
	rv = field(t, r.body, "metadata", "resourceVersion")
	main := fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","resourceVersion":%q},"spec":{"size":"m"},"status":{"phase":"lost"}}`, rv)
	a.do("PUT", widgets+"/w", main).expect(t, 200, `"size":"m"`, `"phase":"Ready"`, `"generation":2`)
	a.do("PUT", widgets+"/w", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{}}`).
		expect(t, 422, `"message":"widgets.example.com \"w\" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update"`)
	// As kube writes an unstructured list: keys sorted.
	a.do("GET", "/apis/example.com/v1/widgets", "").expect(t, 200, `{"apiVersion":"example.com/v1","items":[`, `],"kind":"WidgetList","metadata":{"continue":""`)
}

func field(t *testing.T, body string, path ...string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, body)
	}
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("no %v in %s", path, body)
		}
		v = m[p]
	}
	s, _ := v.(string)
	return s
}

func TestPagingAndSelectors(t *testing.T) {
	a := start(t)
	for i := range 10 {
		tier := "web"
		if i%2 == 1 {
			tier = "db"
		}
		a.do("POST", cmPath, fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c%d","labels":{"tier":%q}}}`, i, tier)).expect(t, 201)
	}
	var names []string
	token := ""
	listRV := ""
	for page := 0; page < 10; page++ {
		r := a.do("GET", cmPath+"?limit=3&labelSelector=tier%3Dweb&continue="+token, "")
		r.expect(t, 200)
		var list struct {
			Metadata struct {
				ResourceVersion, Continue string
				RemainingItemCount        *int64
			}
			Items []struct{ Metadata struct{ Name string } }
		}
		if err := json.Unmarshal([]byte(r.body), &list); err != nil {
			t.Fatal(err)
		}
		if listRV == "" {
			listRV = list.Metadata.ResourceVersion
		} else if list.Metadata.ResourceVersion != listRV {
			t.Errorf("page %d at resourceVersion %s, the first at %s", page, list.Metadata.ResourceVersion, listRV)
		}
		for _, it := range list.Items {
			names = append(names, it.Metadata.Name)
		}
		if list.Metadata.Continue == "" {
			break
		}
		if len(list.Items) != 3 {
			t.Errorf("a short page while more remain: %d items", len(list.Items))
		}
		token = list.Metadata.Continue
	}
	if strings.Join(names, ",") != "c0,c2,c4,c6,c8" {
		t.Errorf("paged selection = %v", names)
	}
	a.do("GET", cmPath+"?fieldSelector=metadata.name%3Dc3", "").expect(t, 200, `"name":"c3"`)
	// kube answers with the deleted objects, as listed.
	a.do("DELETE", cmPath+"?labelSelector=tier%3Ddb", "").expect(t, 200, `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":`, `"items":[{"metadata":{"name":"c1",`)
	r := a.do("GET", cmPath, "")
	if strings.Contains(r.body, `"tier":"db"`) || !strings.Contains(r.body, `"name":"c0"`) {
		t.Errorf("deletecollection with a selector removed the wrong objects: %s", r.body)
	}
	a.do("GET", "/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dx", "").expect(t, 200)
	a.do("GET", "/api/v1/namespaces/default/events?fieldSelector=bogus%3Dx", "").expect(t, 400, `field label not supported: bogus`)
}

// TestEventTTL: an event expires through its lease, and one updated or patched (as event recorders
// bump a count) starts a new lease, as kube's TTLFunc gives it on every write: it outlives an event
// written only once, at the same time, by the time it was written again.
func TestEventTTL(t *testing.T) {
	a := start(t, "--event-ttl", "4s")
	body := func(name, message string) string {
		return `{"apiVersion":"v1","kind":"Event","metadata":{"name":"` + name + `"},"involvedObject":{"kind":"ConfigMap","name":"x","namespace":"default"},"reason":"Test","message":"` + message + `"}`
	}
	const events = "/api/v1/namespaces/default/events/"
	a.do("PUT", events+"put-created", body("put-created", "hello")).expect(t, 201)
	for _, name := range []string{"created", "patched", "replaced"} {
		a.do("POST", "/api/v1/namespaces/default/events", body(name, "hello")).expect(t, 201)
	}
	time.Sleep(2 * time.Second)
	a.do("PATCH", events+"patched", `{"count":2}`, "Content-Type: application/merge-patch+json").expect(t, 200, `"count":2`)
	a.do("PUT", events+"replaced", body("replaced", "again")).expect(t, 200, `"message":"again"`)
	for _, name := range []string{"created", "put-created"} {
		eventually(t, name+" event expired through its lease", func() bool { return a.do("GET", events+name, "").code == 404 })
	}
	// The rewritten events' leases began 2s later: they live at least that much longer.
	for _, name := range []string{"patched", "replaced"} {
		a.do("GET", events+name, "").expect(t, 200)
	}
	for _, name := range []string{"patched", "replaced"} {
		eventually(t, name+" event expired through its new lease", func() bool { return a.do("GET", events+name, "").code == 404 })
	}
}

func TestCustomResourceSchemaAndScale(t *testing.T) {
	a := start(t)
	a.do("POST", widgets, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"bad"},"spec":{"replicas":"many"}}`).
		expect(t, 422, `Widget.example.com \"bad\" is invalid: [spec.replicas: Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\"`)
	a.do("POST", widgets+"?fieldValidation=Strict", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"s"},"spec":{"colour":"red"}}`).
		expect(t, 400, `strict decoding error: unknown field \"spec.colour\"`)
	pruned := a.do("POST", widgets, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"replicas":2,"colour":"red"}}`)
	pruned.expect(t, 201, `"replicas":2`)
	if strings.Contains(pruned.body, "colour") || pruned.header.Get("Warning") != `299 - "unknown field \"spec.colour\""` {
		t.Errorf("unknown field not pruned with a warning: %q %s", pruned.header.Get("Warning"), pruned.body)
	}
	scale := a.do("GET", widgets+"/w/scale", "")
	scale.expect(t, 200, `"kind":"Scale"`, `"apiVersion":"autoscaling/v1"`, `"spec":{"replicas":2}`)
	put := `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"w","namespace":"default"},"spec":{"replicas":5}}`
	a.do("PUT", widgets+"/w/scale", put).expect(t, 200, `"spec":{"replicas":5}`)
	a.do("GET", widgets+"/w", "").expect(t, 200, `"replicas":5`, `"generation":2`)
	a.do("PUT", widgets+"/w/scale", strings.Replace(put, "5", "-1", 1)).expect(t, 422, `Invalid value: -1`)
}

// TestNamespaceDeletionKeepsCustomResource checks that marking a custom resource for deletion when its
// namespace goes changes only its metadata: an integer beyond float64's 2^53 keeps every digit.
func TestNamespaceDeletionKeepsCustomResource(t *testing.T) {
	a := start(t)
	a.do("POST", "/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"big"}}`).expect(t, 201)
	ws := "/apis/example.com/v1/namespaces/big/widgets"
	a.do("POST", ws, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","finalizers":["example.com/hold"]},"spec":{"serial":9007199254740993}}`).
		expect(t, 201, `"serial":9007199254740993`)
	a.do("DELETE", "/api/v1/namespaces/big", "").expect(t, 200)
	var got response
	eventually(t, "widget marked for deletion by the namespace controller", func() bool {
		got = a.do("GET", ws+"/w", "")
		return strings.Contains(got.body, `"deletionTimestamp":"`)
	})
	got.expect(t, 200, `"serial":9007199254740993`, `"apiVersion":"example.com/v1"`, `"deletionGracePeriodSeconds":0`)
}
