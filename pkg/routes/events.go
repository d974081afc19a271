package routes

import (
	"reflect"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupEvents is the group of the newer Event API. kube serves it from the core events' storage: one
// object, seen through both APIs, with one resourceVersion.
const GroupEvents = "events.k8s.io"

// coreEvents is the resource whose stored objects events.k8s.io/v1 events are.
var coreEvents = schema.GroupVersionResource{Group: GroupCore, Version: "v1", Resource: "events"}

// eventsV1 is events.k8s.io/v1's one resource. kube prints it with the core Event printer (the columns
// below are the core resource's, for the same objects), stores it as a core v1 Event (so its
// storageVersionHash is the core one's) and lists it in discovery with the same short name.
func eventsV1() []Resource {
	core := coreEventsResource()
	r := builtin(GroupEvents, "v1", "events", "event", "Event", true, StandardVerbs(), []string{"ev"},
		reflect.TypeFor[eventsv1.Event](), reflect.TypeFor[eventsv1.EventList](), core.PrinterColumns...)
	r.StorageVersionHash = core.StorageVersionHash
	stored := coreEvents
	r.StoredAs = &stored
	return []Resource{r}
}
