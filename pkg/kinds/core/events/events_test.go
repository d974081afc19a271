package events

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/fields"
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

func TestConversion(t *testing.T) {
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
			if got := mustJSON(t, FromCore(&core)); got != tt.events {
				t.Errorf("core to events.k8s.io:\n got %s\nwant %s", got, tt.events)
			}
			if got := mustJSON(t, ToCore(&ev)); got != tt.core {
				t.Errorf("events.k8s.io to core:\n got %s\nwant %s", got, tt.core)
			}
			// Round trips lose nothing, and the inputs are left as they were.
			if got := mustJSON(t, ToCore(FromCore(&core))); got != tt.core {
				t.Errorf("core round trip:\n got %s\nwant %s", got, tt.core)
			}
			if got := mustJSON(t, FromCore(ToCore(&ev))); got != tt.events {
				t.Errorf("events.k8s.io round trip:\n got %s\nwant %s", got, tt.events)
			}
		})
	}
}

// TestConversionSharesNothing: a write's object and its stored form are changed independently
// by the handlers (resourceVersion, managedFields), so neither may alias the other.
func TestConversionSharesNothing(t *testing.T) {
	ev := &eventsv1.Event{Related: &corev1.ObjectReference{Name: "p"}, Series: &eventsv1.EventSeries{Count: 2}}
	ev.Labels = map[string]string{"a": "b"}
	core := ToCore(ev)
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

func TestStoredForm(t *testing.T) {
	k := EventsV1Kind().Complete()
	stored := k.StoredAs
	if stored == nil || stored.GVK != corev1.SchemeGroupVersion.WithKind("Event") || *k.Resource.StoredAs != corev1.SchemeGroupVersion.WithResource("events") {
		t.Fatalf("stored form %+v", stored)
	}
	if core := Kind().Complete(); core.StoredAs != nil || core.Resource.StoredAs != nil {
		t.Error("core events are stored as themselves")
	}
	// discovery's storageVersionHash names the storage version: the core Event's.
	if k.Resource.StorageVersionHash != Kind().Complete().Resource.StorageVersionHash {
		t.Errorf("storageVersionHash %q, want the core Event's", k.Resource.StorageVersionHash)
	}
	if _, err := stored.ToStored(&corev1.ConfigMap{}); err == nil || !strings.Contains(err.Error(), "ConfigMap") {
		t.Errorf("storing a ConfigMap as an event: %v", err)
	}
	if _, err := stored.FromStored(&corev1.ConfigMap{}); err == nil {
		t.Error("reading a ConfigMap as an event succeeded")
	}
	for from, to := range map[string]string{"regarding.name": "involvedObject.name", "reportingController": "reportingComponent", "type": "type"} {
		if got := stored.FieldLabels[from]; got != to {
			t.Errorf("field label %s maps to %q, want %q", from, got, to)
		}
	}
	for _, unsupported := range []string{"note", "involvedObject.name", "source", "deprecatedSource.component"} {
		if _, ok := stored.FieldLabels[unsupported]; ok {
			t.Errorf("field label %s is supported; kube refuses it", unsupported)
		}
	}
}

func TestConvert(t *testing.T) {
	var core corev1.Event
	if err := json.Unmarshal([]byte(eventPairs[0].core), &core); err != nil {
		t.Fatal(err)
	}
	var ev eventsv1.Event
	if err := Convert(&core, &ev); err != nil || mustJSON(t, &ev) != eventPairs[0].events {
		t.Errorf("core to events.k8s.io: %v %s", err, mustJSON(t, &ev))
	}
	var back corev1.Event
	if err := Convert(&ev, &back); err != nil || mustJSON(t, &back) != eventPairs[0].core {
		t.Errorf("events.k8s.io to core: %v %s", err, mustJSON(t, &back))
	}
	var same eventsv1.Event
	if err := Convert(&ev, &same); err != nil || mustJSON(t, &same) != eventPairs[0].events {
		t.Errorf("events.k8s.io to itself: %v", err)
	}
	if err := Convert(&ev, &corev1.ConfigMap{}); err == nil {
		t.Error("converting an Event to a ConfigMap succeeded")
	}
}

// TestFieldSelectors: a stored event yields every field kube's ToSelectableFields has, and the
// source of an event of the newer API is its reporting controller.
func TestFieldSelectors(t *testing.T) {
	fs := Kind().Fields
	tests := []struct {
		name, stored string
		want         map[string]string
	}{
		{"older API", `{"metadata":{"name":"e","namespace":"ns","labels":{"a":"b"}},"involvedObject":{"kind":"Pod","name":"p","namespace":"ns","uid":"u","apiVersion":"v1","resourceVersion":"5","fieldPath":"spec"},"reason":"R","source":{"component":"kubelet"},"type":"Normal"}`,
			map[string]string{"involvedObject.kind": "Pod", "involvedObject.name": "p", "involvedObject.namespace": "ns", "involvedObject.uid": "u",
				"involvedObject.apiVersion": "v1", "involvedObject.resourceVersion": "5", "involvedObject.fieldPath": "spec",
				"reason": "R", "reportingComponent": "", "source": "kubelet", "type": "Normal"}},
		{"newer API", `{"metadata":{"name":"e","namespace":"ns"},"reportingComponent":"ctl.example.com/x","type":"Warning"}`,
			map[string]string{"involvedObject.kind": "", "involvedObject.name": "", "involvedObject.namespace": "", "involvedObject.uid": "",
				"involvedObject.apiVersion": "", "involvedObject.resourceVersion": "", "involvedObject.fieldPath": "",
				"reason": "", "reportingComponent": "ctl.example.com/x", "source": "ctl.example.com/x", "type": "Warning"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := fs.New()
			if err := json.Unmarshal([]byte(tt.stored), r); err != nil {
				t.Fatal(err)
			}
			set := fields.Set{}
			r.AddFields(set)
			if len(set) != len(tt.want) || len(set) != len(fs.Names) {
				t.Errorf("fields %v, want %v (names %v)", set, tt.want, fs.Names)
			}
			for k, v := range tt.want {
				if got, ok := set[k]; !ok || got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			if m := r.Meta().Metadata; m.Name != "e" || m.Namespace != "ns" {
				t.Errorf("metadata %+v", m)
			}
		})
	}
}
