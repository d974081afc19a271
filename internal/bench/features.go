package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// The features-on server (issue 17): a server like the compared one, on the same etcd with the same
// objects under its own prefix, with what a shared production control plane runs on every request,
// measured over ViaFeatures against the same etcd targets:
// --authorization-mode RBAC (the client is not in system:masters, whose requests skip the
// authorizers), an audit policy logging every request at Metadata level to a file, one
// ValidatingAdmissionPolicy evaluated on every ConfigMap written, and Secrets encrypted at rest.
const (
	featuresPolicy  = "bench-features"
	featuresLabel   = "bench-vap"
	featuresAuditOf = "audit.log"
)

// featuresAuditPolicy logs every request's metadata: the level most clusters audit at.
const featuresAuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Metadata
`

// featuresEncryption encrypts Secrets with AES-CBC (the key is the bench's own), reading anything
// stored before in plain text.
const featuresEncryption = `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets]
  providers:
  - aescbc:
      keys:
      - name: bench
        secret: YmVuY2gtZmVhdHVyZXMta2V5LTMyLWJ5dGVzLWxvbmc=
  - identity: {}
`

// featuresVAP refuses ConfigMaps labelled bench-vap=deny: none of the measured ones, but its CEL runs
// on every one created or updated.
var featuresVAP = admissionPolicy("", "configmaps")

// admissionPolicy is a ValidatingAdmissionPolicy, and its binding, that refuses the objects of
// group/v1 resource labelled bench-vap=deny. The binding denies.
func admissionPolicy(group, resource string) []struct{ path, body string } {
	return []struct{ path, body string }{
		{"/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies", `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicy",
"metadata":{"name":"` + featuresPolicy + `"},
"spec":{"failurePolicy":"Fail","matchConstraints":{"resourceRules":[{"apiGroups":["` + group + `"],"apiVersions":["v1"],"operations":["CREATE","UPDATE"],"resources":["` + resource + `"]}]},
 "validations":[{"expression":"!has(object.metadata.labels) || !('` + featuresLabel + `' in object.metadata.labels) || object.metadata.labels['` + featuresLabel + `'] != 'deny'","message":"labelled ` + featuresLabel + `=deny"}]}}`},
		{"/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings", `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicyBinding",
