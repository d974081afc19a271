package certs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	certificatesclient "k8s.io/client-go/kubernetes/typed/certificates/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// A user is onboarded through the API in two steps, so that the CA key never leaves the server:
// Request makes the user's key here and submits a CertificateSigningRequest for it; once someone
// approves it (kubectl certificate approve NAME) and the server's signer signs, Fetch writes the
// user's kubeconfig with the signed certificate and the key.

// CSRSpec says what Request asks for and where Request and Fetch keep the user's files.
type CSRSpec struct {
	// Name is the user name (the certificate's common name) and the CertificateSigningRequest's.
	Name string
	// Groups are the user's groups (the certificate's organizations).
	Groups []string
	// Kubeconfig is the submitter's kubeconfig: the admin's, or anyone allowed to create
	// CertificateSigningRequests. The user's kubeconfig gets its server and CA.
	Kubeconfig string
	// Dir holds <Name>.key (Request) and <Name>.kubeconfig (Fetch).
	Dir string
	// KubeconfigOut, when set, is where Fetch writes the kubeconfig instead.
	KubeconfigOut string
	// Expiration is the certificate's requested lifetime (spec.expirationSeconds); the server may
	// give less (--cluster-signing-duration). Zero leaves it to the server.
	Expiration   time.Duration
	KeyAlgorithm KeyAlgorithm
	// Wait is how long Fetch waits for the approval and the signature; zero fetches what is there.
	Wait time.Duration
}

// CSRResult is what Request or Fetch did.
type CSRResult struct {
	// Name is the CertificateSigningRequest.
	Name string `json:"name"`
	// KeyFile and KubeconfigFile are the files written.
	KeyFile        string `json:"keyFile,omitempty"`
	KubeconfigFile string `json:"kubeconfigFile,omitempty"`
	// NotAfter is when the signed certificate expires (Fetch).
	NotAfter *time.Time `json:"notAfter,omitempty"`
}

func (s CSRSpec) keyPath() string { return filepath.Join(s.Dir, s.Name+".key") }

func (s CSRSpec) kubeconfigPath() string {
	if s.KubeconfigOut != "" {
		return s.KubeconfigOut
	}
	return filepath.Join(s.Dir, s.Name+kubeconfigExt)
}

// check validates the spec, reporting every problem at once.
func (s CSRSpec) check() (KeyAlgorithm, error) {
	var errs []error
	switch {
	case s.Name == "":
		errs = append(errs, errors.New("give the user's name, such as jane"))
	case len(s.Name) > maxNameLength || !clientName.MatchString(s.Name):
		errs = append(errs, fmt.Errorf("name %q must be 1 to %d letters, digits and . _ @ : - and start with a letter or digit: it is also a file name",
			s.Name, maxNameLength))
	}
	for _, g := range s.Groups {
		switch {
		case g == "":
			errs = append(errs, flagErrorf("groups", "", "has an empty entry: remove the stray comma"))
		case g == AdminGroup:
			errs = append(errs, flagErrorf("groups", g, "is refused by the kube-apiserver-client signer: give the user a RoleBinding instead"))
		case len(g) > maxNameLength:
			errs = append(errs, flagErrorf("groups", g, "is longer than %d characters", maxNameLength))
		}
	}
	if s.Expiration != 0 && s.Expiration < 10*time.Minute {
		errs = append(errs, flagErrorf("expiration", FormatDuration(s.Expiration), "must be at least 10m, the shortest certificate the signer issues"))
	}
	if s.Kubeconfig == "" {
		errs = append(errs, flagErrorf("kubeconfig", "", "is needed: the kubeconfig that submits the request"))
	}
	if s.Wait < 0 {
		errs = append(errs, flagErrorf("wait", s.Wait.String(), "must not be negative"))
	}
	alg, err := keyAlgorithmOrDefault(s.KeyAlgorithm)
	errs = append(errs, err)
	return alg, errors.Join(errs...)
}

// submitter is the submitting kubeconfig, loaded: a client and what the user's kubeconfig copies.
type submitter struct {
	csrs   certificatesclient.CertificateSigningRequestInterface
	server string
	caPEM  []byte
}

