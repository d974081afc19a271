package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
)

// The peer comparison with features on (BENCH_PEER=1 with BENCH_FEATURES=1): after the bare rows,
// both servers start again with what a shared control plane runs on every request, and every row is
// measured again with a client outside system:masters. Each server does it its own way, as each is
// deployed: apictl authorizes with its own RBAC (--authorization-mode RBAC, a RoleBinding per
// namespace) and reads its admission policy from its own API; the upstream server delegates
// authorization to the core API (SubjectAccessReviews to the stub, whose answers it caches for 10 s
// by default, as in a cluster) and lists its admission policy from there.
const peerFeaturesOn = "an audit policy at Metadata level logging to a file, Secrets encrypted at rest (aescbc), " +
	"one ValidatingAdmissionPolicy with a binding on the custom objects (CEL on every create and update), " +
	"a client certificate outside system:masters (CN=" + authzUser + "): apictl --authorization-mode RBAC with a RoleBinding, " +
	"the upstream server's delegated authorization (SubjectAccessReviews to the stub, cached as by default)"

// peerRecordsRole lets the measured user do anything with the custom objects; apictl's edit role,
// like kube's, covers no custom resource.
const peerRecordsRole = "bench-records"

// peerVAP is the admission policy of both servers: it refuses custom objects labelled
// bench-vap=deny (none of the measured ones), so its CEL runs on every one created or updated.
var peerVAP = admissionPolicy(scaleGroup, scalePlural)

// stubPolicies is peerVAP as the stub lists it: with the metadata a stored object has.
func stubPolicies() (map[string][]any, error) {
	lists := map[string][]any{}
	for _, o := range peerVAP {
		var obj map[string]any
		if err := json.Unmarshal([]byte(o.body), &obj); err != nil {
			return nil, fmt.Errorf("the peer admission policy: %w", err)
		}
		meta := obj["metadata"].(map[string]any)
		meta["uid"], meta["resourceVersion"], meta["generation"] = "bench-"+o.path, "1", 1
		// The defaults kube-apiserver stores: the upstream server's plugin refuses to run a
		// policy without them ("a nil namespace selector was passed").
		spec := obj["spec"].(map[string]any)
		if m, ok := spec["matchConstraints"].(map[string]any); ok {
			m["namespaceSelector"], m["objectSelector"], m["matchPolicy"] = map[string]any{}, map[string]any{}, "Equivalent"
			for _, rule := range m["resourceRules"].([]any) {
				rule.(map[string]any)["scope"] = "*"
			}
		}
		lists[o.path] = append(lists[o.path], obj)
	}
	return lists, nil
}

// comparePeerFeatures restarts both sides with features on, sets up what they need, measures every
// row with the measured user, then takes apictl's admission policy away and starts both bare again
// for the memory measurement.
func comparePeerFeatures(ctx context.Context, cfg Config, dir string, sides []*peerSide, etcd *process, kind objectKind, stub *coreStub) (_ []PeerResult, err error) {
	policies, err := stubPolicies()
	if err != nil {
		return nil, err
	}
	stub.setLists(policies)
	for _, side := range sides {
		if err := startFeatures(ctx, cfg, filepath.Join(dir, "features", side.name), side, kind); err != nil {
			return nil, err
		}
	}
	defer func() {
		// Back to bare for the memory measurement: no policy, and the servers started as at first.
		stub.setLists(nil)
		for _, side := range sides {
			if err != nil {
				return
			}
			if side.name == "apictl" {
				err = removePeerPolicy(ctx, side.s)
			}
			err = errors.Join(err, side.s.stop())
			if err == nil {
				side.s, _, err = side.start(ctx)
			}
		}
	}()
	authz := func(s *server, c int) (httpTarget, error) { return s.authzTarget(ctx, c) }
	results, err := measurePeerRows(ctx, cfg, sides, etcd, kind, authz, "peerf", ServerOperations())
	if err != nil {
		return nil, err
	}
	for _, side := range sides {
		if err := checkAudited(filepath.Join(dir, "features", side.name)); err != nil {
			return nil, fmt.Errorf("%s: %w", side.name, err)
		}
	}
	return results, nil
}

