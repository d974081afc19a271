package serve

import (
	"fmt"

	"github.com/apictl/apictl/pkg/routes"
)

// apiState is everything the server derives from its API: the route table and its matcher, the
// served groups, discovery and OpenAPI. CRDs change the API while the server runs, so the state is
// built whole off the request path and swapped behind an atomic pointer; a request reads it once, at
// the top of the mux, and keeps that view to its end.
type apiState struct {
	api       *routes.API
	table     routes.Table
	matcher   *routes.Matcher
	groups    map[string]bool // paths below /apis/<group> of these get a 404 Status
	discovery *discoveryHandler
	openAPI   *openAPIDocs
	// remote is what other servers serve (nil: nothing), and remoteRoutes its index for the request
	// path: the aggregator's proxy and the /apis/<group> of groups with remote versions.
	remote       *Remote
	remoteRoutes *remoteState
}

func (c *completedConfig) newAPIState(api *routes.API, prev *apiState) (*apiState, error) {
	var remote *Remote
	if prev != nil {
		remote = prev.remote
	}
	return c.newAPIStateWithRemote(api, remote, prev)
}

// newAPIStateWithRemote builds the state of api with remote merged in. The route table and matcher
// of prev are reused when the API did not change (a change of the remote part alone).
func (c *completedConfig) newAPIStateWithRemote(api *routes.API, remote *Remote, prev *apiState) (*apiState, error) {
	st := &apiState{api: api, remote: remote}
	if prev != nil && prev.api == api {
		st.table, st.matcher, st.groups = prev.table, prev.matcher, prev.groups
	} else {
		st.table = routes.Install(api, routes.InstallOptions{Profiling: c.EnableProfiling})
		st.groups = map[string]bool{}
		var err error
		if st.matcher, err = routes.NewMatcher(st.table); err != nil {
			return nil, fmt.Errorf("building the route matcher: %w", err)
		}
		for _, r := range st.table.Routes {
			if r.Group != "" {
				st.groups[r.Group] = true
			}
		}
	}
	d := routes.NewDiscovery(api, routes.DiscoveryOptions{ServerAddress: c.ExternalAddress})
	if remote != nil && len(remote.GroupVersions) > 0 {
		var err error
		if st.remoteRoutes, err = mergeRemote(d, remote); err != nil {
			return nil, err
		}
	}
	var err error
	if st.discovery, err = newDiscoveryHandler(d); err != nil {
		return nil, err
	}
	var prevDocs *openAPIDocs
	if prev != nil {
		prevDocs = prev.openAPI
	}
	st.openAPI = newOpenAPIDocs(st.table, api, st.remoteRoutes.openAPI(), c.Version.GitVersion, prevDocs)
	return st, nil
}

// API returns the API the server serves now.
func (s *Server) API() *routes.API { return s.mux.state.Load().api }

// SetAPI makes api what the server serves from now on: its routes, discovery and OpenAPI. The
// resource handler must already answer api's resources (the CRD controller installs their handlers
// first). Requests in flight finish with the API they started with.
func (s *Server) SetAPI(api *routes.API) error {
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	st, err := s.cfg.newAPIState(api, s.mux.state.Load())
	if err != nil {
		return err
	}
	s.mux.state.Store(st)
	return nil
}
