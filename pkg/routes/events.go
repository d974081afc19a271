package routes

// GroupEvents is the group of the newer Event API. kube serves it from the core events' storage: one
// object, seen through both APIs, with one resourceVersion (pkg/kinds/core/events).
const GroupEvents = "events.k8s.io"
