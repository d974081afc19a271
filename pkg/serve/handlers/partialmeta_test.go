package handlers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
)

// TestMetadataClient reads built-in and custom resources through client-go's metadata client, which
// asks for PartialObjectMetadata(List) (protobuf first, then JSON) and fails on anything else.
func TestMetadataClient(t *testing.T) {
	a := start(t)
	const widgets = "/apis/example.com/v1/namespaces/default/widgets"
	a.do("POST", cmPath, `{"metadata":{"name":"m1","labels":{"md":"yes"},"annotations":{"a":"b"}},"data":{"big":"not in the metadata"}}`).expect(t, 201)
	a.do("POST", widgets, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1","labels":{"md":"yes"}},"spec":{"size":"s"}}`).expect(t, 201)

	client, err := metadata.NewForConfig(a.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tc := range []struct {
		gvr       schema.GroupVersionResource
		name      string
		wantLabel string
	}{
		{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "m1", "yes"},
		{schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, "w1", "yes"},
	} {
		t.Run(tc.gvr.Resource, func(t *testing.T) {
			res := client.Resource(tc.gvr).Namespace("default")
			got, err := res.Get(ctx, tc.name, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			// The client decodes only PartialObjectMetadata, and drops its kind.
			if got.Name != tc.name ||
				got.Labels["md"] != tc.wantLabel || got.UID == "" || got.ResourceVersion == "" {
				t.Errorf("Get = %+v", got)
			}
			list, err := res.List(ctx, metav1.ListOptions{LabelSelector: "md=yes"})
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			if len(list.Items) != 1 || list.Items[0].Name != tc.name || list.ResourceVersion == "" {
				t.Fatalf("List = %+v", list)
			}
			w, err := res.Watch(ctx, metav1.ListOptions{LabelSelector: "md=yes", ResourceVersion: list.ResourceVersion})
			if err != nil {
				t.Fatalf("Watch: %v", err)
			}
			defer w.Stop()
			path := cmPath + "/" + tc.name
			if tc.gvr.Group != "" {
				path = widgets + "/" + tc.name
			}
			a.do("PATCH", path, `{"metadata":{"labels":{"changed":"1"}}}`, "Content-Type: application/merge-patch+json").expect(t, 200)
			select {
			case ev := <-w.ResultChan():
				if ev.Type != watch.Modified {
					t.Fatalf("event %s: %+v", ev.Type, ev.Object)
				}
				m, err := metaOf(ev.Object)
				if err != nil || m.GetName() != tc.name || m.GetLabels()["changed"] != "1" {
					t.Errorf("event object %+v (%v)", ev.Object, err)
				}
			case <-ctx.Done():
				t.Fatal("no event")
			}
		})
	}
}

func metaOf(obj any) (*metav1.PartialObjectMetadata, error) {
	p, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return nil, fmt.Errorf("a %T, not a PartialObjectMetadata", obj)
	}
	return p, nil
}

// TestPartialObjectMetadata pins the metadata representations on the wire, as kube-apiserver v1.37.2
// answers them (checked against it): GET, LIST and WATCH, v1 and v1beta1, JSON and YAML, and the 406s
// for a representation that does not fit the route.
func TestPartialObjectMetadata(t *testing.T) {
	a := start(t)
	a.do("POST", cmPath, `{"metadata":{"name":"p1","labels":{"pm":"yes"}},"data":{"k":"v"}}`).expect(t, 201)
	a.do("POST", "/apis/example.com/v1/namespaces/default/widgets", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"}}`).expect(t, 201)
	const (
		partial     = "Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
		partialList = "Accept: application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
	)
	tests := []struct {
		name, path, accept string
		code               int
		parts              []string
		absent             []string
	}{
		{"get", cmPath + "/p1", partial, 200,
			[]string{`{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"p1","namespace":"default","uid":"`, `"labels":{"pm":"yes"}`}, []string{`"data"`}},
		{"get v1beta1 in YAML", cmPath + "/p1", "Accept: application/yaml;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1", 200,
			[]string{"apiVersion: meta.k8s.io/v1beta1\nkind: PartialObjectMetadata\nmetadata:\n"}, nil},
		{"list", cmPath + "?labelSelector=pm", partialList, 200,
			[]string{`{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"`, `"items":[{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"p1",`}, []string{`"data"`}},
		{"empty list has null items", cmPath + "?labelSelector=pm%3Dno", partialList, 200, []string{`"items":null}`}, nil},
		// kube writes errors without conversions: with no other clause to fit, as indented JSON.
		{"a list asked for one", cmPath, partial, 406,
			[]string{"{\n  \"kind\": \"Status\",", `"message": "you requested PartialObjectMetadata, but the requested object is a list (*core.ConfigMapList)"`, `"reason": "NotAcceptable"`}, nil},
		{"with a plain clause, compact", cmPath, partial + ",application/json;q=0.5", 406,
			[]string{`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"you requested PartialObjectMetadata, but the requested object is a list (*core.ConfigMapList)","reason":"NotAcceptable","code":406}`}, nil},
		{"one asked for a list", "/apis/rbac.authorization.k8s.io/v1/clusterroles/admin", partialList, 406,
			[]string{`"message": "you requested PartialObjectMetadataList, but the requested object is not a list (*rbac.ClusterRole)"`}, nil},
		{"a custom resource list asked for one", "/apis/example.com/v1/namespaces/default/widgets", partial, 406,
			[]string{`(*unstructured.UnstructuredList)`}, nil},
		// kube: its unstructured object passes the list check and fails as a list.
		{"a custom resource asked for a list", "/apis/example.com/v1/namespaces/default/widgets/w", partialList, 500,
			[]string{`"message": "content is not a list",`}, []string{`"reason"`}},
		{"missing object: 404 first", cmPath + "/nope", partialList, 404, nil, nil},
		{"unknown version", cmPath + "/p1", "Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v2", 406, nil, nil},
		{"watch", cmPath + "?watch=1&labelSelector=pm&resourceVersion=0&timeoutSeconds=1", partial, 200,
			[]string{`{"type":"ADDED","object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"p1",`}, []string{`"data"`}},
		{"watch bookmark", cmPath + "?watch=1&labelSelector=pm%3Dno&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1",
			"Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1", 200,
			[]string{`{"type":"BOOKMARK","object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1beta1","metadata":{"resourceVersion":"`, `"annotations":{"k8s.io/initial-events-end":"true"}}}}`}, nil},
		// kube cannot convert an event to a list, and ends the stream without a word.
		{"watch asked for a list", cmPath + "?watch=1&labelSelector=pm&resourceVersion=0&timeoutSeconds=1", partialList, 200, nil, []string{`"type"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := a.do("GET", tt.path, "", tt.accept)
			r.expect(t, tt.code, tt.parts...)
			for _, p := range tt.absent {
				if strings.Contains(r.body, p) {
					t.Errorf("body has %s:\n%s", p, r.body)
				}
			}
		})
	}
}
