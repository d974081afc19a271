package crconvert

import (
	"errors"
	"net/url"

	"k8s.io/apiserver/pkg/util/webhook"
)

// ErrServiceReference is why a conversion webhook given as a Service reference cannot be called.
var ErrServiceReference = errors.New("conversion webhooks referenced as a Service (spec.conversion.webhook.clientConfig.service) are not supported by apictl, which has no Services or endpoints to resolve: use spec.conversion.webhook.clientConfig.url")

// refuseServices is the webhook.ServiceResolver of a server without Services: it resolves nothing.
type refuseServices struct{}

var _ webhook.ServiceResolver = refuseServices{}

func (refuseServices) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	return nil, ErrServiceReference
}
