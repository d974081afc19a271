package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/apictl/apictl/pkg/certs"
)

// Issue 13's authorization overhead: the same user, not in system:masters (whose requests skip every
// authorizer), measured against a server with --authorization-mode RBAC and a policy of
// AuthzBindings bindings, and against one with AlwaysAllow. RBAC must keep AuthzTarget of the
// throughput.
const (
	AuthzBindings = 1000
	AuthzTarget   = 0.9
	// authzRounds is how often each pair is measured, alternating, keeping each side's best: noise
	// only slows a measurement down, so the best is the fairest.
	authzRounds = 2
	authzUser   = "bench-authz"
	authzGroup  = "bench"
	// authzNoiseNamespace holds the bindings that fill the policy; none of them is the measured user's.
	authzNoiseNamespace = "bench-authz-noise"
)

// authzOperations are the operations compared.
var authzOperations = []Operation{OpGet, OpList, OpCreate}

// Authz compares two servers on the harness's etcd that differ only in their authorizer.
type Authz struct {
	// Client describes the measured client; Bindings is how many bindings the RBAC policy holds
	// besides the measured user's.
	Client      string        `json:"client"`
	Bindings    int           `json:"bindings"`
	Concurrency int           `json:"concurrency"`
	Results     []AuthzResult `json:"results"`
}

// AuthzResult is one operation on both servers: requests per second, the best of authzRounds each.
type AuthzResult struct {
	Operation   Operation `json:"operation"`
	AlwaysAllow float64   `json:"alwaysAllowPerSecond"`
	RBAC        float64   `json:"rbacPerSecond"`
	Failed      int       `json:"failed"`
	FirstError  string    `json:"firstError,omitempty"`
}

// Ratio is RBAC's throughput as a share of AlwaysAllow's.
func (r AuthzResult) Ratio() float64 {
	if r.AlwaysAllow == 0 {
		return 0
	}
	return r.RBAC / r.AlwaysAllow
}

// measureAuthz starts the two servers on etcdURLs, where compare seeded the listed objects, gives the
// measured user the edit role in the namespaces the operations use, fills the policy, and measures.
// They are replicas of the compared server: they start with a copy of its PKI (pki), as replicas of
// one cluster share it. With a CA of their own each, their kube-root-ca.crt publishers would rewrite
// every namespace's ConfigMap back and forth, and the measurement would measure that.
func measureAuthz(ctx context.Context, cfg Config, etcdURLs []string, dir, pki string) (_ *Authz, err error) {
	c := cfg.Concurrency[0]
	a := &Authz{Bindings: AuthzBindings, Concurrency: c,
		Client: "h2+tls, client certificate CN=" + authzUser + " O=" + authzGroup + " (not in system:masters)"}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("measuring authorization: %w", err)
	}
	servers := map[string]*server{}
	for _, mode := range []string{"AlwaysAllow", "RBAC"} {
		dataDir := filepath.Join(dir, mode)
		if err := os.CopyFS(filepath.Join(dataDir, "pki"), os.DirFS(pki)); err != nil {
			return nil, fmt.Errorf("measuring authorization: sharing the PKI: %w", err)
		}
		s, _, err := startServer(ctx, cfg.Apictl, dataDir, etcdURLs, 10*time.Millisecond, "--authorization-mode", mode)
		if err != nil {
			return nil, fmt.Errorf("measuring authorization: %w", err)
		}
		defer func() { err = errors.Join(err, s.stop()) }()
		servers[mode] = s
	}
	admin, err := servers["RBAC"].target(ViaHTTP2, seedConcurrency)
	if err != nil {
		return nil, err
	}
	defer admin.client.CloseIdleConnections()
	cfg.Logger.Info("filling the RBAC policy", "bindings", AuthzBindings)
	if err := grantAuthz(ctx, admin); err != nil {
		return nil, fmt.Errorf("measuring authorization: %w", err)
	}
	targets := map[string]httpTarget{}
	for mode, s := range servers {
		h, err := s.authzTarget(ctx, c)
		if err != nil {
			return nil, fmt.Errorf("measuring authorization: %w", err)
		}
		defer h.client.CloseIdleConnections()
		// The role binding reaches the RBAC server's policy through its watch: wait for it.
		if err := waitAllowed(ctx, h); err != nil {
			return nil, fmt.Errorf("measuring authorization with %s: %w", mode, err)
		}
		targets[mode] = h
	}
	w := window{Warmup: cfg.Warmup, Duration: cfg.Duration}
	for _, o := range authzOperations {
		r := AuthzResult{Operation: o}
		for round := range authzRounds {
			for _, mode := range []string{"AlwaysAllow", "RBAC"} {
				cfg.Logger.Info("measuring authorization", "operation", o, "mode", mode, "concurrency", c)
				// Each round's creates need names of their own.
				label := "authz-" + strings.ToLower(mode) + "-" + strconv.Itoa(round)
				t, err := measure(ctx, c, w, serverWorkers(targets[mode], configMapKind(), label)[o])
				if err != nil {
					return nil, fmt.Errorf("%s with %s: %w", o, mode, err)
				}
				best := &r.AlwaysAllow
				if mode == "RBAC" {
					best = &r.RBAC
				}
				*best = max(*best, t.PerSecond())
				r.Failed += t.Failed
				if t.FirstError != nil && r.FirstError == "" {
					r.FirstError = t.FirstError.Error()
				}
			}
		}
		a.Results = append(a.Results, r)
	}
	return a, nil
}

