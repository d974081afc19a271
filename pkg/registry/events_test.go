package registry

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apictl/apictl/pkg/kinds"
	"github.com/apictl/apictl/pkg/kinds/core/events"
)

// mustJSON marshals v.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// decodeEvent reads the body of a write as the handlers do.
func decodeEvent(t *testing.T, s *Strategy, body string) runtime.Object {
	t.Helper()
	obj := s.New()
	if err := json.Unmarshal([]byte(body), obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// The messages are kube-apiserver v1.37.2's answers to the same bodies (namespace evu).
func TestEventValidateCreate(t *testing.T) {
	qualified := "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
	tests := []struct {
		name, group, body, want string
	}{
		{"events.k8s.io needs the newer fields", "events.k8s.io", `{"metadata":{"name":"e1","namespace":"evu"}}`,
			`Event "e1" is invalid: [involvedObject.namespace: Invalid value: "": does not match event.namespace, eventTime: Required value, type: Invalid value: "": has invalid value: ]`},
		{"events.k8s.io: strict metadata, series, no deprecated fields", "events.k8s.io",
			`{"metadata":{"name":"Bad_Name","namespace":"evu","labels":{"a b":"c"}},"eventTime":"2026-01-01T00:00:00.000000Z","reportingController":"Bad Ctl","reportingInstance":"i","action":"A","reason":"R","type":"Normal","regarding":{"namespace":"evu"},"deprecatedCount":3,"deprecatedSource":{"component":"x"},"deprecatedFirstTimestamp":"2026-01-01T00:00:00Z","series":{"count":1}}`,
			`Event "Bad_Name" is invalid: [reportingController: Invalid value: "Bad Ctl": ` + qualified +
				`, metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')` +
				`, metadata.labels: Invalid value: "a b": ` + qualified +
				`, series.count: Invalid value: "": should be at least 2, series.lastObservedTime: Required value, firstTimestamp: Invalid value: "": needs to be unset, count: Invalid value: "": needs to be unset, source: Invalid value: "": needs to be unset]`},
		{"events.k8s.io: a complete event", "events.k8s.io",
			`{"metadata":{"name":"e2","namespace":"evu"},"eventTime":"2026-01-01T00:00:00.000000Z","reportingController":"ctl.example.com/x","reportingInstance":"i-1","action":"Do","reason":"Because","type":"Normal","regarding":{"namespace":"evu"}}`, ""},
		{"core: any path segment names an event", "", `{"metadata":{"name":"Foo_Bar","namespace":"evu"},"involvedObject":{"namespace":"evu"}}`, ""},
		{"core: the involved object's namespace", "", `{"metadata":{"name":"Foo_Bar2","namespace":"evu"},"involvedObject":{"namespace":"other"}}`,
			`Event "Foo_Bar2" is invalid: involvedObject.namespace: Invalid value: "other": does not match event.namespace`},
		{"core: metadata checked after the event", "", `{"metadata":{"name":"x1","namespace":"evu","labels":{"a b":"c"}},"involvedObject":{"namespace":"evu"}}`,
			`Event "x1" is invalid: metadata.labels: Invalid value: "a b": ` + qualified},
		{"core: an eventTime asks for the newer fields, named as in core", "", `{"metadata":{"name":"x2","namespace":"evu"},"eventTime":"2026-01-01T00:00:00.000000Z","count":-1}`,
			`Event "x2" is invalid: [involvedObject.namespace: Invalid value: "": does not match event.namespace, reportingComponent: Required value, reportingComponent: Invalid value: "": name part must be non-empty, reportingComponent: Invalid value: "": ` + qualified +
				`, reportingInstance: Required value, action: Required value, reason: Required value]`},
		{"core: no namespace on either side is fine in default", "", `{"metadata":{"name":"d","namespace":"default"}}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := strategy(t, tt.group, "events")
			err := s.ValidateCreate(decodeEvent(t, s, tt.body))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || err.Error() != tt.want {
				t.Fatalf("got  %v\nwant %s", err, tt.want)
			}
			// kube validates the stored kind: the details name a core Event, without group.
			if st := err.(apierrors.APIStatus).Status(); st.Details.Kind != "Event" || st.Details.Group != "" {
				t.Errorf("details %+v", st.Details)
			}
		})
	}
}

func TestEventValidateUpdate(t *testing.T) {
	old := `{"metadata":{"name":"e2","namespace":"evu","resourceVersion":"5"},"eventTime":"2026-01-01T00:00:00.000000Z","reportingController":"ctl.example.com/x","reportingInstance":"i-1","action":"Do","reason":"Because","note":"a note","type":"Normal","regarding":{"kind":"ConfigMap","namespace":"evu","name":"cm","apiVersion":"v1"},"related":{"kind":"Pod","name":"p"},"series":{"count":2,"lastObservedTime":"2026-01-01T00:00:01.000000Z"}}`
	tests := []struct {
		name, body, want string
	}{
		{"every immutable field", `{"metadata":{"name":"e2","namespace":"evu","resourceVersion":"5"},"eventTime":"2026-01-01T00:00:02.000000Z","reportingController":"ctl.example.com/y","reportingInstance":"i-2","action":"Do2","reason":"Because2","note":"a note2","type":"Warning","regarding":{"kind":"ConfigMap","namespace":"evu","name":"cm2","apiVersion":"v1"},"related":{"kind":"Pod","name":"p2"},"series":{"count":1},"deprecatedSource":{"component":"c"},"deprecatedCount":4,"deprecatedFirstTimestamp":"2026-01-01T00:00:00Z","deprecatedLastTimestamp":"2026-01-01T00:00:00Z"}`,
			`Event "e2" is invalid: [series.count: Invalid value: "": should be at least 2, series.lastObservedTime: Required value, involvedObject: Invalid value: {"Kind":"ConfigMap","Namespace":"evu","Name":"cm2","UID":"","APIVersion":"v1","ResourceVersion":"","FieldPath":""}: field is immutable, reason: Invalid value: "Because2": field is immutable, message: Invalid value: "a note2": field is immutable, source: Invalid value: {"Component":"c","Host":""}: field is immutable, firstTimestamp: Invalid value: "2026-01-01T00:00:00Z": field is immutable, lastTimestamp: Invalid value: "2026-01-01T00:00:00Z": field is immutable, count: Invalid value: 4: field is immutable, type: Invalid value: "Warning": field is immutable, eventTime: Invalid value: "2026-01-01T00:00:02.000000Z": field is immutable, action: Invalid value: "Do2": field is immutable, related: Invalid value: {"Kind":"Pod","Namespace":"","Name":"p2","UID":"","APIVersion":"","ResourceVersion":"","FieldPath":""}: field is immutable, reportingController: Invalid value: "ctl.example.com/y": field is immutable, reportingInstance: Invalid value: "i-2": field is immutable]`},
		{"related dropped", `{"metadata":{"name":"e2","namespace":"evu","resourceVersion":"5"},"eventTime":"2026-01-01T00:00:00.000000Z","reportingController":"ctl.example.com/x","reportingInstance":"i-1","action":"Do","reason":"Because","note":"a note","type":"Normal","regarding":{"kind":"ConfigMap","namespace":"evu","name":"cm","apiVersion":"v1"},"series":{"count":2,"lastObservedTime":"2026-01-01T00:00:01.000000Z"}}`,
			`Event "e2" is invalid: related: Invalid value: null: field is immutable`},
		{"labels and a longer series may change", `{"metadata":{"name":"e2","namespace":"evu","resourceVersion":"5","labels":{"a":"b"}},"eventTime":"2026-01-01T00:00:00.000000Z","reportingController":"ctl.example.com/x","reportingInstance":"i-1","action":"Do","reason":"Because","note":"a note","type":"Normal","regarding":{"kind":"ConfigMap","namespace":"evu","name":"cm","apiVersion":"v1"},"related":{"kind":"Pod","name":"p"},"series":{"count":3,"lastObservedTime":"2026-01-01T00:00:09.000000Z"}}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := strategy(t, "events.k8s.io", "events")
			err := s.ValidateUpdate(decodeEvent(t, s, tt.body), decodeEvent(t, s, old))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || err.Error() != tt.want {
				t.Fatalf("got  %v\nwant %s", err, tt.want)
			}
		})
	}
	// Through core v1 only the legacy checks apply: the message may change.
	s := strategy(t, "", "events")
	var coreOld corev1.Event
	if err := json.Unmarshal([]byte(mustJSON(t, events.ToCore(decodeEvent(t, strategy(t, "events.k8s.io", "events"), old).(*eventsv1.Event)))), &coreOld); err != nil {
		t.Fatal(err)
	}
	changed := coreOld.DeepCopy()
	changed.Message = "another"
	if err := s.ValidateUpdate(changed, &coreOld); err != nil {
		t.Errorf("core update: %v", err)
	}
}

// TestEventStrategies: events.k8s.io/v1 events are read and written as the core events they are
// stored as, and selected by the core Event's fields.
func TestEventStrategies(t *testing.T) {
	s := strategy(t, "events.k8s.io", "events")
	if s.Stored == nil || s.Stored.GVK != corev1.SchemeGroupVersion.WithKind("Event") {
		t.Fatalf("stored form %+v", s.Stored)
	}
	core := strategy(t, "", "events")
	if core.Stored != nil {
		t.Error("core events are stored as themselves")
	}
	if s.Fields == nil || s.Fields != core.Fields {
		t.Errorf("events.k8s.io selects by %+v, want the core Event's fields %+v", s.Fields, core.Fields)
	}
	if s.Equivalent == nil || core.Equivalent == nil {
		t.Error("events of either API convert to the other's for admission (matchPolicy Equivalent)")
	}
	if r := s.StoreRules(); r.DeletePolicy != kinds.Unsupported || !r.AllowCreateOnUpdate || !r.ExpireAfterEventTTL {
		t.Errorf("store rules %+v", r)
	}
}