// startFeatures starts side again with features on, its audit log in dir, and waits until the
// measured user is allowed and the admission policy refuses what it should.
func startFeatures(ctx context.Context, cfg Config, dir string, side *peerSide, kind objectKind) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("%s with features on: %w", side.name, err)
	}
	args, err := featuresFlags(dir)
	if err != nil {
		return fmt.Errorf("%s with features on: %w", side.name, err)
	}
	if side.name == "apictl" {
		args = append(args, "--authorization-mode", "RBAC")
	}
	if err := side.s.stop(); err != nil {
		return err
	}
	cfg.Logger.Info("starting with features on", "server", side.name)
	s, _, err := side.start(ctx, args...)
	if err != nil {
		return fmt.Errorf("starting %s with features on: %w", side.name, err)
	}
	side.s = s
	admin, err := s.target(ViaHTTP2, seedConcurrency)
	if err != nil {
		return err
	}
	defer admin.client.CloseIdleConnections()
	if side.name == "apictl" {
		if err := grantRecords(ctx, admin); err != nil {
			return fmt.Errorf("apictl: granting the measured user: %w", err)
		}
		if err := createPolicy(ctx, admin, peerVAP); err != nil {
			return fmt.Errorf("apictl: %w", err)
		}
	}
	// In force: it refuses what it should and lets the rest through (a policy the server cannot
	// run refuses everything with the same 422).
	probe := func(labels string) []byte {
		return []byte(`{"apiVersion":"` + scaleGroup + `/v1","kind":"Record","metadata":{"generateName":"vap-probe-","labels":{` + labels + `}},"spec":{"index":0}}`)
	}
	err = retry(ctx, side.name+": the admission policy is not in force", func(ctx context.Context) error {
		path := kind.collection(writeNamespace) + "?dryRun=All"
		if err := admin.do(ctx, http.MethodPost, path, probe(`"`+featuresLabel+`":"deny"`), http.StatusUnprocessableEntity, nil); err != nil {
			return err
		}
		return admin.do(ctx, http.MethodPost, path, probe(`"`+featuresLabel+`":"allow"`), http.StatusCreated, nil)
	})
	if err != nil {
		return err
	}
	h, err := s.authzTarget(ctx, 1)
	if err != nil {
		return err
	}
	defer h.client.CloseIdleConnections()
	return retry(ctx, side.name+": the measured user is still refused", func(ctx context.Context) error {
		return h.do(ctx, http.MethodGet, kind.collection(listNamespace)+"/"+getName, nil, http.StatusOK, nil)
	})
}

// grantRecords gives the measured user every verb on the custom objects in the namespaces the
// operations use.
func grantRecords(ctx context.Context, admin httpTarget) error {
	role := []byte(`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"` + peerRecordsRole + `"},
"rules":[{"apiGroups":["` + scaleGroup + `"],"resources":["` + scalePlural + `"],"verbs":["*"]}]}`)
	if err := createOnce(ctx, admin, "/apis/rbac.authorization.k8s.io/v1/clusterroles", role); err != nil {
		return err
	}
	for _, ns := range []string{listNamespace, writeNamespace} {
		if err := createRoleBindingTo(ctx, admin, ns, peerRecordsRole, peerRecordsRole, authzUser); err != nil {
			return err
		}
	}
	return nil
}

// removePeerPolicy deletes apictl's admission policy and its binding.
func removePeerPolicy(ctx context.Context, s *server) error {
	admin, err := s.target(ViaHTTP2, 1)
	if err != nil {
		return err
	}
	defer admin.client.CloseIdleConnections()
	var errs []error
	for _, o := range peerVAP {
		if err := admin.do(ctx, http.MethodDelete, o.path+"/"+featuresPolicy, nil, http.StatusOK, nil); err != nil {
			errs = append(errs, fmt.Errorf("apictl: removing the admission policy: %w", err))
		}
	}
	return errors.Join(errs...)
}
