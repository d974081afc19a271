// Package endpoints holds kube-controller-manager's controllers of Endpoints and EndpointSlices for
// what needs no pods (apictl serves none): the Endpoints and EndpointSlices of a Service with a
// selector, which match nothing and so are empty, and the EndpointSlices mirrored from the custom
// Endpoints of a Service without one. They run once per cluster, under the controllers' Lease.
package endpoints