// authzTarget issues the measured user's certificate from s's CA and returns an HTTP/2 client that
// presents it.
func (s *server) authzTarget(ctx context.Context, concurrency int) (httpTarget, error) {
	spec := certs.NewClientSpec(s.pkiDir(), authzUser)
	spec.Groups = []string{authzGroup}
	spec.Server = s.secureURL
	if _, err := certs.IssueClient(ctx, spec); err != nil {
		return httpTarget{}, fmt.Errorf("issuing the measured user's certificate: %w", err)
	}
	tlsConfig, err := s.clientTLS(authzUser)
	if err != nil {
		return httpTarget{}, err
	}
	t := newTransport(concurrency)
	t.TLSClientConfig = tlsConfig
	t.Protocols.SetHTTP2(true)
	return httpTarget{client: &http.Client{Transport: t}, base: s.secureURL, protoMajor: 2}, nil
}

// grantAuthz binds the measured user to the edit role in the namespaces the operations use, and fills
// the policy with AuthzBindings bindings of other users, as a shared cluster has.
func grantAuthz(ctx context.Context, admin httpTarget) error {
	for _, ns := range []string{listNamespace, writeNamespace} {
		if err := createRoleBinding(ctx, admin, ns, "bench-authz-edit", authzUser); err != nil {
			return err
		}
	}
	if err := createNamespace(ctx, admin, authzNoiseNamespace); err != nil {
		return err
	}
	return parallel(ctx, AuthzBindings, seedConcurrency, func(ctx context.Context, i int) error {
		return createRoleBinding(ctx, admin, authzNoiseNamespace, "noise-"+strconv.Itoa(i), "noise-user-"+strconv.Itoa(i))
	})
}

// createRoleBinding binds user to the ClusterRole edit in namespace; one that exists already is fine.
func createRoleBinding(ctx context.Context, h httpTarget, namespace, name, user string) error {
	return createRoleBindingTo(ctx, h, namespace, name, "edit", user)
}

// createRoleBindingTo binds user to the ClusterRole role in namespace; one that exists already is fine.
func createRoleBindingTo(ctx context.Context, h httpTarget, namespace, name, role, user string) error {
	body := []byte(`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"` + name +
		`"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"` + role + `"},"subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"` + user + `"}]}`)
	return createOnce(ctx, h, "/apis/rbac.authorization.k8s.io/v1/namespaces/"+namespace+"/rolebindings", body)
}

// waitAllowed waits until the measured user may read the object GET reads.
func waitAllowed(ctx context.Context, h httpTarget) error {
	path := configMapsPath(listNamespace) + "/" + getName
	return retry(ctx, "the measured user is still refused", func(ctx context.Context) error {
		return h.do(ctx, http.MethodGet, path, nil, http.StatusOK, nil)
	})
}

// retry calls try until it succeeds, for at most retryFor, and fails with what and try's last error.
func retry(ctx context.Context, what string, try func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, retryFor)
	defer cancel()
	for {
		err := try(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if err := sleep(ctx, 50*time.Millisecond); err != nil {
			return err
		}
	}
}

// retryFor bounds retry: what it waits for (a binding, a policy, a CRD reaching a cache) takes
// milliseconds.
const retryFor = 30 * time.Second
