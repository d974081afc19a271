package handlers

import "testing"

// TestNegotiateOutput pins kube's choices (checked against kube-apiserver v1.37.2 where marked).
func TestNegotiateOutput(t *testing.T) {
	const table = "application/json;as=Table;g=meta.k8s.io;v=v1"
	tests := []struct {
		accept string
		allow  conversions
		want   output
		fail   bool
	}{
		{accept: "", want: output{format: formatJSON}},
		{accept: "application/json", want: output{format: formatJSON}},
		{accept: "application/yaml", want: output{format: formatYAML}},
		// kube: YAML, the clause of higher quality wins whatever the order.
		{accept: "application/json;q=0.1, application/yaml;q=0.9", want: output{format: formatYAML}},
		{accept: "application/yaml;q=0.5, application/json", want: output{format: formatJSON}},
		// kube: JSON, q=0 does not refuse an encoding.
		{accept: "application/json;q=0", want: output{format: formatJSON}},
		{accept: "*/*", want: output{format: formatJSON}},
		{accept: "application/*", want: output{format: formatJSON}},
		{accept: "text/html, */*;q=0.8", want: output{format: formatJSON}},
		{accept: table + ",application/json", allow: convTable | convPartial, want: output{format: formatTable, tableVersion: "v1"}},
		{accept: "application/json;as=Table;g=meta.k8s.io;v=v1beta1", allow: convTable | convPartial, want: output{format: formatTable, tableVersion: "v1beta1"}},
		{accept: table + ",application/json", want: output{format: formatJSON}},
		{accept: "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/yaml", want: output{format: formatYAML}},
		// What client-go's metadata client sends: protobuf is not served, so its JSON clause wins.
		{accept: "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json",
			allow: convPartial, want: output{format: formatJSON, partial: partialObjectList, partialVersion: "v1"}},
		{accept: "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", allow: convTable | convPartial,
			want: output{format: formatJSON, partial: partialObject, partialVersion: "v1"}},
		// kube: v1beta1 in YAML too.
		{accept: "application/yaml;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1", allow: convPartial,
			want: output{format: formatYAML, partial: partialObject, partialVersion: "v1beta1"}},
		// kube: 406 for a version of meta.k8s.io that has no such kind, or another group.
		{accept: "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v2", allow: convPartial, fail: true},
		{accept: "application/json;as=PartialObjectMetadata;g=example.com;v=v1", allow: convPartial, fail: true},
		{accept: "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", allow: convTable, fail: true},
		{accept: "application/json;stream=watch", want: output{format: formatJSON}},
		{accept: "application/json;sv=v1", fail: true},
		{accept: "application/vnd.kubernetes.protobuf", fail: true},
		{accept: "application/xml", fail: true},
		{accept: table, fail: true},
	}
	for _, tt := range tests {
		t.Run(tt.accept, func(t *testing.T) {
			got, err := negotiateOutput(tt.accept, tt.allow)
			if tt.fail {
				if err == nil {
					t.Fatalf("negotiateOutput = %+v, want 406", got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("negotiateOutput = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func BenchmarkNegotiateOutput(b *testing.B) {
	for _, accept := range []string{"application/json", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"} {
		b.Run(accept[:16], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := negotiateOutput(accept, convTable|convPartial); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
