package routes

import (
	"strings"
	"testing"

	"github.com/apictl/apictl/internal/golden"
	"github.com/apictl/apictl/pkg/output"
)

// TestWriteGolden prints a small table (leases, the widgets' status and the non-resource routes)
// in every format, on a terminal and in a pipe.
func TestWriteGolden(t *testing.T) {
	tb := Install(testAPI(t), InstallOptions{})
	small := Table{Routes: append(tb.Filter(Filter{Group: "coordination.k8s.io"}).Routes,
		append(tb.Filter(Filter{Resource: "widgets/status"}).Routes, tb.Filter(Filter{NonResource: true, Verb: "get", Group: "none.example"}).Routes...)...)}
	for _, tt := range []struct {
		name     string
		format   output.Format
		terminal bool
	}{
		{"table.txt", output.FormatTable, true},
		{"table-pipe.txt", output.FormatTable, false},
		{"wide.txt", output.FormatWide, true},
		{"wide-pipe.txt", output.FormatWide, false},
		{"markdown.md", output.FormatMarkdown, false},
		{"json.json", output.FormatJSON, false},
		{"yaml.yaml", output.FormatYAML, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := Write(&b, small, tt.format, tt.terminal); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "print/"+tt.name, b.String())
		})
	}
	if err := Write(&strings.Builder{}, small, FormatOpenAPIV2, true); err == nil {
		t.Error("Write accepted an OpenAPI format")
	}
}

func TestSummaries(t *testing.T) {
	tb := Install(testAPI(t), InstallOptions{Profiling: true})
	sections := tb.Sections()
	var names []string
	for _, s := range sections {
		names = append(names, s.Name)
	}
	want := "/api/v1 /apis/apiregistration.k8s.io/v1 /apis/events.k8s.io/v1 /apis/authentication.k8s.io/v1 /apis/authorization.k8s.io/v1 /apis/certificates.k8s.io/v1 /apis/networking.k8s.io/v1 /apis/rbac.authorization.k8s.io/v1 " +
		"/apis/admissionregistration.k8s.io/v1 /apis/apiextensions.k8s.io/v1 /apis/coordination.k8s.io/v1 /apis/discovery.k8s.io/v1 /apis/flowcontrol.apiserver.k8s.io/v1 " +
		"/apis/storagemigration.k8s.io/v1 /apis/example.com/v1 /apis/example.com/v1beta1 /apis/other.io/v1 non-resource"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("sections %s, want %s", got, want)
	}
	if s := sections[0].Summary; s.Routes != 107 || s.Resources != 9 {
		t.Errorf("/api/v1 summary %+v", s)
	}
	if s := tb.Summary(); s.Resources != 41 || s.Groups != 16 || s.Routes != len(tb.Routes) {
		t.Errorf("total %+v", s)
	}
	if got := (Summary{Routes: 1, Resources: 1, Groups: 1}).line(); got != "1 route, 1 resource, 1 group" {
		t.Errorf("line %q", got)
	}
}

func TestFilter(t *testing.T) {
	tb := Install(testAPI(t), InstallOptions{Profiling: true})
	count := func(f Filter) int { return len(tb.Filter(f).Routes) }
	tests := []struct {
		f    Filter
		want int
	}{
		{Filter{}, 394},
		{Filter{Group: "core"}, 107},
		{Filter{Group: "core", Resource: "namespaces"}, 12},
		{Filter{Resource: "namespaces/status"}, 3},
		{Filter{Group: "example.com", Version: "v1beta1"}, 9},
		{Filter{Verb: "deletecollection"}, 34},
		{Filter{Verb: "watch", Group: "rbac.authorization.k8s.io"}, 10},
		{Filter{NonResource: true, Group: "none"}, 51},
	}
	for _, tt := range tests {
		if got := count(tt.f); got != tt.want {
			t.Errorf("%+v selects %d routes, want %d", tt.f, got, tt.want)
		}
	}
}

func TestFilterCheck(t *testing.T) {
	api := testAPI(t)
	for _, tt := range []struct {
		f    Filter
		want string
	}{
		{Filter{Group: "core", Version: "v1", Resource: "namespaces/finalize", Verb: "update"}, ""},
		{Filter{Group: "example.com", Version: "v1beta1"}, ""},
		{Filter{Group: "apps"}, `group "apps" is not served: use one of core, apiregistration.k8s.io, events.k8s.io, authentication.k8s.io, authorization.k8s.io, certificates.k8s.io, networking.k8s.io, rbac.authorization.k8s.io, admissionregistration.k8s.io`},
		{Filter{Group: "core", Version: "v2"}, `version "v2" is not served in group core`},
		{Filter{Resource: "pods"}, `resource "pods" is not served`},
		{Filter{Resource: "namespaces/scale"}, `resource "namespaces/scale" is not served`},
		{Filter{Verb: "bind"}, `verb "bind" is not a discovery verb`},
		// Issue 36: kubectl's other names for a resource, and typos, get a "did you mean".
		{Filter{Resource: "configmap"}, `resource "configmap" is not served: did you mean "configmaps"?`},
		{Filter{Resource: "ConfigMap"}, `resource "ConfigMap" is not served: did you mean "configmaps"?`},
		{Filter{Resource: "cm"}, `resource "cm" is not served: did you mean "configmaps"?`},
		{Filter{Resource: "ConfigMaps"}, `resource "ConfigMaps" is not served: did you mean "configmaps"?`},
		{Filter{Resource: "confgimaps"}, `resource "confgimaps" is not served: did you mean "configmaps"?`},
		{Filter{Resource: "ns/status"}, `resource "ns/status" is not served: did you mean "namespaces/status"?`},
		{Filter{Resource: "namespace/scale"}, `resource "namespace/scale" is not served: did you mean "namespaces"?`},
		{Filter{Resource: "namespaces/stauts"}, `resource "namespaces/stauts" is not served: did you mean "namespaces/status"?`},
		{Filter{Group: "core", Resource: "ClusterRole"}, `resource "ClusterRole" is not served in group core: apictl routes lists the resources`},
		{Filter{Group: "rbac.authorization.k8s.io", Resource: "ClusterRole"}, `resource "ClusterRole" is not served in group rbac.authorization.k8s.io: did you mean "clusterroles"?`},
	} {
		err := tt.f.Check(api)
		if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%+v: %v, want %q", tt.f, err, tt.want)
		}
	}
}