func loadSubmitter(path string) (*submitter, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig %s: %w", path, err)
	}
	caPEM := cfg.CAData
	if len(caPEM) == 0 && cfg.CAFile != "" {
		if caPEM, err = os.ReadFile(cfg.CAFile); err != nil {
			return nil, fmt.Errorf("reading the CA of the kubeconfig %s: %w", path, err)
		}
	}
	client, err := certificatesclient.NewForConfig(rest.CopyConfig(cfg))
	if err != nil {
		return nil, fmt.Errorf("building a client from the kubeconfig %s: %w", path, err)
	}
	return &submitter{csrs: client.CertificateSigningRequests(), server: cfg.Host, caPEM: caPEM}, nil
}

// Request makes a key for the user in spec.Dir and submits a CertificateSigningRequest named after
// the user for the kubernetes.io/kube-apiserver-client signer. It refuses to overwrite a key or to
// replace a request of the same name.
func Request(ctx context.Context, spec CSRSpec) (*CSRResult, error) {
	alg, err := spec.check()
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(spec.keyPath()); err == nil {
		return nil, fmt.Errorf("%s exists: the user already has a key here; fetch its certificate with apictl certs fetch %s, or remove the key to start again", spec.keyPath(), spec.Name)
	}
	if err := checkDir(spec.Dir); err != nil {
		return nil, err
	}
	sub, err := loadSubmitter(spec.Kubeconfig)
	if err != nil {
		return nil, err
	}
	return request(ctx, spec, alg, sub.csrs, atomicWriter{})
}

func request(ctx context.Context, spec CSRSpec, alg KeyAlgorithm, csrs certificatesclient.CertificateSigningRequestInterface, w fileWriter) (*CSRResult, error) {
	key, err := generateKey(alg)
	if err != nil {
		return nil, fmt.Errorf("generating the key of %s: %w", spec.Name, err)
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return nil, err
	}
	reqPEM, err := newRequest(key, spec.Name, spec.Groups)
	if err != nil {
		return nil, err
	}
	usages := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}
	if usesKeyEncipherment(key.Public()) {
		usages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth}
	}
	obj := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: spec.Name},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request: reqPEM, SignerName: certificatesv1.KubeAPIServerClientSignerName, Usages: usages,
		},
	}
	if spec.Expiration > 0 {
		obj.Spec.ExpirationSeconds = new(int32(spec.Expiration / time.Second))
	}
	created, err := csrs.Create(ctx, obj, metav1.CreateOptions{})
	switch {
	case apierrors.IsAlreadyExists(err):
		return nil, fmt.Errorf("a certificate signing request %s exists already: delete it (kubectl delete csr %s) or choose another name", spec.Name, spec.Name)
	case err != nil:
		return nil, fmt.Errorf("submitting the certificate signing request %s: %w", spec.Name, err)
	}
	if err := w.writeFile(spec.keyPath(), keyPEM, modeKey); err != nil {
		// Without its key the request is worth nothing: take it back.
		_ = csrs.Delete(context.WithoutCancel(ctx), created.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &created.UID}})
		return nil, fmt.Errorf("writing the key of %s: %w", spec.Name, unwrapPath(err))
	}
	return &CSRResult{Name: created.Name, KeyFile: spec.keyPath()}, nil
}

// Fetch waits up to spec.Wait for the user's request to be approved and signed, checks that the
// certificate is for the key Request made, and writes the user's kubeconfig.
func Fetch(ctx context.Context, spec CSRSpec) (*CSRResult, error) {
	if _, err := spec.check(); err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(spec.keyPath())
	if err != nil {
		return nil, fmt.Errorf("reading the key of %s (made by apictl certs request %s): %w", spec.Name, spec.Name, unwrapPath(err))
	}
	sub, err := loadSubmitter(spec.Kubeconfig)
	if err != nil {
		return nil, err
	}
	return fetch(ctx, spec, keyPEM, sub, atomicWriter{})
}

