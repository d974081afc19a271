package crschema_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apictl/apictl/internal/servertest"
)

// A whole server enforces the rules of a CRD from --api-config; the 422 bodies are kube-apiserver
// v1.37.2's, byte for byte, for the same CRD and requests.
func TestCELServer(t *testing.T) {
	s := servertest.Start(t, "--api-config", filepath.Join("testdata", "cel.yaml"))
	c, err := s.HTTPClient()
	if err != nil {
		t.Fatal(err)
	}
	const things = "/apis/cel.example.com/v1/namespaces/default/things"
	thing := func(name, rv, rest string) string {
		return `{"apiVersion":"cel.example.com/v1","kind":"Thing","metadata":{"name":"` + name + `","namespace":"default","resourceVersion":"` + rv + `"},` + rest + `}`
	}
	steps := []struct {
		name, method, path, contentType, body string
		code                                  int
		want                                  string // the response body, for errors
	}{
		{name: "create with failed rules", method: http.MethodPost, path: things,
			body: `{"apiVersion":"cel.example.com/v1","kind":"Thing","metadata":{"name":"x12","namespace":"default"},"spec":{"min":3,"max":2,"replicas":2,"mode":"off","level":1,"color":"A"}}`,
			code: 422,
			want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Thing.cel.example.com \"x12\" is invalid: [\u003cnil\u003e: Invalid value: the name must start with t, spec: Invalid value: min must not exceed max, spec: Invalid value: replicas must be odd, not 2, spec.level: Forbidden: level is forbidden when mode is off, spec.color: Invalid value: \"A\": must be lower case]","reason":"Invalid","details":{"name":"x12","group":"cel.example.com","kind":"Thing","causes":[{"reason":"FieldValueInvalid","message":"Invalid value: the name must start with t","field":"\u003cnil\u003e"},{"reason":"FieldValueInvalid","message":"Invalid value: min must not exceed max","field":"spec"},{"reason":"FieldValueInvalid","message":"Invalid value: replicas must be odd, not 2","field":"spec"},{"reason":"FieldValueForbidden","message":"Forbidden: level is forbidden when mode is off","field":"spec.level"},{"reason":"FieldValueInvalid","message":"Invalid value: \"A\": must be lower case","field":"spec.color"}]},"code":422}`},
		{name: "create", method: http.MethodPost, path: things, code: 201,
			body: `{"apiVersion":"cel.example.com/v1","kind":"Thing","metadata":{"name":"tg","namespace":"default"},"spec":{"id":"a","ports":[{"name":"a","port":80}]}}`},
		{name: "update breaking a transition rule", method: http.MethodPut, path: things + "/tg", code: 422,
			body: thing("tg", "", `"spec":{"id":"b"}`),
			want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Thing.cel.example.com \"tg\" is invalid: spec.id: Invalid value: \"b\": id is immutable","reason":"Invalid","details":{"name":"tg","group":"cel.example.com","kind":"Thing","causes":[{"reason":"FieldValueInvalid","message":"Invalid value: \"b\": id is immutable","field":"spec.id"}]},"code":422}`},
		{name: "status update breaking a rule", method: http.MethodPut, path: things + "/tg/status", code: 422,
			body: thing("tg", "", `"spec":{"id":"a"},"status":{"phase":"Broken"}`),
			want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Thing.cel.example.com \"tg\" is invalid: status.phase: Invalid value: \"Broken\": phase must not be Broken","reason":"Invalid","details":{"name":"tg","group":"cel.example.com","kind":"Thing","causes":[{"reason":"FieldValueInvalid","message":"Invalid value: \"Broken\": phase must not be Broken","field":"status.phase"}]},"code":422}`},
		{name: "merge patch breaking a rule and a transition rule of a map list item", method: http.MethodPatch, path: things + "/tg",
			contentType: "application/merge-patch+json", body: `{"spec":{"ports":[{"name":"a","port":0}]}}`, code: 422,
			want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Thing.cel.example.com \"tg\" is invalid: [spec.ports[0]: Invalid value: port of a is out of range, spec.ports[0]: Invalid value: a port may only grow]","reason":"Invalid","details":{"name":"tg","group":"cel.example.com","kind":"Thing","causes":[{"reason":"FieldValueInvalid","message":"Invalid value: port of a is out of range","field":"spec.ports[0]"},{"reason":"FieldValueInvalid","message":"Invalid value: a port may only grow","field":"spec.ports[0]"}]},"code":422}`},
		{name: "valid merge patch", method: http.MethodPatch, path: things + "/tg",
			contentType: "application/merge-patch+json", body: `{"spec":{"ports":[{"name":"a","port":90}]}}`, code: 200},
	}
	ctx := context.Background()
	do := func(method, path, contentType, body string) (int, []byte) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, s.SecureURL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", contentType)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		return resp.StatusCode, out
	}
	for _, st := range steps {
		body := st.body
		if st.method == http.MethodPut {
			// Custom resources take no unconditional updates: send the stored resourceVersion.
			_, stored := do(http.MethodGet, strings.TrimSuffix(st.path, "/status"), "", "")
			var meta struct {
				Metadata struct{ ResourceVersion string } `json:"metadata"`
			}
			if err := json.Unmarshal(stored, &meta); err != nil || meta.Metadata.ResourceVersion == "" {
				t.Fatalf("%s: reading the stored object: %v: %s", st.name, err, stored)
			}
			body = strings.Replace(body, `"resourceVersion":""`, `"resourceVersion":"`+meta.Metadata.ResourceVersion+`"`, 1)
		}
		ct := st.contentType
		if ct == "" {
			ct = "application/json"
		}
		code, out := do(st.method, st.path, ct, body)
		if code != st.code {
			t.Errorf("%s: code %d, want %d: %s", st.name, code, st.code, out)
			continue
		}
		if st.want != "" && string(bytes.TrimSpace(out)) != st.want {
			t.Errorf("%s:\ngot  %s\nwant %s", st.name, out, st.want)
		}
	}
}

// A server given a CRD whose rule does not compile does not start, and says why in kube's words.
func TestCELServerRefusesBadRules(t *testing.T) {
	_, err := servertest.StartE(context.Background(), t.TempDir(), "--api-config", filepath.Join("testdata", "cel-invalid.yaml"))
	if err == nil {
		t.Fatal("the server started")
	}
	for _, want := range []string{
		`testdata/cel-invalid.yaml: document 1 (line 3): spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: {"Rule":"self.min \u003c",`,
		`testdata/cel-invalid.yaml: document 2 (line 31): spec.validation.openAPIV3Schema.properties[spec].properties[names].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x`,
		`testdata/cel-invalid.yaml: document 3 (line 63): spec.versions[1].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: {"Rule":"self.a + 1",`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %s\nerror: %v", want, err)
		}
	}
}
