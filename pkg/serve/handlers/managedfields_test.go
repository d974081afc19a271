package handlers_test

import (
	"cmp"
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"
)

// ownedBy is one managedFields entry without its time: the manager, the operation, the
// subresource and the FieldsV1 as compact JSON.
type ownedBy struct {
	manager, operation, subresource, fields string
}

// TestManagedFieldsAsKube replays writes whose managedFields kube-apiserver v1.37.2 records in a
// way that depends on more than the write itself, and compares every entry with what kube
// recorded for the same requests (the want lists are its answers, times left out):
//   - a Secret is decoded before the field manager runs: stringData folds into data and the
//     type defaults to Opaque, so creates, updates and patches own f:data/f:<key> and f:type,
//     never f:stringData; an apply owns what it applied (f:stringData);
//   - kube's schema makes structs atomic (ObjectReference, OwnerReference, RoleRef, Subject) and
//     lists atomic or keyed by its markers (a ServiceAccount's secrets by name);
//   - a custom resource's /status writes own f:status only, whatever metadata the body carries;
//   - a patch of a custom resource is defaulted from the schema before the field manager records
//     it, so a patch that removes a defaulted field does not disown it (testdata/knobs.yaml).
func TestManagedFieldsAsKube(t *testing.T) {
	a := start(t, "--api-config", "testdata/knobs.yaml")
	for _, step := range []struct {
		name, method, path, contentType string
		code                            int
		body                            string
		want                            []ownedBy
	}{
		{
			name: "secret create with stringData", method: "POST", path: "/api/v1/namespaces/default/secrets?fieldManager=creator",
			contentType: "application/json", code: 201,
			body: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"mf-s1"},"stringData":{"a":"x"},"data":{"b":"eQ=="}}`,
			want: []ownedBy{
				{"creator", "Update", "", `{"f:data":{".":{},"f:a":{},"f:b":{}},"f:type":{}}`},
			},
		},
		{
			name: "secret update with stringData", method: "PUT", path: "/api/v1/namespaces/default/secrets/mf-s1?fieldManager=putter",
			contentType: "application/json", code: 200,
			body: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"mf-s1"},"stringData":{"c":"z"},"data":{"b":"eQ=="}}`,
			want: []ownedBy{
				{"creator", "Update", "", `{"f:data":{".":{},"f:b":{}},"f:type":{}}`},
				{"putter", "Update", "", `{"f:data":{"f:c":{}}}`},
			},
		},
		{
			name: "secret merge patch of stringData", method: "PATCH", path: "/api/v1/namespaces/default/secrets/mf-s1?fieldManager=merger",
			contentType: "application/merge-patch+json", code: 200,
			body: `{"stringData":{"d":"w"}}`,
			want: []ownedBy{
				{"creator", "Update", "", `{"f:data":{".":{},"f:b":{}},"f:type":{}}`},
				{"merger", "Update", "", `{"f:data":{"f:d":{}}}`},
				{"putter", "Update", "", `{"f:data":{"f:c":{}}}`},
			},
		},
		{
			name: "secret strategic merge patch of stringData", method: "PATCH", path: "/api/v1/namespaces/default/secrets/mf-s1?fieldManager=strategic",
			contentType: "application/strategic-merge-patch+json", code: 200,
			body: `{"stringData":{"e":"v"}}`,
			want: []ownedBy{
				{"creator", "Update", "", `{"f:data":{".":{},"f:b":{}},"f:type":{}}`},
				{"merger", "Update", "", `{"f:data":{"f:d":{}}}`},
				{"putter", "Update", "", `{"f:data":{"f:c":{}}}`},
				{"strategic", "Update", "", `{"f:data":{"f:e":{}}}`},
			},
		},
		{
			name: "secret JSON patch adding stringData", method: "PATCH", path: "/api/v1/namespaces/default/secrets/mf-s1?fieldManager=jsonpatch",
			contentType: "application/json-patch+json", code: 200,
			body: `[{"op":"add","path":"/stringData","value":{"f":"u"}}]`,
			want: []ownedBy{
				{"creator", "Update", "", `{"f:data":{".":{},"f:b":{}},"f:type":{}}`},
				{"jsonpatch", "Update", "", `{"f:data":{"f:f":{}}}`},
				{"merger", "Update", "", `{"f:data":{"f:d":{}}}`},
				{"putter", "Update", "", `{"f:data":{"f:c":{}}}`},
				{"strategic", "Update", "", `{"f:data":{"f:e":{}}}`},
			},
		},
		{
			name: "secret apply of stringData", method: "PATCH", path: "/api/v1/namespaces/default/secrets/mf-s1?fieldManager=applier",
			contentType: "application/apply-patch+yaml", code: 200,
			body: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"mf-s1"},"stringData":{"g":"t"}}`,
			want: []ownedBy{
				{"applier", "Apply", "", `{"f:stringData":{"f:g":{}}}`},
				{"creator", "Update", "", `{"f:data":{".":{},"f:b":{}},"f:type":{}}`},
				{"jsonpatch", "Update", "", `{"f:data":{"f:f":{}}}`},
				{"merger", "Update", "", `{"f:data":{"f:d":{}}}`},
				{"putter", "Update", "", `{"f:data":{"f:c":{}}}`},
				{"strategic", "Update", "", `{"f:data":{"f:e":{}}}`},
			},
		},
		{
			name: "owner references are atomic", method: "POST", path: "/api/v1/namespaces/default/configmaps?fieldManager=creator",
			contentType: "application/json", code: 201,
			body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"mf-cm","ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"x","uid":"11111111-1111-1111-1111-111111111111"}]}}`,
			want: []ownedBy{
				{"creator", "Update", "", `{"f:metadata":{"f:ownerReferences":{".":{},"k:{\"uid\":\"11111111-1111-1111-1111-111111111111\"}":{}}}}`},
			},
		},
		{
			name: "service account secrets by name, each atomic", method: "POST", path: "/api/v1/namespaces/default/serviceaccounts?fieldManager=creator",
			contentType: "application/json", code: 201,
			body: `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"mf-sa"},"secrets":[{"name":"a","namespace":"default"}],"imagePullSecrets":[{"name":"p"}]}`,
			want: []ownedBy{
				{"creator", "Update", "", `{"f:imagePullSecrets":{},"f:secrets":{".":{},"k:{\"name\":\"a\"}":{}}}`},
			},
		},
		{
			name: "event involvedObject is atomic", method: "POST", path: "/api/v1/namespaces/default/events?fieldManager=creator",
			contentType: "application/json", code: 201,
			body: `{"apiVersion":"v1","kind":"Event","metadata":{"name":"mf-ev"},"involvedObject":{"kind":"ConfigMap","namespace":"default","name":"mf-cm","apiVersion":"v1"},"reason":"Test","message":"m","type":"Normal","source":{"component":"c"}}`,
			want: []ownedBy{
				{"creator", "Update", "", `{"f:involvedObject":{},"f:message":{},"f:reason":{},"f:source":{"f:component":{}},"f:type":{}}`},
			},
		},
		{
			name: "role binding roleRef and subjects are atomic", method: "POST", path: "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings?fieldManager=creator",
			contentType: "application/json", code: 201,
			body: `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"mf-rb"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"r"},"subjects":[{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"ann"}]}`,
			want: []ownedBy{
				{"creator", "Update", "", `{"f:roleRef":{},"f:subjects":{}}`},
			},
		},
		{
			name: "role binding subjects patched", method: "PATCH", path: "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings/mf-rb?fieldManager=patcher",
			contentType: "application/merge-patch+json", code: 200,
			body: `{"subjects":[{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"bob"}]}`,
			want: []ownedBy{
				{"creator", "Update", "", `{"f:roleRef":{}}`},
				{"patcher", "Update", "", `{"f:subjects":{}}`},
			},
		},
		{
			name: "cluster role rules and selectors are atomic", method: "POST", path: "/apis/rbac.authorization.k8s.io/v1/clusterroles?fieldManager=creator",
			contentType: "application/json", code: 201,
			body: `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"mf-cr"},"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get"]}],"aggregationRule":{"clusterRoleSelectors":[{"matchLabels":{"a":"b"}}]}}`,
			want: []ownedBy{
				{"creator", "Update", "", `{"f:aggregationRule":{".":{},"f:clusterRoleSelectors":{}},"f:rules":{}}`},
			},
		},
		{
			name: "custom resource create owns the default", method: "POST", path: "/apis/fields.example.com/v1/namespaces/default/knobs?fieldManager=creator",
			contentType: "application/json", code: 201,
			body: `{"apiVersion":"fields.example.com/v1","kind":"Knob","metadata":{"name":"mf-k","labels":{"a":"b"}},"spec":{"size":1}}`,
			want: []ownedBy{
				{"creator", "Update", "", `{"f:metadata":{"f:labels":{".":{},"f:a":{}}},"f:spec":{".":{},"f:color":{},"f:size":{}}}`},
			},
		},
		{
			name: "custom resource status apply records status only", method: "PATCH", path: "/apis/fields.example.com/v1/namespaces/default/knobs/mf-k/status?fieldManager=statusapply",
			contentType: "application/apply-patch+yaml", code: 200,
			body: `{"apiVersion":"fields.example.com/v1","kind":"Knob","metadata":{"name":"mf-k","labels":{"ignored":"yes"}},"spec":{"size":50},"status":{"ready":true}}`,
			want: []ownedBy{
				{"statusapply", "Apply", "status", `{"f:status":{"f:ready":{}}}`},
				{"creator", "Update", "", `{"f:metadata":{"f:labels":{".":{},"f:a":{}}},"f:spec":{".":{},"f:color":{},"f:size":{}}}`},
			},
		},
		{
			name: "custom resource status patch records status only", method: "PATCH", path: "/apis/fields.example.com/v1/namespaces/default/knobs/mf-k/status?fieldManager=statuspatch",
			contentType: "application/merge-patch+json", code: 200,
			body: `{"metadata":{"labels":{"other":"x"}},"status":{"ready":false}}`,
			want: []ownedBy{
				{"creator", "Update", "", `{"f:metadata":{"f:labels":{".":{},"f:a":{}}},"f:spec":{".":{},"f:color":{},"f:size":{}}}`},
				{"statuspatch", "Update", "status", `{"f:status":{"f:ready":{}}}`},
			},
		},
		{
			name: "custom resource merge patch removing the defaulted field", method: "PATCH", path: "/apis/fields.example.com/v1/namespaces/default/knobs/mf-k?fieldManager=creator",
			contentType: "application/merge-patch+json", code: 200,
			body: `{"spec":{"color":null,"size":2}}`,
			want: []ownedBy{
				{"creator", "Update", "", `{"f:metadata":{"f:labels":{".":{},"f:a":{}}},"f:spec":{".":{},"f:color":{},"f:size":{}}}`},
				{"statuspatch", "Update", "status", `{"f:status":{"f:ready":{}}}`},
			},
		},
		{
			name: "custom resource JSON patch removing the defaulted field, another manager", method: "PATCH", path: "/apis/fields.example.com/v1/namespaces/default/knobs/mf-k?fieldManager=jsonpatch",
			contentType: "application/json-patch+json", code: 200,
			body: `[{"op":"remove","path":"/spec/color"},{"op":"replace","path":"/spec/size","value":3}]`,
			want: []ownedBy{
				{"creator", "Update", "", `{"f:metadata":{"f:labels":{".":{},"f:a":{}}},"f:spec":{".":{},"f:color":{}}}`},
				{"jsonpatch", "Update", "", `{"f:spec":{"f:size":{}}}`},
				{"statuspatch", "Update", "status", `{"f:status":{"f:ready":{}}}`},
			},
		},
		{
			name: "custom resource merge patch setting another color", method: "PATCH", path: "/apis/fields.example.com/v1/namespaces/default/knobs/mf-k?fieldManager=painter",
			contentType: "application/merge-patch+json", code: 200,
			body: `{"spec":{"color":"red"}}`,
			want: []ownedBy{
				{"creator", "Update", "", `{"f:metadata":{"f:labels":{".":{},"f:a":{}}},"f:spec":{}}`},
				{"jsonpatch", "Update", "", `{"f:spec":{"f:size":{}}}`},
				{"painter", "Update", "", `{"f:spec":{"f:color":{}}}`},
				{"statuspatch", "Update", "status", `{"f:status":{"f:ready":{}}}`},
			},
		},
		{
			name: "custom resource merge patch removing it again", method: "PATCH", path: "/apis/fields.example.com/v1/namespaces/default/knobs/mf-k?fieldManager=eraser",
			contentType: "application/merge-patch+json", code: 200,
			body: `{"spec":{"color":null}}`,
			want: []ownedBy{
				{"creator", "Update", "", `{"f:metadata":{"f:labels":{".":{},"f:a":{}}},"f:spec":{}}`},
				{"eraser", "Update", "", `{"f:spec":{"f:color":{}}}`},
				{"jsonpatch", "Update", "", `{"f:spec":{"f:size":{}}}`},
				{"statuspatch", "Update", "status", `{"f:status":{"f:ready":{}}}`},
			},
		},
	} {
		resp := a.do(step.method, step.path, step.body, "Content-Type: "+step.contentType)
		if resp.code != step.code {
			t.Fatalf("%s: status %d, want %d: %s", step.name, resp.code, step.code, resp.body)
		}
		if got := managedFieldsOf(t, resp.body); !reflect.DeepEqual(got, step.want) {
			t.Errorf("%s: managedFields\ngot  %v\nwant %v", step.name, got, step.want)
		}
	}
}

