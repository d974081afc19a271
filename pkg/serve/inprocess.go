package serve

import "net/http"

// InProcess is the server's mux without its filters: the live API's discovery, OpenAPI and resource
// routes. The server's own clients (controllers, admission plugins, informers) reach the API through
// it in-process, so they follow CRDs as they come and go without a listener, TLS or authentication;
// the caller puts the user and request info into each request's context.
func (s *Server) InProcess() http.Handler { return s.mux }
