package crconvert_test

import (
	"fmt"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// BenchmarkDecodeNone is the converter's share of a converted LIST of 1,000 objects with strategy None:
// decode, coerce at v1, convert, prune at v2.
func BenchmarkDecodeNone(b *testing.B) {
	crd := gizmos(&apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter})
	crd.Name = "gizmos.example.com"
	c := newConverter(b, crd)
	values := make([][]byte, 1000)
	for i := range values {
		values[i] = fmt.Appendf(nil, `{"apiVersion":"example.com/v1","kind":"Gizmo","metadata":{"creationTimestamp":"2026-11-26T03:35:31Z","generation":1,`+
			`"managedFields":[{"apiVersion":"example.com/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{".":{},"f:size":{}}},"manager":"kubectl","operation":"Update","time":"2026-11-26T03:35:31Z"}],`+
			`"name":"g%04d","namespace":"default","uid":"a450bd62-7b80-4956-827b-16bedda6%04d"},"spec":{"color":"blue","size":%d}}`, i, i, i)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Decode(values, "v2"); err != nil {
			b.Fatal(err)
		}
	}
}
