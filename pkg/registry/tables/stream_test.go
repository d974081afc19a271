package tables

import (
	"encoding/json"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestListFrameMatchesFinish checks that a table written a row at a time (ListFrame, AppendRow: a
// streamed LIST) is the JSON of the table Add and Finish make, with and without rows, headers and
// objects, for a built-in kind and a custom resource.
func TestListFrameMatchesFinish(t *testing.T) {
	api := testAPI(t)
	cmConv, _ := testConverter(t, api, configMaps)
	wConv, wRes := testConverter(t, api, widgets)
	cms := []runtime.Object{}
	for i := range 3 {
		cms = append(cms, &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{Name: "cm" + strconv.Itoa(i), CreationTimestamp: metav1.NewTime(testNow)},
			Data:       map[string]string{"a": "<b>&"}})
	}
	w := decodeObject(t, wRes, []byte(`{apiVersion: example.com/v1, kind: Widget, metadata: {name: w, creationTimestamp: "2024-05-01T11:00:00Z"},
		spec: {replicas: 2, ratio: 0.5, selector: {a: b}}, status: {ready: true, phase: Up, startedAt: "2024-05-01T11:30:00Z"}}`))
	list := metav1.ListMeta{ResourceVersion: "42", Continue: "next"}
	for _, tt := range []struct {
		name string
		c    *Converter
		objs []runtime.Object
		opts Options
	}{
		{name: "configmaps", c: cmConv, objs: cms},
		{name: "no configmaps", c: cmConv},
		{name: "configmaps without headers, with objects", c: cmConv, objs: cms, opts: Options{NoHeaders: true, IncludeObject: metav1.IncludeObject}},
		{name: "widgets", c: wConv, objs: []runtime.Object{w}},
		{name: "no widgets", c: wConv},
	} {
		t.Run(tt.name, func(t *testing.T) {
			whole, err := tt.c.NewBuilder(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := tt.c.NewBuilder(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			head, tail, empty, err := rows.ListFrame(list)
			if err != nil {
				t.Fatal(err)
			}
			got := append([]byte(nil), head...)
			for i, obj := range tt.objs {
				if err := whole.Add(obj); err != nil {
					t.Fatal(err)
				}
				if i == 0 {
					got = append(got, '[')
				} else {
					got = append(got, ',')
				}
				if got, err = rows.AppendRow(got, obj); err != nil {
					t.Fatal(err)
				}
			}
			if len(tt.objs) == 0 {
				got = append(got, empty...)
			} else {
				got = append(got, ']')
			}
			got = append(got, tail...)
			want, err := json.Marshal(whole.Finish(list))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("row by row:\n%s\nwhole:\n%s", got, want)
			}
		})
	}
}
