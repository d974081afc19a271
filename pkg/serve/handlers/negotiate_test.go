package handlers

import "testing"

// TestNegotiateOutput pins kube's choices (checked against kube-apiserver v1.37.2 where marked).
func TestNegotiateOutput(t *testing.T) {
	const table = "application/json;as=Table;g=meta.k8s.io;v=v1"
	tests := []struct {
		accept string
		tables bool
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
		{accept: table + ",application/json", tables: true, want: output{format: formatTable, tableVersion: "v1"}},
		{accept: "application/json;as=Table;g=meta.k8s.io;v=v1beta1", tables: true, want: output{format: formatTable, tableVersion: "v1beta1"}},
		{accept: table + ",application/json", tables: false, want: output{format: formatJSON}},
		{accept: "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/yaml", want: output{format: formatYAML}},
		{accept: "application/json;stream=watch", want: output{format: formatJSON}},
		{accept: "application/json;sv=v1", fail: true},
		{accept: "application/vnd.kubernetes.protobuf", fail: true},
		{accept: "application/xml", fail: true},
		{accept: table, tables: false, fail: true},
	}
	for _, tt := range tests {
		t.Run(tt.accept, func(t *testing.T) {
			got, err := negotiateOutput(tt.accept, tt.tables)
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
				if _, err := negotiateOutput(accept, true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