"metadata":{"name":"` + featuresPolicy + `"},"spec":{"policyName":"` + featuresPolicy + `","validationActions":["Deny"]}}`},
	}
}

// featuresServer is the features-on server, ready to be measured.
type featuresServer struct {
	s *server
	// scrapeCost is what reading its metrics allocates (server.scrapeCost).
	scrapeCost float64
}

// featuresEtcdPrefix keeps the features-on server's objects apart from the compared server's on the
// same etcd. Sharing them would put its admission policy (and its RBAC objects) on the compared
// server's writes too: its ConfigMap creates then ran the policy's CEL, about 100 allocations more
// each, and the bare measurement was no longer bare.
const featuresEtcdPrefix = "/registry-features"

// newFeaturesServer starts the features-on server on etcdURLs, under its own etcd prefix, with a
// copy of the compared server's PKI (pki), seeds it as the compared server is seeded (listed and
// updated objects), and sets up its policy; the measured user may then use it.
func newFeaturesServer(ctx context.Context, cfg Config, etcdURLs []string, dir, pki string) (_ *featuresServer, err error) {
	dataDir := filepath.Join(dir, "data")
	if err := os.CopyFS(filepath.Join(dataDir, "pki"), os.DirFS(pki)); err != nil {
		return nil, fmt.Errorf("starting the features-on server: sharing the PKI: %w", err)
	}
	flags, err := featuresFlags(dir)
	if err != nil {
		return nil, fmt.Errorf("starting the features-on server: %w", err)
	}
	flags = append(flags, "--authorization-mode", "RBAC", "--etcd-prefix", featuresEtcdPrefix)
	s, _, err := startServer(ctx, cfg.Apictl, dataDir, etcdURLs, 10*time.Millisecond, flags...)
	if err != nil {
		return nil, fmt.Errorf("starting the features-on server: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.stop())
		}
	}()
	if err := seedFeatures(ctx, cfg, s); err != nil {
		return nil, fmt.Errorf("seeding the features-on server: %w", err)
	}
	if err := setUpFeatures(ctx, s); err != nil {
		return nil, fmt.Errorf("setting up the features-on server: %w", err)
	}
	if err := checkAudited(dir); err != nil {
		return nil, err
	}
	f := &featuresServer{s: s}
	if f.scrapeCost, err = s.scrapeCost(ctx); err != nil {
		return nil, err
	}
	return f, nil
}

// seedFeatures gives the features-on server the compared server's seeded objects, and checks its
// LIST holds them.
func seedFeatures(ctx context.Context, cfg Config, s *server) error {
	h, err := s.target(ViaHTTP1, seedConcurrency)
	if err != nil {
		return err
	}
	defer h.client.CloseIdleConnections()
	if err := seed(ctx, h, cfg.ListObjects, cfg.maxConcurrency()); err != nil {
		return err
	}
	return retry(ctx, "the features-on server does not list the seeded objects", func(ctx context.Context) error {
		_, err := checkListed(ctx, h, configMapsPath(listNamespace), cfg.ListObjects)
		return err
	})
}

// featuresFlags writes the audit policy and the encryption configuration into dir and returns the
// flags that turn them on, with the audit log in dir (checkAudited reads it).
func featuresFlags(dir string) ([]string, error) {
	auditPolicy, encryption := filepath.Join(dir, "audit-policy.yaml"), filepath.Join(dir, "encryption.yaml")
	for file, content := range map[string]string{auditPolicy: featuresAuditPolicy, encryption: featuresEncryption} {
		if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
			return nil, err
		}
	}
	return []string{"--audit-policy-file", auditPolicy, "--audit-log-path", filepath.Join(dir, featuresAuditOf),
		"--encryption-provider-config", encryption}, nil
}

// createPolicy creates a ValidatingAdmissionPolicy and its binding (admissionPolicy); ones that
// exist already are fine.
func createPolicy(ctx context.Context, admin httpTarget, policy []struct{ path, body string }) error {
	for _, o := range policy {
		if err := createOnce(ctx, admin, o.path, []byte(o.body)); err != nil {
			return fmt.Errorf("creating the admission policy: %w", err)
		}
	}
	return nil
}

// setUpFeatures grants the measured user what the operations need, creates the admission policy,
// and waits until both are in force.
func setUpFeatures(ctx context.Context, s *server) error {
	admin, err := s.target(ViaHTTP2, seedConcurrency)
	if err != nil {
		return err
	}
	defer admin.client.CloseIdleConnections()
	for _, ns := range []string{listNamespace, writeNamespace} {
		if err := createRoleBinding(ctx, admin, ns, "bench-authz-edit", authzUser); err != nil {
			return fmt.Errorf("granting the measured user: %w", err)
		}
	}
	if err := createPolicy(ctx, admin, featuresVAP); err != nil {
		return err
	}
	if err := waitPolicy(ctx, admin); err != nil {
		return err
	}
	h, err := s.authzTarget(ctx, 1)
	if err != nil {
		return err
	}
	defer h.client.CloseIdleConnections()
	return waitAllowed(ctx, h)
}

// checkAudited fails unless the server's audit log holds entries: that audit is on is part of what
// is measured.
func checkAudited(dir string) error {
	info, err := os.Stat(filepath.Join(dir, featuresAuditOf))
	if err != nil {
		return fmt.Errorf("the features-on server's audit log: %w", err)
	}
	if info.Size() == 0 {
		return errors.New("the features-on server's audit log is empty: audit is not on")
	}
	return nil
}

// waitPolicy waits until the admission policy refuses what it should: then it also runs on what
// the measurement writes.
func waitPolicy(ctx context.Context, admin httpTarget) error {
	body := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"vap-probe-","labels":{"` + featuresLabel + `":"deny"}}}`)
	return retry(ctx, "the admission policy does not refuse a ConfigMap labelled "+featuresLabel+"=deny", func(ctx context.Context) error {
		return admin.do(ctx, http.MethodPost, configMapsPath(writeNamespace)+"?dryRun=All", body, http.StatusUnprocessableEntity, nil)
	})
}
