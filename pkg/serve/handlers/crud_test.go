package handlers_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

func TestCRUD(t *testing.T) {
	a := start(t)
	created := a.do("POST", cmPath, configMap("app", `{"a":"1"}`))
	created.expect(t, 201, `"kind":"ConfigMap"`, `"apiVersion":"v1"`, `"uid":"`, `"creationTimestamp":"`, `"data":{"a":"1"}`)
	var cm struct {
		Metadata struct{ ResourceVersion, UID string } `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(created.body), &cm); err != nil || cm.Metadata.ResourceVersion == "" {
		t.Fatalf("create response: %v %s", err, created.body)
	}
	a.do("GET", cmPath+"/app", "").expect(t, 200, `"resourceVersion":"`+cm.Metadata.ResourceVersion+`"`)
	a.do("GET", cmPath, "").expect(t, 200, `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"`, `"name":"app"`)
	a.do("POST", cmPath, configMap("app", `{}`)).expect(t, 409, `"reason":"AlreadyExists"`, `"message":"configmaps \"app\" already exists"`)

	stale := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"app","resourceVersion":"1"},"data":{"a":"2"}}`
	a.do("PUT", cmPath+"/app", stale).expect(t, 409, `"reason":"Conflict"`,
		`"message":"Operation cannot be fulfilled on configmaps \"app\": the object has been modified; please apply your changes to the latest version and try again"`)
	current := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"app","resourceVersion":"` + cm.Metadata.ResourceVersion + `"},"data":{"a":"2"}}`
	updated := a.do("PUT", cmPath+"/app", current)
	updated.expect(t, 200, `"data":{"a":"2"}`, `"uid":"`+cm.Metadata.UID+`"`)
	if strings.Contains(updated.body, `"resourceVersion":"`+cm.Metadata.ResourceVersion+`"`) {
		t.Errorf("update kept the old resourceVersion: %s", updated.body)
	}
	a.do("PUT", cmPath+"/app", configMap("other", `{}`)).expect(t, 400, `the name of the object (other) does not match the name on the URL (app)`)

	a.do("DELETE", cmPath+"/app", "").expect(t, 200,
		`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"app","kind":"configmaps","uid":"`+cm.Metadata.UID+`"}}`)
	a.do("GET", cmPath+"/app", "").expect(t, 404, `"message":"configmaps \"app\" not found"`, `"details":{"name":"app","kind":"configmaps"}`)
	a.do("DELETE", cmPath+"/app", "").expect(t, 404, `"reason":"NotFound"`)
}

