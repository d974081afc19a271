package apiserver_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"

	"github.com/apictl/apictl/internal/servertest"
)

// TestEventsThroughBothAPIs: events.k8s.io/v1 serves the core events' objects, as kube does. An event
// written through one API reads through the other with kube's field mapping and the same
// resourceVersion; one write is seen by a watch of each; field selectors name each API's fields.
func TestEventsThroughBothAPIs(t *testing.T) {
	srv := servertest.Start(t)
	c := kubernetes.NewForConfigOrDie(srv.AdminConfig)
	ctx := t.Context()
	const ns = metav1.NamespaceDefault

	list, err := c.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	watches := map[string]watch.Interface{}
	if watches["core"], err = c.CoreV1().Events(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion}); err != nil {
		t.Fatal(err)
	}
	if watches["events.k8s.io"], err = c.EventsV1().Events(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion}); err != nil {
		t.Fatal(err)
	}
	for _, w := range watches {
		defer w.Stop()
	}

	eventTime := metav1.NewMicroTime(time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC))
	created, err := c.EventsV1().Events(ns).Create(ctx, &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: "newer"},
		EventTime:           eventTime,
		ReportingController: "example.com/test",
		ReportingInstance:   "test-1",
		Action:              "Testing",
		Reason:              "Tested",
		Regarding:           corev1.ObjectReference{Kind: "ConfigMap", Namespace: ns, Name: "cm"},
		Note:                "a note",
		Type:                corev1.EventTypeNormal,
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	core, err := c.CoreV1().Events(ns).Get(ctx, "newer", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if core.ResourceVersion != created.ResourceVersion || core.UID != created.UID || core.Message != "a note" ||
		core.InvolvedObject.Name != "cm" || core.ReportingController != "example.com/test" || !core.EventTime.Equal(&eventTime) {
		t.Errorf("read through core v1: %+v", core)
	}
	for name, w := range watches {
		select {
		case e := <-w.ResultChan():
			rv := ""
			switch o := e.Object.(type) {
			case *corev1.Event:
				rv = o.ResourceVersion
			case *eventsv1.Event:
				rv = o.ResourceVersion
			}
			if e.Type != watch.Added || rv != created.ResourceVersion {
				t.Errorf("the %s watch saw %s of a %T at %s, want ADDED at %s", name, e.Type, e.Object, rv, created.ResourceVersion)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the %s watch saw nothing", name)
		}
	}

	if _, err := c.CoreV1().Events(ns).Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "older"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "p"},
		Reason:         "Pulled", Message: "an older event", Count: 3,
		Source: corev1.EventSource{Component: "kubelet"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	older, err := c.EventsV1().Events(ns).Get(ctx, "older", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if older.Note != "an older event" || older.DeprecatedCount != 3 || older.DeprecatedSource.Component != "kubelet" || older.Regarding.Kind != "Pod" {
		t.Errorf("read through events.k8s.io/v1: %+v", older)
	}

	for _, tt := range []struct{ selector, want string }{
		{"regarding.kind=Pod", "older"},
		{"reportingController=example.com/test", "newer"},
	} {
		l, err := c.EventsV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: tt.selector})
		if err != nil {
			t.Fatalf("%s: %v", tt.selector, err)
		}
		if len(l.Items) != 1 || l.Items[0].Name != tt.want {
			t.Errorf("%s selects %v, want %s", tt.selector, l.Items, tt.want)
		}
	}
	if _, err := c.EventsV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Pod"}); !apierrors.IsBadRequest(err) {
		t.Errorf("a core field selector on events.k8s.io/v1: %v, want 400", err)
	}

	// The strict validation of the newer API: no deprecated fields in a create.
	bad := created.DeepCopy()
	bad.ObjectMeta = metav1.ObjectMeta{Name: "bad"}
	bad.DeprecatedCount = 2
	if _, err := c.EventsV1().Events(ns).Create(ctx, bad, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("a create with deprecatedCount: %v, want 422", err)
	}

	// kubectl's typed clients send protobuf.
	pcfg := rest.CopyConfig(srv.AdminConfig)
	pcfg.ContentType = "application/vnd.kubernetes.protobuf"
	pc := kubernetes.NewForConfigOrDie(pcfg)
	viaProtobuf := created.DeepCopy()
	viaProtobuf.ObjectMeta = metav1.ObjectMeta{Name: "protobuf"}
	if got, err := pc.EventsV1().Events(ns).Create(ctx, viaProtobuf, metav1.CreateOptions{}); err != nil || got.Note != "a note" {
		t.Errorf("a protobuf create: %v, %+v", err, got)
	}

	if err := c.EventsV1().Events(ns).Delete(ctx, "older", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().Events(ns).Get(ctx, "older", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("deleted through events.k8s.io/v1, read through core v1: %v", err)
	}
}

