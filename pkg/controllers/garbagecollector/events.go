package garbagecollector

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
)

// Component is the source of the collector's events, as kube names it.
const Component = "garbage-collector-controller"

// recorder writes the collector's events through client-go's event recorder, which spells,
// correlates and counts them as kube's controllers do.
type recorder struct {
	broadcaster record.EventBroadcaster
	rec         record.EventRecorder
}

// newRecorder starts a recorder writing to events; Shutdown stops it.
func newRecorder(ctx context.Context, events corev1client.EventsGetter) *recorder {
	b := record.NewBroadcaster(record.WithContext(ctx))
	b.StartRecordingToSink(&corev1client.EventSinkImpl{Interface: events.Events("")})
	// The recorder needs a scheme only for objects that are not references already, and it is
	// only given references.
	return &recorder{broadcaster: b, rec: b.NewRecorder(runtime.NewScheme(), corev1.EventSource{Component: Component})}
}

func (r *recorder) shutdown() { r.broadcaster.Shutdown() }

// invalidNamespace is kube's reportInvalidNamespaceOwnerRef.
func (r *recorder) invalidNamespace(dependent, owner identity) {
	ref := &corev1.ObjectReference{Kind: dependent.Kind, APIVersion: dependent.APIVersion, Namespace: dependent.Namespace,
		Name: dependent.Name, UID: dependent.UID}
	r.rec.Eventf(ref, corev1.EventTypeWarning, "OwnerRefInvalidNamespace", "ownerRef %s does not exist in namespace %q", owner, dependent.Namespace)
}
