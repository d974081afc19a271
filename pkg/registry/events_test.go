package registry

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
)

// The same objects as kube-apiserver v1.37.2 answered them through core v1 and through
// events.k8s.io/v1 (GET of each), with their managedFields left out.
var eventPairs = []struct {
	name, core, events string
}{
	{
		name:   "written through events.k8s.io, with series and related",
		core:   `{"kind":"Event","apiVersion":"v1","metadata":{"name":"e2","namespace":"evt","uid":"1b7da5c4-3c39-42ac-906f-c51c4faaa157","resourceVersion":"216","creationTimestamp":"2026-11-26T12:43:59Z"},"involvedObject":{"kind":"ConfigMap","namespace":"evt","name":"cm","apiVersion":"v1"},"reason":"Because","message":"a note","source":{},"firstTimestamp":null,"lastTimestamp":null,"type":"Normal","eventTime":"2026-01-01T00:00:00.000000Z","series":{"count":2,"lastObservedTime":"2026-01-01T00:00:01.000000Z"},"action":"Do","related":{"kind":"Pod","name":"p"},"reportingComponent":"ctl.example.com/x","reportingInstance":"i-1"}`,
		events: `{"kind":"Event","apiVersion":"events.k8s.io/v1","metadata":{"name":"e2","namespace":"evt","uid":"1b7da5c4-3c39-42ac-906f-c51c4faaa157","resourceVersion":"216","creationTimestamp":"2026-11-26T12:43:59Z"},"eventTime":"2026-01-01T00:00:00.000000Z","series":{"count":2,"lastObservedTime":"2026-01-01T00:00:01.000000Z"},"reportingController":"ctl.example.com/x","reportingInstance":"i-1","action":"Do","reason":"Because","regarding":{"kind":"ConfigMap","namespace":"evt","name":"cm","apiVersion":"v1"},"related":{"kind":"Pod","name":"p"},"note":"a note","type":"Normal","deprecatedSource":{},"deprecatedFirstTimestamp":null,"deprecatedLastTimestamp":null}`,
	},
	{
		name:   "written through core v1, with source, timestamps and count",
		core:   `{"kind":"Event","apiVersion":"v1","metadata":{"name":"c1","namespace":"evu","uid":"3650feb7-3cea-40ed-affa-e1c7f323f8ce","resourceVersion":"341","creationTimestamp":"2026-11-26T12:53:21Z","labels":{"k":"v"}},"involvedObject":{"kind":"Pod","namespace":"evu","name":"p"},"reason":"R","message":"m","source":{"component":"kubelet","host":"n1"},"firstTimestamp":"2026-01-01T00:00:00Z","lastTimestamp":"2026-01-01T00:00:05Z","count":3,"type":"Normal","eventTime":null,"reportingComponent":"","reportingInstance":""}`,
		events: `{"kind":"Event","apiVersion":"events.k8s.io/v1","metadata":{"name":"c1","namespace":"evu","uid":"3650feb7-3cea-40ed-affa-e1c7f323f8ce","resourceVersion":"341","creationTimestamp":"2026-11-26T12:53:21Z","labels":{"k":"v"}},"eventTime":null,"reason":"R","regarding":{"kind":"Pod","namespace":"evu","name":"p"},"note":"m","type":"Normal","deprecatedSource":{"component":"kubelet","host":"n1"},"deprecatedFirstTimestamp":"2026-01-01T00:00:00Z","deprecatedLastTimestamp":"2026-01-01T00:00:05Z","deprecatedCount":3}`,
	},
	{
		name:   "nothing but an involved object",
		core:   `{"kind":"Event","apiVersion":"v1","metadata":{"name":"w1","namespace":"evu","uid":"4e76c380-71d9-4613-a8ab-90b12c78d66d","resourceVersion":"350","creationTimestamp":"2026-11-26T12:53:35Z"},"involvedObject":{"namespace":"evu"},"source":{},"firstTimestamp":null,"lastTimestamp":null,"eventTime":null,"reportingComponent":"","reportingInstance":""}`,
		events: `{"kind":"Event","apiVersion":"events.k8s.io/v1","metadata":{"name":"w1","namespace":"evu","uid":"4e76c380-71d9-4613-a8ab-90b12c78d66d","resourceVersion":"350","creationTimestamp":"2026-11-26T12:53:35Z"},"eventTime":null,"regarding":{"namespace":"evu"},"deprecatedSource":{},"deprecatedFirstTimestamp":null,"deprecatedLastTimestamp":null}`,
	},
}