// TestEventRecorderWritesEventsV1: client-go's events.k8s.io recorder, as controllers use it, is
// accepted by the strict validation of the newer API.
func TestEventRecorderWritesEventsV1(t *testing.T) {
	c := kubernetes.NewForConfigOrDie(servertest.Start(t).AdminConfig)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	w, err := c.EventsV1().Events("default").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: c.EventsV1()})
	if err := broadcaster.StartRecordingToSinkWithContext(ctx); err != nil {
		t.Fatal(err)
	}
	defer broadcaster.Shutdown()
	recorder := broadcaster.NewRecorder(scheme.Scheme, "example.com/recorder")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "default", UID: "u-1"}}
	recorder.Eventf(cm, nil, corev1.EventTypeWarning, "Checked", "Check", "checked %d things", 3)

	select {
	case e := <-w.ResultChan():
		ev, ok := e.Object.(*eventsv1.Event)
		if !ok || e.Type != watch.Added {
			t.Fatalf("watch saw %s %T", e.Type, e.Object)
		}
		if ev.ReportingController != "example.com/recorder" || ev.Regarding.Name != "cm" || ev.Note != "checked 3 things" || ev.Action != "Check" {
			t.Errorf("recorded %+v", ev)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the recorder's event never arrived")
	}
}

// TestEventsGroupOff: --runtime-config turns events.k8s.io off, and core events stay.
func TestEventsGroupOff(t *testing.T) {
	c := kubernetes.NewForConfigOrDie(servertest.Start(t, "--runtime-config", "events.k8s.io/v1=false").AdminConfig)
	ctx := t.Context()
	if _, err := c.EventsV1().Events("default").List(ctx, metav1.ListOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("events.k8s.io/v1 turned off: %v, want 404", err)
	}
	if _, err := c.CoreV1().Events("default").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("core events: %v", err)
	}
	groups, err := c.Discovery().ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups.Groups {
		if g.Name == "events.k8s.io" {
			t.Errorf("discovery lists %s", g.Name)
		}
	}
}

const coreEventsPolicy = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: ev-deny}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [events]}]
  validations:
  - {expression: 'object.message != "deny-me"', message: no deny-me}
  - {expression: 'object.apiVersion == "v1"', messageExpression: '"got " + object.apiVersion'}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: ev-deny}
spec: {policyName: ev-deny, validationActions: [Deny]}
`

// TestEventsEquivalentAdmission: a policy on core v1 events judges events written through
// events.k8s.io/v1 too (matchPolicy Equivalent, the default), converted to core v1, as kube's do:
// kube-apiserver v1.37.2 answers the same body with this very Status.
func TestEventsEquivalentAdmission(t *testing.T) {
	s, c := policyServer(t, map[string]map[string]string{"evu": nil})
	applyPolicies(t, c, coreEventsPolicy)
	body := func(name, note string) string {
		return `{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"` + name + `"},"eventTime":"2026-01-01T00:00:00.000000Z",` +
			`"reportingController":"ctl.example.com/x","reportingInstance":"i-1","action":"Do","reason":"Because","note":"` + note + `","type":"Normal","regarding":{"namespace":"evu"}}`
	}
	url := s.InsecureURL + "/apis/events.k8s.io/v1/namespaces/evu/events"
	untilPolicy(t, "the policy to deny", func() (bool, string) {
		code, got := policyPost(t, url+"?dryRun=All", body("probe", "deny-me"))
		return code == http.StatusUnprocessableEntity, got
	})
	const want = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"events.events.k8s.io \"vap1\" is forbidden: ValidatingAdmissionPolicy 'ev-deny' with binding 'ev-deny' denied request: no deny-me","reason":"Invalid","details":{"name":"vap1","group":"events.k8s.io","kind":"events","causes":[{"message":"ValidatingAdmissionPolicy 'ev-deny' with binding 'ev-deny' denied request: no deny-me"}]},"code":422}` + "\n"
	if code, got := policyPost(t, url, body("vap1", "deny-me")); code != http.StatusUnprocessableEntity || got != want {
		t.Errorf("got %d %s\nwant 422 %s", code, got, want)
	}
	// The policy sees the core v1 form: its apiVersion check passes.
	if code, got := policyPost(t, url, body("vap2", "fine")); code != http.StatusCreated {
		t.Errorf("an event the policy allows: %d %s", code, got)
	}
}

// TestEventsWithoutCoreEvents: with core v1 events turned off, events.k8s.io/v1 still keeps its
// objects where core events live, watches them through their watch cache, and the namespace
// controller empties them with their namespace.
func TestEventsWithoutCoreEvents(t *testing.T) {
	c := kubernetes.NewForConfigOrDie(servertest.Start(t, "--runtime-config", "v1/events=false").AdminConfig)
	ctx := t.Context()
	createNamespace(t, c, "gone", nil)
	if _, err := c.CoreV1().Events("gone").List(ctx, metav1.ListOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("core events turned off: %v, want 404", err)
	}
	list, err := c.EventsV1().Events("gone").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.EventsV1().Events("gone").Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := c.EventsV1().Events("gone").Create(ctx, &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: "e"}, EventTime: metav1.NowMicro(), ReportingController: "example.com/test",
		ReportingInstance: "i", Action: "A", Reason: "R", Type: corev1.EventTypeNormal, Regarding: corev1.ObjectReference{Namespace: "gone"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if e := nextEvent(t, w); e.Type != watch.Added {
		t.Fatalf("watch saw %s, want ADDED", e.Type)
	}
	if err := c.CoreV1().Namespaces().Delete(ctx, "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The namespace controller deletes the event before it finalizes the namespace.
	if e := nextEvent(t, w); e.Type != watch.Deleted {
		t.Fatalf("watch saw %s, want DELETED", e.Type)
	}
}

func nextEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case e, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("the watch ended")
		}
		return e
	case <-time.After(20 * time.Second):
		t.Fatal("the watch saw nothing")
	}
	return watch.Event{}
}
