package leaderelection

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// eventTimeout bounds an event's write: client-go records events on its election path, which must
// not wait on them.
const eventTimeout = 5 * time.Second

// eventRecorder writes the events client-go's election records on the Lease ("<identity> became
// leader", "<identity> stopped leading") as kube's event recorder writes them for
// kube-controller-manager: reason LeaderElection, type Normal, named <lease>.<hex nanoseconds>, with
// the component as source and reporting component. It writes each directly, without client-go's
// broadcaster and its goroutines: there are two per term.
type eventRecorder struct {
	client    corev1client.EventsGetter
	component string
	log       *slog.Logger
	now       func() time.Time
}

var _ resourcelock.EventRecorder = eventRecorder{}

// Eventf records one event about obj.
func (r eventRecorder) Eventf(obj runtime.Object, eventType, reason, message string, args ...any) {
	m, err := meta.Accessor(obj)
	if err != nil {
		r.log.Warn("recording a leader election event: the object has no metadata", "err", err)
		return
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	now := r.now()
	ts := metav1.NewTime(now)
	e := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%v.%x", m.GetName(), now.UnixNano()), Namespace: m.GetNamespace()},
		InvolvedObject: corev1.ObjectReference{
			APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Namespace: m.GetNamespace(), Name: m.GetName(),
			UID: m.GetUID(), ResourceVersion: m.GetResourceVersion(),
		},
		Reason:              reason,
		Message:             fmt.Sprintf(message, args...),
		Source:              corev1.EventSource{Component: r.component},
		FirstTimestamp:      ts,
		LastTimestamp:       ts,
		Count:               1,
		Type:                eventType,
		ReportingController: r.component,
	}
	ctx, cancel := context.WithTimeout(context.Background(), eventTimeout)
	defer cancel()
	if _, err := r.client.Events(e.Namespace).Create(ctx, e, metav1.CreateOptions{}); err != nil {
		r.log.Warn("recording a leader election event failed", "reason", reason, "message", e.Message, "err", err)
	}
}