func TestBadRequests(t *testing.T) {
	a := start(t, "--max-request-body-bytes", "4096")
	tests := []struct {
		name, method, path, body string
		headers                  []string
		code                     int
		parts                    []string
	}{
		{"malformed JSON", "POST", cmPath, `{"apiVersion":`, nil, 400, []string{`"reason":"BadRequest"`,
			`the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: unexpected end of JSON input ({\"apiVersion\":)`}},
		{"malformed YAML", "POST", cmPath, "a: [\n", []string{"Content-Type: application/yaml"}, 400, []string{`error converting YAML to JSON`}},
		{"wrong apiVersion", "POST", cmPath, `{"apiVersion":"apps/v1","kind":"ConfigMap","metadata":{"name":"x"}}`, nil, 400,
			[]string{`ConfigMap in version \"v1\" cannot be handled as a ConfigMap: no kind \"ConfigMap\" is registered for version \"apps/v1\" in scheme \"pkg/runtime/scheme.go:111\"`}},
		{"wrong kind", "POST", cmPath, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"x"}}`, nil, 400,
			[]string{`Secret in version \"v1\" cannot be handled as a ConfigMap: converting (v1.Secret) to (core.ConfigMap): unknown conversion`}},
		{"type mismatch", "POST", cmPath, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":1}}`, nil, 400,
			[]string{`ConfigMap in version \"v1\" cannot be handled as a ConfigMap`}},
		{"invalid name", "POST", cmPath, configMap("Not_A_Name", `{}`), nil, 422,
			[]string{`"reason":"Invalid"`, `ConfigMap \"Not_A_Name\" is invalid: metadata.name: Invalid value: \"Not_A_Name\"`, `"field":"metadata.name"`}},
		{"no name", "POST", cmPath, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}`, nil, 422,
			[]string{`ConfigMap \"\" is invalid: metadata.name: Required value: name or generateName is required`}},
		{"namespace mismatch", "POST", cmPath, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"other"}}`, nil, 400,
			[]string{`the namespace of the provided object does not match the namespace sent on the request`}},
		{"missing namespace", "POST", "/api/v1/namespaces/nope/configmaps", configMap("x", `{}`), nil, 404,
			[]string{`"message":"namespaces \"nope\" not found"`}},
		{"dryRun=Some", "POST", cmPath + "?dryRun=Some", configMap("x", `{}`), nil, 422,
			[]string{`CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: [\"Some\"]: supported values: \"All\"`}},
		{"body too large", "POST", cmPath, configMap("x", `{"a":"`+strings.Repeat("x", 5000)+`"}`), nil, 413,
			[]string{`"reason":"RequestEntityTooLarge"`, `Request entity too large: limit is 4096`}},
		{"unsupported media type", "POST", cmPath, configMap("x", `{}`), []string{"Content-Type: text/plain"}, 415,
			[]string{`"reason":"UnsupportedMediaType"`}},
		// kube writes a Status it cannot negotiate as indented JSON.
		{"not acceptable", "GET", cmPath, "", []string{"Accept: application/xml"}, 406, []string{"{\n  \"kind\": \"Status\",", `"reason": "NotAcceptable"`}},
		{"unknown field selector", "GET", cmPath + "?fieldSelector=spec.x%3Dy", "", nil, 400,
			[]string{`\"spec.x\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"`}},
		{"resourceVersionMatch without resourceVersion", "GET", cmPath + "?resourceVersionMatch=NotOlderThan", "", nil, 422,
			[]string{`ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided`}},
		{"sendInitialEvents on a list", "GET", cmPath + "?sendInitialEvents=true", "", nil, 422, []string{`sendInitialEvents is forbidden for list`}},
		{"too large resourceVersion", "GET", cmPath + "/x?resourceVersion=999999", "", nil, 504,
			[]string{`"reason":"Timeout"`, `Too large resource version: 999999, current: `, `"reason":"ResourceVersionTooLarge"`}},
		// The answers below are kube-apiserver v1.37.2's, byte for byte where whole.
		{"fieldValidation=Loud", "POST", cmPath + "?fieldValidation=Loud", configMap("x", `{}`), nil, 422,
			[]string{`fieldValidation: Unsupported value: \"Loud\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"`}},
		{"bad label selector", "GET", cmPath + "?labelSelector=a%3D%3D%3Db", "", nil, 400,
			[]string{`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"unable to parse requirement: found '=', expected: identifier","reason":"BadRequest","code":400}`}},
		{"bad label selector of a watch", "GET", cmPath + "?watch=true&labelSelector=%3D%3D%3D", "", nil, 400,
			[]string{`"message":"found '==', expected: !, identifier, or 'end of string'","reason":"BadRequest"`}},
		{"bad label selector of a deletecollection", "DELETE", cmPath + "?labelSelector=a%3D%3D%3Db", "", nil, 400,
			[]string{`"message":"unable to parse requirement: found '=', expected: identifier","reason":"BadRequest"`}},
		{"bad field selector", "GET", cmPath + "?fieldSelector=a%3D%3D%3Db", "", nil, 400,
			[]string{`"message":"invalid field selector: unescaped character in value: 61","reason":"BadRequest"`}},
		{"limit not a number", "GET", cmPath + "?limit=abc&resourceVersionMatch=Bogus", "", nil, 400,
			[]string{`"message":"strconv.ParseInt: parsing \"abc\": invalid syntax","reason":"BadRequest"`}},
		{"list resourceVersion not a number", "GET", cmPath + "?resourceVersion=abc&resourceVersionMatch=Exact", "", nil, 400,
			[]string{`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"invalid resource version: resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax","reason":"BadRequest","code":400}`}},
		{"deletecollection resourceVersion not a number", "DELETE", cmPath + "?resourceVersion=-1", "", nil, 400,
			[]string{`"message":"invalid resource version: resourceVersion: Invalid value: \"-1\": strconv.ParseUint: parsing \"-1\": invalid syntax","reason":"BadRequest"`}},
		// kube's storage error is not a Status: a 500 without a reason.
		{"get resourceVersion not a number", "GET", cmPath + "/x?resourceVersion=abc", "", nil, 500,
			[]string{`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax","code":500}`}},
		{"watch resourceVersion not a number", "GET", cmPath + "?watch=true&resourceVersion=abc&timeoutSeconds=1", "", nil, 500,
			[]string{`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax","code":500}`}},
		{"bad continue token", "GET", cmPath + "?limit=2&continue=not-a-token", "", nil, 400,
			[]string{`"message":"invalid continue token: continue key is not valid: invalid character '\\u009e' looking for beginning of value","reason":"BadRequest"`}},
		{"bad continue token beside a resourceVersion", "GET", cmPath + "?continue=x&resourceVersion=5", "", nil, 400,
			[]string{`"message":"invalid continue token: continue key is not valid: illegal base64 data at input byte 0"`}},
		{"sendInitialEvents without resourceVersionMatch", "GET", cmPath + "?watch=true&sendInitialEvents=true&timeoutSeconds=1", "", nil, 422,
			[]string{`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan","reason":"Invalid","details":{"group":"meta.k8s.io","kind":"ListOptions","causes":[{"reason":"FieldValueForbidden","message":"Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan","field":"resourceVersionMatch"}]},"code":422}`}},
		// go-restful's answers, before any handler: the route's media types decide.
		{"not acceptable to a list", "GET", cmPath, "", []string{"Accept: application/*"}, 406,
			// application/* is no type go-restful matches, but the Status negotiates as JSON: compact.
			[]string{`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/json;stream=watch","reason":"NotAcceptable","details":{},"code":406}`}},
		{"not acceptable to a delete", "DELETE", cmPath + "/x", "", []string{"Accept: text/html"}, 406,
			[]string{`"message": "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml",`}},
		{"a patch of no patch type", "PATCH", cmPath + "/x", `{}`, []string{"Content-Type: application/json", "Accept: text/html"}, 415,
			[]string{`"message": "415: Unsupported Media Type",`, `"reason": "UnsupportedMediaType",`, `"details": {},`}},
		{"a patch type in the wrong case", "PATCH", cmPath + "/x", `{}`, []string{"Content-Type: Application/Merge-Patch+json"}, 415,
			[]string{`"message":"415: Unsupported Media Type","reason":"UnsupportedMediaType","details":{}`}},
		// Past go-restful, kube's patch handler reads the type its own way, and lists what it takes.
		{"a patch type among others", "PATCH", cmPath + "/x", `{}`, []string{"Content-Type: application/merge-patch+json, foo/bar"}, 415,
			[]string{`"message":"the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml","reason":"UnsupportedMediaType","code":415}`}},
		{"bad propagation policy", "DELETE", cmPath + "/x?propagationPolicy=Sometimes", "", nil, 422,
			[]string{`DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Unsupported value: \"Sometimes\"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a.do(tt.method, tt.path, tt.body, tt.headers...).expect(t, tt.code, tt.parts...)
		})
	}
}

func TestFieldValidation(t *testing.T) {
	a := start(t)
	body := func(name string) string {
		return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `"},"data":{"a":"1"},"bogus":true}`
	}
	a.do("POST", cmPath+"?fieldValidation=Strict", body("strict")).expect(t, 400,
		`ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: unknown field \"bogus\"`)
	warned := a.do("POST", cmPath+"?fieldValidation=Warn", body("warn"))
	warned.expect(t, 201)
	if got := warned.header.Get("Warning"); got != `299 - "unknown field \"bogus\""` {
		t.Errorf("Warning header = %q", got)
	}
	ignored := a.do("POST", cmPath+"?fieldValidation=Ignore", body("ignore"))
	ignored.expect(t, 201)
	if got := ignored.header.Get("Warning"); got != "" || strings.Contains(ignored.body, "bogus") {
		t.Errorf("ignored field leaked: %q %s", got, ignored.body)
	}
	a.do("POST", cmPath+"?fieldValidation=Maybe", body("x")).expect(t, 422, `fieldValidation: Unsupported value: \"Maybe\"`)
}

func TestGenerateNameYAMLAndPretty(t *testing.T) {
	a := start(t)
	r := a.do("POST", cmPath, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  generateName: app-\ndata:\n  k: v\n",
		"Content-Type: application/yaml", "Accept: application/yaml")
	r.expect(t, 201, "kind: ConfigMap", "k: v")
	name := regexp.MustCompile(`(?m)^  name: (app-[bcdfghjklmnpqrstvwxz2456789]{5})$`).FindStringSubmatch(r.body)
	if name == nil || r.header.Get("Content-Type") != "application/yaml" {
		t.Fatalf("generated name or YAML response missing:\n%s", r.body)
	}
	pretty := a.do("GET", cmPath+"/"+name[1]+"?pretty=true", "")
	pretty.expect(t, 200, "{\n  \"kind\": \"ConfigMap\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {")
	a.do("POST", cmPath+"?dryRun=All", configMap("dry", `{}`)).expect(t, 201, `"name":"dry"`)
	a.do("GET", cmPath+"/dry", "").expect(t, 404)
}

func TestKindRules(t *testing.T) {
	a := start(t)
	secrets := "/api/v1/namespaces/default/secrets"
	a.do("POST", secrets, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"stringData":{"password":"hunter2"}}`).
		expect(t, 201, `"type":"Opaque"`, `"data":{"password":"aHVudGVyMg=="}`)
	a.do("POST", cmPath, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"frozen"},"immutable":true,"data":{"a":"1"}}`).expect(t, 201)
	a.do("PUT", cmPath+"/frozen", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"frozen"},"immutable":true,"data":{"a":"2"}}`).
		expect(t, 422, "data: Forbidden: field is immutable when `immutable` is set")
	a.do("POST", cmPath, configMap("badkey", `{"a b":"1"}`)).expect(t, 422, `data[a b]: Invalid value: \"a b\"`)
	leases := "/apis/coordination.k8s.io/v1/namespaces/default/leases"
	lease := `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"l"},"spec":{"holderIdentity":"me"}}`
	a.do("PUT", leases+"/l", lease).expect(t, 201, `"holderIdentity":"me"`) // leases allow create on update
	a.do("PUT", leases+"/l", lease).expect(t, 422,
		`"message":"leases.coordination.k8s.io \"l\" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update"`)
	roles := "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles"
	a.do("POST", roles, `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"r"},"rules":[{"apiGroups":[""]}]}`).
		expect(t, 422, `rules[0].verbs: Required value`)
}

