package crschema

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apictl/apictl/pkg/routes"
)

// The messages below are kube-apiserver v1.37.2's, recorded by creating testdata/cel.yaml on it and
// sending it the same objects (the statuses' message fields).

// things is the validator of testdata/cel.yaml's Thing.
func things(t testing.TB) *Validator {
	t.Helper()
	crds, err := routes.ReadCRDFiles([]string{filepath.Join("testdata", "cel.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	set, err := NewSet(crds)
	if err != nil {
		t.Fatal(err)
	}
	v, ok := set.Validator(schema.GroupVersionResource{Group: "cel.example.com", Version: "v1", Resource: "things"})
	if !ok {
		t.Fatal("no validator for things.cel.example.com/v1")
	}
	return v
}

// thing is Thing name in namespace default with the given spec and, unless "", status.
func thing(t testing.TB, name, spec, status string) *unstructured.Unstructured {
	t.Helper()
	js := `{"apiVersion":"cel.example.com/v1","kind":"Thing","metadata":{"name":"` + name + `","namespace":"default","resourceVersion":"1"},"spec":` + spec
	if status != "" {
		js += `,"status":` + status
	}
	return object(t, js+`}`)
}

const validThing = `{"min":1,"max":2,"replicas":3,"mode":"on","level":1,"color":"red","id":"a","ports":[{"name":"a","port":80},{"name":"b","port":81}]}`

func TestCELValidate(t *testing.T) {
	tests := []struct {
		name, obj, spec, status string
		kind                    string // default Thing
		want                    string
	}{
		{name: "valid", obj: "t1", spec: validThing},
		{name: "root rule on metadata.name", obj: "x1", spec: `{"min":1}`,
			want: `<nil>: Invalid value: the name must start with t`},
		{name: "rule on self", obj: "t2", spec: `{"min":3,"max":2}`,
			want: `spec: Invalid value: min must not exceed max`},
		{name: "messageExpression", obj: "t3", spec: `{"replicas":4}`,
			want: `spec: Invalid value: replicas must be odd, not 4`},
		{name: "reason FieldValueForbidden and fieldPath", obj: "t4", spec: `{"mode":"off","level":1}`,
			want: `spec.level: Forbidden: level is forbidden when mode is off`},
		{name: "reason FieldValueRequired", obj: "t5", spec: `{"level":1}`,
			want: `spec.mode: Required value: mode is required with level`},
		{name: "rule on a string shows the value", obj: "t6", spec: `{"color":"Red"}`,
			want: `spec.color: Invalid value: "Red": must be lower case`},
		{name: "reason FieldValueDuplicate on a map list", obj: "t7", spec: `{"ports":[{"name":"a","port":80},{"name":"b","port":80}]}`,
			want: `spec.ports: Duplicate value`},
		{name: "rule with messageExpression on map list items", obj: "t8", spec: `{"ports":[{"name":"a","port":0},{"name":"b","port":70000}]}`,
			want: `[spec.ports[0]: Invalid value: port of a is out of range, spec.ports[1]: Invalid value: port of b is out of range]`},
		{name: "a too long string blocks the rules", obj: "t9", spec: `{"mode":"verylongmode","min":3,"max":2}`,
			want: `[spec.mode: Too long: may not be more than 8 bytes, <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`},
		{name: "a missing required field blocks the rules", obj: "t10", spec: `{"ports":[{"port":1}],"min":3,"max":2}`,
			want: `[spec.ports[0].name: Required value, <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`},
		{name: "every failed rule in schema order", obj: "x12", spec: `{"min":3,"max":2,"replicas":2,"mode":"off","level":1,"color":"A"}`,
			want: `[<nil>: Invalid value: the name must start with t, spec: Invalid value: min must not exceed max, spec: Invalid value: replicas must be odd, not 2, spec.level: Forbidden: level is forbidden when mode is off, spec.color: Invalid value: "A": must be lower case]`},
		// Status rules run on create too (kube's create drops status before validating, so a request's
		// status never reaches them there; the strategy runs them all the same).
		{name: "status rules", obj: "t11", spec: `{"min":1}`, status: `{"phase":"Broken"}`,
			want: `status.phase: Invalid value: "Broken": phase must not be Broken`},
		{name: "transition rules are not run on create", obj: "t13", spec: `{"id":"z"}`, status: `{"phase":"Done"}`},
		// kube names the object's kind in the 422 (Other.cel.example.com "t14" is invalid: ...); the
		// handlers' Invalid names the resource's.
		{name: "a wrong kind does not stop the rules", obj: "t14", kind: "Other", spec: `{"min":3,"max":2}`,
			want: `[kind: Invalid value: "Other": must be Thing, spec: Invalid value: min must not exceed max]`},
	}
	v := things(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := thing(t, tt.obj, tt.spec, tt.status)
			if tt.kind != "" {
				obj.SetKind(tt.kind)
			}
			want := ""
			if tt.want != "" {
				want = `Thing.cel.example.com "` + tt.obj + `" is invalid: ` + tt.want
			}
			got := errString(v.Invalid(tt.obj, v.Validate(context.Background(), obj)))
			if got != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
}

func TestCELValidateUpdate(t *testing.T) {
	const looseThing = `{"min":3,"max":2,"color":"Red","replicas":3}` // stored before min<=max and lower-case colors were rules
	tests := []struct {
		name                  string
		status                bool // a write to the status subresource
		oldSpec, oldStatus    string
		spec, newStatus, want string
	}{
		{name: "transition rule", oldSpec: validThing, spec: `{"id":"b"}`,
			want: `spec.id: Invalid value: "b": id is immutable`},
		{name: "transition rule on a map list item, matched by key", oldSpec: validThing,
			spec: `{"id":"a","ports":[{"name":"b","port":81},{"name":"a","port":79}]}`,
			want: `spec.ports[1]: Invalid value: a port may only grow`},
		{name: "a new map list item has no oldSelf", oldSpec: validThing, spec: `{"id":"a","ports":[{"name":"a","port":80},{"name":"c","port":1}]}`},
		{name: "a field the update adds has no oldSelf", oldSpec: `{"min":1}`, spec: `{"min":1,"id":"x"}`},
		{name: "rules on self still run", oldSpec: validThing, spec: `{"replicas":4}`,
			want: `spec: Invalid value: replicas must be odd, not 4`},
		// Ratcheting: rule errors on values the update left as they were are forgiven; a changed object
		// runs its own rules again.
		{name: "unchanged invalid values pass", oldSpec: looseThing, spec: looseThing},
		{name: "a changed object runs its rules again", oldSpec: looseThing, spec: `{"min":3,"max":2,"color":"Red","replicas":5}`,
			want: `spec: Invalid value: min must not exceed max`},
		{name: "a changed field runs its rules again", oldSpec: looseThing, spec: `{"min":3,"max":2,"color":"Blue","replicas":3}`,
			want: `[spec: Invalid value: min must not exceed max, spec.color: Invalid value: "Blue": must be lower case]`},
		{name: "status transition rule", status: true, oldSpec: validThing, oldStatus: `{"phase":"Done"}`, spec: validThing, newStatus: `{"phase":"Running"}`,
			want: `status.phase: Invalid value: "Running": Done is final`},
		{name: "status rule", status: true, oldSpec: validThing, oldStatus: `{"phase":"Running"}`, spec: validThing, newStatus: `{"phase":"Broken"}`,
			want: `status.phase: Invalid value: "Broken": phase must not be Broken`},
		{name: "unchanged status passes", status: true, oldSpec: validThing, oldStatus: `{"phase":"Done"}`, spec: validThing, newStatus: `{"phase":"Done"}`},
		// A status write keeps the stored spec, so the spec's rules are ratcheted away.
		{name: "status writes forgive the stored spec", status: true, oldSpec: looseThing, oldStatus: `{"phase":"Running"}`, spec: looseThing, newStatus: `{"phase":"Done"}`},
	}
	v := things(t)
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := thing(t, "t", tt.oldSpec, tt.oldStatus)
			obj := thing(t, "t", tt.spec, tt.newStatus)
			errs := v.ValidateUpdate(ctx, obj, old)
			if tt.status {
				errs = v.ValidateStatusUpdate(ctx, obj, old)
			}
			want := ""
			if tt.want != "" {
				want = `Thing.cel.example.com "t" is invalid: ` + tt.want
			}
			if got := errString(v.Invalid("t", errs)); got != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
}

// CRDs whose rules kube refuses are refused at load with kube's errors (testdata/cel-invalid.yaml:
// kube's answers to creating each of its CRDs, with apictl's file and document in front).
func TestValidateRules(t *testing.T) {
	file := filepath.Join("testdata", "cel-invalid.yaml")
	crds, err := routes.ReadCRDFiles([]string{file})
	if err != nil {
		t.Fatal(err)
	}
	if len(crds) != 3 {
		t.Fatalf("read %d CRDs, want 3", len(crds))
	}
	const costHint = ` (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`
	tests := []struct {
		name string
		crd  routes.CRD
		want string
	}{
		{name: "a rule that does not parse", crd: crds[0], want: file + `: document 1 (line 3): spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: {"Rule":"self.min \u003c","Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}: compilation failed: ERROR: <input>:1:11: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}
 | self.min <
 | ..........^`},
		{name: "a rule over the cost budget", crd: crds[1], want: file + `: document 2 (line 31): spec.validation.openAPIV3Schema.properties[spec].properties[names].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x` + costHint + "\n" +
			file + `: document 2 (line 31): spec.validation.openAPIV3Schema.properties[spec].properties[names].x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema` + "\n" +
			file + `: document 2 (line 31): spec.validation.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x` + costHint},
		{name: "reason, fieldPath, oldSelf and result type, per version", crd: crds[2], want: file + `: document 3 (line 63): spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].reason: Unsupported value: "FieldValueWrong": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"` + "\n" +
			file + `: document 3 (line 63): spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].fieldPath: Invalid value: ".b": must be a valid path` + "\n" +
			file + `: document 3 (line 63): spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[list].items.x-kubernetes-validations[0].rule: Invalid value: "self >= oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[list]` + "\n" +
			file + `: document 3 (line 63): spec.versions[1].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: {"Rule":"self.a + 1","Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}: cel expression must evaluate to a bool`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errString(CheckRules([]routes.CRD{tt.crd})); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// Rules are compiled when the version is, and only for versions that have them.
func TestCompileRules(t *testing.T) {
	if things(t).rules == nil {
		t.Error("things/v1 has rules but no compiled rules")
	}
	if widgets(t).rules != nil {
		t.Error("widgets/v1 has no rules but compiled rules")
	}
	if validator(t, "v1beta1", "widgets").rules == nil {
		t.Error("widgets/v1beta1 has a rule but no compiled rules")
	}
}

// Compiled rules serve every request: used from many goroutines at once (run with -race), they give
// each the answer they give alone. The errors are compared as sets: kube's rule validator visits an
// object's fields in map order, so the errors of sibling fields (here spec's and status') come in
// either order, on kube-apiserver as here.
func TestCELConcurrentUse(t *testing.T) {
	v := things(t)
	specs := []string{validThing, `{"min":3,"max":2,"replicas":2,"mode":"off","level":1,"color":"A"}`, `{"id":"b","ports":[{"name":"a","port":0}]}`}
	old := thing(t, "t", validThing, `{"phase":"Done"}`)
	run := func(spec string) string {
		obj := thing(t, "t", spec, `{"phase":"Running"}`)
		ctx := context.Background()
		var msgs []string
		for _, errs := range []field.ErrorList{v.Validate(ctx, obj), v.ValidateUpdate(ctx, obj, old), v.ValidateStatusUpdate(ctx, obj, old)} {
			set := make([]string, len(errs))
			for i, e := range errs {
				set[i] = e.Error()
			}
			slices.Sort(set)
			msgs = append(msgs, fmt.Sprint(set))
		}
		return strings.Join(msgs, "\n")
	}
	want := make([]string, len(specs))
	for i, s := range specs {
		want[i] = run(s)
	}
	const goroutines = 8
	var wg sync.WaitGroup
	errs := make(chan string, goroutines*len(specs))
	for g := range goroutines {
		wg.Go(func() {
			for j := range specs {
				i := (g + j) % len(specs)
				if got := run(specs[i]); got != want[i] {
					errs <- fmt.Sprintf("spec %d: got %s\nwant %s", i, got, want[i])
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// BenchmarkCELValidate is the cost of validating a Thing on create: metadata, schema and its eleven
// rules (three on spec's map list, evaluated per item).
func BenchmarkCELValidate(b *testing.B) {
	v := things(b)
	obj := thing(b, "t1", validThing, `{"phase":"Running"}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if errs := v.Validate(ctx, obj); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}

// BenchmarkCELValidateUpdate adds transition rules and ratcheting: an update that changes one port.
func BenchmarkCELValidateUpdate(b *testing.B) {
	v := things(b)
	old := thing(b, "t1", validThing, `{"phase":"Running"}`)
	obj := thing(b, "t1", `{"min":1,"max":2,"replicas":3,"mode":"on","level":1,"color":"red","id":"a","ports":[{"name":"a","port":80},{"name":"b","port":82}]}`, `{"phase":"Running"}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if errs := v.ValidateUpdate(ctx, obj, old); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}
