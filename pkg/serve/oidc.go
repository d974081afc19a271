package serve

import (
	"log/slog"
	"net/http"
	"strconv"

	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/serve/auth/serviceaccount"
)

// addOpenIDEndpoints serves the service-account issuer's discovery documents, as kube does: fixed
// bytes, cacheable for an hour. Without tokens, or with an issuer that is not an https URL, kube
// serves neither and the paths answer 404; so does apictl, with a warning saying why.
func addOpenIDEndpoints(e map[routes.Endpoint]func(http.ResponseWriter, *http.Request, *routes.Match),
	tokens *serviceaccount.Tokens, externalAddress string, log *slog.Logger) {
	if tokens == nil {
		return
	}
	d, err := tokens.Discovery(externalAddress)
	if err != nil {
		log.Warn("service-account issuer discovery is off: /.well-known/openid-configuration and /openid/v1/jwks answer 404", "err", err)
		return
	}
	serveBytes := func(body []byte, contentType string) func(http.ResponseWriter, *http.Request, *routes.Match) {
		return func(w http.ResponseWriter, _ *http.Request, _ *routes.Match) {
			h := w.Header()
			h.Set("Cache-Control", "public, max-age="+strconv.Itoa(serviceaccount.DiscoveryMaxAge))
			h.Set("Content-Type", contentType)
			_, _ = w.Write(body)
		}
	}
	e[routes.EndpointOpenIDConfiguration] = serveBytes(d.ConfigJSON, routes.MediaJSON)
	e[routes.EndpointOpenIDKeys] = serveBytes(d.KeysetJSON, routes.MediaJWKSet)
}