// TestDryRunWrites checks that dry-run updates, patches and scales answer as the real write would,
// stale resourceVersions and missing objects included, and store nothing.
func TestDryRunWrites(t *testing.T) {
	a := start(t)
	created := a.do("POST", cmPath, configMap("d", `{"k":"v"}`))
	created.expect(t, 201)
	rv := field(t, created.body, "metadata", "resourceVersion")
	put := func(rv, v string) string {
		return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"d","resourceVersion":"` + rv + `"},"data":{"k":"` + v + `"}}`
	}
	a.do("PUT", cmPath+"/d?dryRun=All", put(rv, "put")).expect(t, 200, `"k":"put"`, `"resourceVersion":"`+rv+`"`)
	a.do("PUT", cmPath+"/d?dryRun=All", put("1", "put")).expect(t, 409, `the object has been modified`)
	a.do("PUT", cmPath+"/missing?dryRun=All", strings.Replace(put("", "put"), `"d"`, `"missing"`, 1)).expect(t, 404)
	a.do("PATCH", cmPath+"/d?dryRun=All", `{"data":{"k":"patched"}}`, "Content-Type: application/merge-patch+json").
		expect(t, 200, `"k":"patched"`)
	a.do("PATCH", cmPath+"/missing?dryRun=All", `{"data":{"k":"patched"}}`, "Content-Type: application/merge-patch+json").expect(t, 404)
	a.do("GET", cmPath+"/d", "").expect(t, 200, `"k":"v"`, `"resourceVersion":"`+rv+`"`)

	a.do("POST", widgets, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"replicas":2}}`).expect(t, 201)
	a.do("PUT", widgets+"/w/scale?dryRun=All", `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"w","namespace":"default"},"spec":{"replicas":5}}`).
		expect(t, 200, `"spec":{"replicas":5}`)
	a.do("GET", widgets+"/w", "").expect(t, 200, `"replicas":2`)
}