func fetch(ctx context.Context, spec CSRSpec, keyPEM []byte, sub *submitter, w fileWriter) (*CSRResult, error) {
	key, err := parseKeyPEM(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("reading the key %s: %w", spec.keyPath(), err)
	}
	certPEM, err := waitSigned(ctx, sub.csrs, spec.Name, spec.Wait)
	if err != nil {
		return nil, err
	}
	certs, err := parseCertsPEM(certPEM)
	if err != nil {
		return nil, fmt.Errorf("reading the certificate of %s: %w", spec.Name, err)
	}
	if !publicKeysEqual(certs[0].PublicKey, key.Public()) {
		return nil, fmt.Errorf("the certificate of the request %s is not for the key %s: the request was made with another key; delete it and run apictl certs request again", spec.Name, spec.keyPath())
	}
	data, err := userKubeconfig(sub.server, spec.Name, sub.caPEM, certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	out := spec.kubeconfigPath()
	if err := w.writeFile(out, data, modeKubeconfig); err != nil {
		return nil, fmt.Errorf("writing the kubeconfig of %s: %w", spec.Name, unwrapPath(err))
	}
	notAfter := certs[0].NotAfter
	return &CSRResult{Name: spec.Name, KeyFile: spec.keyPath(), KubeconfigFile: out, NotAfter: &notAfter}, nil
}

// waitSigned returns the request's certificate, watching for it up to wait.
func waitSigned(ctx context.Context, csrs certificatesclient.CertificateSigningRequestInterface, name string, wait time.Duration) ([]byte, error) {
	csr, err := csrs.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("there is no certificate signing request %s: make it with apictl certs request %s (the server deletes issued requests an hour after approval)", name, name)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the certificate signing request %s: %w", name, err)
	}
	if done, cert, err := signedState(csr); done || err != nil {
		return cert, err
	}
	if wait == 0 {
		return nil, pendingError(csr)
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	wi, err := csrs.Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String(), ResourceVersion: csr.ResourceVersion})
	if err != nil {
		return nil, fmt.Errorf("watching the certificate signing request %s: %w", name, err)
	}
	defer wi.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("after %s: %w", wait, pendingError(csr))
		case ev, ok := <-wi.ResultChan():
			if !ok {
				return nil, fmt.Errorf("the watch of the certificate signing request %s ended: run apictl certs fetch %s again", name, name)
			}
			switch ev.Type {
			case watch.Deleted:
				return nil, fmt.Errorf("the certificate signing request %s was deleted", name)
			case watch.Added, watch.Modified:
				if c, ok := ev.Object.(*certificatesv1.CertificateSigningRequest); ok {
					csr = c
					if done, cert, err := signedState(csr); done || err != nil {
						return cert, err
					}
				}
			}
		}
	}
}

// signedState says whether csr is finished: signed (with its certificate) or refused (an error).
func signedState(csr *certificatesv1.CertificateSigningRequest) (bool, []byte, error) {
	for _, c := range csr.Status.Conditions {
		switch c.Type {
		case certificatesv1.CertificateDenied:
			return true, nil, fmt.Errorf("the certificate signing request %s was denied: %s %s", csr.Name, c.Reason, c.Message)
		case certificatesv1.CertificateFailed:
			return true, nil, fmt.Errorf("the signer refused the certificate signing request %s: %s %s", csr.Name, c.Reason, c.Message)
		}
	}
	if len(csr.Status.Certificate) > 0 {
		return true, csr.Status.Certificate, nil
	}
	return false, nil, nil
}

func pendingError(csr *certificatesv1.CertificateSigningRequest) error {
	if slices.ContainsFunc(csr.Status.Conditions, func(c certificatesv1.CertificateSigningRequestCondition) bool {
		return c.Type == certificatesv1.CertificateApproved
	}) {
		return fmt.Errorf("the certificate signing request %s is approved but not signed yet: is the server's signer on (--controllers, --cluster-signing-cert-file)? Wait with --wait", csr.Name)
	}
	return fmt.Errorf("the certificate signing request %s is not approved yet: approve it with kubectl certificate approve %s, or wait with --wait", csr.Name, csr.Name)
}

// userKubeconfig is a kubeconfig for the user's certificate, with the submitter's server and CA.
func userKubeconfig(server, user string, caPEM, certPEM, keyPEM []byte) ([]byte, error) {
	if _, err := parseCertsPEM(caPEM); len(caPEM) > 0 && err != nil {
		return nil, fmt.Errorf("reading the CA of the submitting kubeconfig: %w", err)
	}
	name := user + "@" + kubeconfigCluster
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[kubeconfigCluster] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: kubeconfigCluster, AuthInfo: user}
	cfg.CurrentContext = name
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("writing the kubeconfig of %s: %w", user, err)
	}
	return data, nil
}