func TestEventConversion(t *testing.T) {
	for _, tt := range eventPairs {
		t.Run(tt.name, func(t *testing.T) {
			var core corev1.Event
			if err := json.Unmarshal([]byte(tt.core), &core); err != nil {
				t.Fatal(err)
			}
			var ev eventsv1.Event
			if err := json.Unmarshal([]byte(tt.events), &ev); err != nil {
				t.Fatal(err)
			}
			if got := mustJSON(t, EventFromCore(&core)); got != tt.events {
				t.Errorf("core to events.k8s.io:\n got %s\nwant %s", got, tt.events)
			}
			if got := mustJSON(t, EventToCore(&ev)); got != tt.core {
				t.Errorf("events.k8s.io to core:\n got %s\nwant %s", got, tt.core)
			}
			// Round trips lose nothing, and the inputs are left as they were.
			if got := mustJSON(t, EventToCore(EventFromCore(&core))); got != tt.core {
				t.Errorf("core round trip:\n got %s\nwant %s", got, tt.core)
			}
			if got := mustJSON(t, EventFromCore(EventToCore(&ev))); got != tt.events {
				t.Errorf("events.k8s.io round trip:\n got %s\nwant %s", got, tt.events)
			}
		})
	}
}

// TestEventConversionSharesNothing: a write's object and its stored form are changed independently
// by the handlers (resourceVersion, managedFields), so neither may alias the other.
func TestEventConversionSharesNothing(t *testing.T) {
	ev := &eventsv1.Event{Related: &corev1.ObjectReference{Name: "p"}, Series: &eventsv1.EventSeries{Count: 2}}
	ev.Labels = map[string]string{"a": "b"}
	core := EventToCore(ev)
	core.Related.Name, core.Series.Count, core.Labels["a"] = "changed", 9, "changed"
	if ev.Related.Name != "p" || ev.Series.Count != 2 || ev.Labels["a"] != "b" {
		t.Errorf("the converted event aliases its source: %+v", ev)
	}
}

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
	if err := json.Unmarshal([]byte(mustJSON(t, EventToCore(decodeEvent(t, strategy(t, "events.k8s.io", "events"), old).(*eventsv1.Event)))), &coreOld); err != nil {
		t.Fatal(err)
	}
	changed := coreOld.DeepCopy()
	changed.Message = "another"
	if err := s.ValidateUpdate(changed, &coreOld); err != nil {
		t.Errorf("core update: %v", err)
	}
}

func TestEventStoredForm(t *testing.T) {
	s := strategy(t, "events.k8s.io", "events")
	if s.Stored == nil || s.Stored.GVK != corev1.SchemeGroupVersion.WithKind("Event") {
		t.Fatalf("stored form %+v", s.Stored)
	}
	if strategy(t, "", "events").Stored != nil {
		t.Error("core events are stored as themselves")
	}
	if _, err := s.Stored.ToStored(&corev1.ConfigMap{}); err == nil || !strings.Contains(err.Error(), "ConfigMap") {
		t.Errorf("storing a ConfigMap as an event: %v", err)
	}
	if _, err := s.Stored.FromStored(&corev1.ConfigMap{}); err == nil {
		t.Error("reading a ConfigMap as an event succeeded")
	}
	for from, to := range map[string]string{"regarding.name": "involvedObject.name", "reportingController": "reportingComponent", "type": "type"} {
		if got := s.Stored.FieldLabels[from]; got != to {
			t.Errorf("field label %s maps to %q, want %q", from, got, to)
		}
	}
	for _, unsupported := range []string{"note", "involvedObject.name", "source", "deprecatedSource.component"} {
		if _, ok := s.Stored.FieldLabels[unsupported]; ok {
			t.Errorf("field label %s is supported; kube refuses it", unsupported)
		}
	}
}

func TestConvertEvent(t *testing.T) {
	var core corev1.Event
	if err := json.Unmarshal([]byte(eventPairs[0].core), &core); err != nil {
		t.Fatal(err)
	}
	var ev eventsv1.Event
	if err := ConvertEvent(&core, &ev); err != nil || mustJSON(t, &ev) != eventPairs[0].events {
		t.Errorf("core to events.k8s.io: %v %s", err, mustJSON(t, &ev))
	}
	var back corev1.Event
	if err := ConvertEvent(&ev, &back); err != nil || mustJSON(t, &back) != eventPairs[0].core {
		t.Errorf("events.k8s.io to core: %v %s", err, mustJSON(t, &back))
	}
	var same eventsv1.Event
	if err := ConvertEvent(&ev, &same); err != nil || mustJSON(t, &same) != eventPairs[0].events {
		t.Errorf("events.k8s.io to itself: %v", err)
	}
	if err := ConvertEvent(&ev, &corev1.ConfigMap{}); err == nil {
		t.Error("converting an Event to a ConfigMap succeeded")
	}
}