// TestTypeMetaFromTheRoute pins kube's decoding of bodies that leave out apiVersion or kind, as the
// Python and JavaScript clients' tutorials do: a built-in kind takes both from the route; a custom
// resource must name its kind, with the message of kube's unstructured decoder.
func TestTypeMetaFromTheRoute(t *testing.T) {
	a := start(t)
	const leases = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
	tests := []struct {
		name, method, path, body string
		code                     int
		parts                    []string
	}{
		{"namespace without both", "POST", "/api/v1/namespaces", `{"metadata":{"name":"py"}}`, 201,
			[]string{`{"kind":"Namespace","apiVersion":"v1","metadata":{`, `"name":"py"`}},
		{"configmap without apiVersion", "POST", cmPath, `{"kind":"ConfigMap","metadata":{"name":"nover"}}`, 201,
			[]string{`{"kind":"ConfigMap","apiVersion":"v1"`}},
		{"configmap without kind", "POST", cmPath, `{"apiVersion":"v1","metadata":{"name":"nokind"}}`, 201,
			[]string{`{"kind":"ConfigMap","apiVersion":"v1"`}},
		{"lease in a group", "POST", leases, `{"metadata":{"name":"l"},"spec":{"holderIdentity":"me"}}`, 201,
			[]string{`{"kind":"Lease","apiVersion":"coordination.k8s.io/v1"`}},
		{"update without both", "PUT", cmPath + "/nokind", `{"metadata":{"name":"nokind"},"data":{"a":"1"}}`, 200,
			[]string{`{"kind":"ConfigMap","apiVersion":"v1"`, `"data":{"a":"1"}`}},
		{"status without both", "PUT", "/api/v1/namespaces/py/status", `{"metadata":{"name":"py"}}`, 200,
			[]string{`{"kind":"Namespace","apiVersion":"v1"`}},
		{"scale without both", "PUT", widgets + "/w/scale", `{"metadata":{"name":"w"},"spec":{"replicas":3}}`, 200,
			[]string{`{"kind":"Scale","apiVersion":"autoscaling/v1"`, `"replicas":3`}},
		{"stored with both", "GET", cmPath + "/nover", "", 200, []string{`{"kind":"ConfigMap","apiVersion":"v1"`}},
		{"a group's version alone", "POST", leases, `{"apiVersion":"v1","metadata":{"name":"l2"}}`, 400,
			[]string{`Lease in version \"v1\" cannot be handled as a Lease: no kind \"Lease\" is registered for version \"v1\" in scheme \"pkg/runtime/scheme.go:111\"`}},
		{"kind contradicts the route", "POST", cmPath, `{"kind":"Secret","metadata":{"name":"x"}}`, 400,
			[]string{`Secret in version \"v1\" cannot be handled as a ConfigMap: converting (v1.Secret) to (core.ConfigMap): unknown conversion`}},
		{"custom resource without kind", "POST", widgets, `{"metadata":{"name":"nokind"},"spec":{"size":1}}`, 400,
			[]string{`the object provided is unrecognized (must be of type Widget): Object 'Kind' is missing in '{\"metadata\":{\"name\":\"nokind\"},\"spec\":{\"size\":1}}' ({\"metadata\":{\"name\":\"nokind\"}, ...)`}},
	}
	a.do("POST", widgets, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"replicas":1}}`).expect(t, 201)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a.do(tt.method, tt.path, tt.body).expect(t, tt.code, tt.parts...)
		})
	}
}

// TestNamespaceNameLabel pins kube's kubernetes.io/metadata.name label: set from the name (a generated
// one too), owned by the writer in managedFields, and restored when an update drops or changes it.
func TestNamespaceNameLabel(t *testing.T) {
	a := start(t)
	const label = `"labels":{"kubernetes.io/metadata.name":`
	a.do("POST", "/api/v1/namespaces", `{"metadata":{"name":"named","labels":{"team":"a"}}}`).expect(t, 201,
		`"labels":{"kubernetes.io/metadata.name":"named","team":"a"}`, `"f:labels":{".":{},"f:kubernetes.io/metadata.name":{},"f:team":{}}`)
	generated := a.do("POST", "/api/v1/namespaces", `{"metadata":{"generateName":"gen-"}}`)
	generated.expect(t, 201, label+`"gen-`)
	a.do("PUT", "/api/v1/namespaces/named", `{"metadata":{"name":"named","labels":{"kubernetes.io/metadata.name":"other"}}}`).expect(t, 200,
		`"labels":{"kubernetes.io/metadata.name":"named"}`)
	a.do("PATCH", "/api/v1/namespaces/named", `{"metadata":{"labels":null}}`, "Content-Type: application/merge-patch+json").expect(t, 200,
		`"labels":{"kubernetes.io/metadata.name":"named"}`)
}
