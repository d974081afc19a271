package handlers

import "testing"

// The errors name kube's type (checked against kube-apiserver v1.37.2: "error decoding patch: json:
// cannot unmarshal object into Go value of type []handlers.jsonPatchOp").
func TestUnmarshalJSONPatchStrict(t *testing.T) {
	for _, tc := range []struct {
		name, patch, err string
		strict           int
	}{
		{name: "operations", patch: `[{"op":"add","path":"/a","value":1}]`},
		{name: "not an array", patch: `{"op":"add"}`, err: "json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp"},
		{name: "op not a string", patch: `[{"op":1}]`, err: "json: cannot unmarshal number into Go struct field jsonPatchOp.op of type string"},
		{name: "unknown and duplicate fields", patch: `[{"op":"add","op":"remove","path":"/a","bogus":1}]`, strict: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			found, err := UnmarshalJSONPatchStrict([]byte(tc.patch))
			switch {
			case tc.err != "" && (err == nil || err.Error() != tc.err):
				t.Errorf("error %v, want %s", err, tc.err)
			case tc.err == "" && err != nil:
				t.Errorf("error %v", err)
			case len(found) != tc.strict:
				t.Errorf("strict errors %v, want %d", found, tc.strict)
			}
		})
	}
}