// managedFieldsOf reads the managedFields of the object in body, failing unless they are in kube's
// order: by operation, time to the second, manager and subresource. It returns them ordered as if
// every write had fallen in one second, which is how the want lists are written: a run whose writes
// straddle a second orders them by time first, as kube does.
func managedFieldsOf(t *testing.T, body string) []ownedBy {
	t.Helper()
	var obj struct {
		Metadata struct {
			ManagedFields []struct {
				Manager     string          `json:"manager"`
				Operation   string          `json:"operation"`
				Subresource string          `json:"subresource"`
				Time        time.Time       `json:"time"`
				FieldsV1    json.RawMessage `json:"fieldsV1"`
			} `json:"managedFields"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(body), &obj); err != nil {
		t.Fatalf("decoding %s: %v", body, err)
	}
	entries := obj.Metadata.ManagedFields
	for i := 1; i < len(entries); i++ {
		p, q := entries[i-1], entries[i]
		if cmp.Or(cmp.Compare(p.Operation, q.Operation), p.Time.Compare(q.Time), cmp.Compare(p.Manager, q.Manager),
			cmp.Compare(p.Subresource, q.Subresource)) > 0 {
			t.Errorf("managedFields out of kube's order: %s at %v before %s at %v", p.Manager, p.Time, q.Manager, q.Time)
		}
	}
	var out []ownedBy
	for _, e := range entries {
		out = append(out, ownedBy{e.Manager, e.Operation, e.Subresource, string(e.FieldsV1)})
	}
	slices.SortStableFunc(out, func(a, b ownedBy) int {
		return cmp.Or(cmp.Compare(a.operation, b.operation), cmp.Compare(a.manager, b.manager), cmp.Compare(a.subresource, b.subresource))
	})
	return out
}
