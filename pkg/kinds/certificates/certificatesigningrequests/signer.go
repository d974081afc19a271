//lint:file-ignore ST1005 the signer's errors are kube's messages, which a refused CSR's Failed condition carries word for word.

// Ported from k8s.io/kubernetes v1.37.2 pkg/controller/certificates/signer/signer.go (the signers,
// their checks and durations), pkg/controller/certificates/authority/policies.go (backdating) and
// pkg/controller/certificates/certificate_controller_utils.go, and
// pkg/apis/certificates/helpers.go (ValidateKubeletServingCSR, ValidateKubeletClientCSR).

package certificatesigningrequests

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	certificatesclient "k8s.io/client-go/kubernetes/typed/certificates/v1"
	certificateslisters "k8s.io/client-go/listers/certificates/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/apictl/apictl/pkg/certs"
	"github.com/apictl/apictl/pkg/kinds"
)

// SigningControllerName is kube-controller-manager's name for its CSR signers.
const SigningControllerName = "certificatesigningrequest-signing-controller"

const (
	// minDuration is the shortest certificate a signer issues, whatever expirationSeconds asks.
	minDuration = 10 * time.Minute
	// backdate and short are kube's: certificates start 5 minutes early against clock skew, and
	// those of 8 hours or more also end 5 minutes early so that their lifetime is what was asked.
	backdate = 5 * time.Minute
	short    = 8 * time.Hour
	// workers sign in parallel, as kube-controller-manager's --concurrent-certificate-signing... does.
	workers = 5
)

// checkFunc is a signer's check of a request it is asked to sign: an error fails the request.
type checkFunc func(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error

// signers are kube's four signers, which the server's CA serves. Any other signerName is left to
// an external signer.
var signers = map[string]checkFunc{
	certificatesv1.KubeAPIServerClientSignerName:        func(_ *x509.CertificateRequest, u []certificatesv1.KeyUsage) error { return apiServerClientUsages(u) },
	certificatesv1.KubeAPIServerClientKubeletSignerName: kubeletClient,
	certificatesv1.KubeletServingSignerName:             kubeletServing,
	legacyUnknownSignerName:                             func(*x509.CertificateRequest, []certificatesv1.KeyUsage) error { return nil },
}

// signingController signs the approved requests of kube's signers.
type signingController struct {
	client   certificatesclient.CertificateSigningRequestsGetter
	informer cache.SharedIndexInformer
	lister   certificateslisters.CertificateSigningRequestLister
	signing  kinds.Signing
	log      *slog.Logger
	now      func() time.Time
}

func newSigningController(c kinds.ControllerContext) (func(ctx context.Context), error) {
	inf := c.Informers.Certificates().V1().CertificateSigningRequests()
	sc := &signingController{client: c.Client.CertificatesV1(), informer: inf.Informer(), lister: inf.Lister(),
		signing: c.Signing, log: c.Logger, now: time.Now}
	if c.Signing.CertFile == "" || c.Signing.KeyFile == "" {
		return func(ctx context.Context) {
			sc.log.Info("no signing CA (--cluster-signing-cert-file, --cluster-signing-key-file): approved requests stay unsigned")
			<-ctx.Done()
		}, nil
	}
	if c.Signing.Duration <= 0 {
		return nil, fmt.Errorf("the signing duration %s is not positive", c.Signing.Duration)
	}
	return sc.run, nil
}

// run signs until ctx ends: each run has a queue of its own, fed by an event handler that the run
// adds and removes, so that a replica that loses and wins the Lease back starts afresh.
func (sc *signingController) run(ctx context.Context) {
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "certificate"})
	enqueue := func(obj any) {
		if csr, ok := obj.(*certificatesv1.CertificateSigningRequest); ok && sc.wants(csr) {
			queue.Add(csr.Name)
		}
	}
	reg, err := sc.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	})
	if err != nil {
		sc.log.Error("watching certificate signing requests", "err", err)
		return
	}
	defer func() { _ = sc.informer.RemoveEventHandler(reg) }()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer queue.ShutDown()
	if !cache.WaitForCacheSync(ctx.Done(), reg.HasSynced) {
		return
	}
	for range workers {
		wg.Go(func() {
			for sc.next(ctx, queue) {
			}
		})
	}
	<-ctx.Done()
}

func (sc *signingController) next(ctx context.Context, queue workqueue.TypedRateLimitingInterface[string]) bool {
	name, quit := queue.Get()
	if quit {
		return false
	}
	defer queue.Done(name)
	if err := sc.sync(ctx, name); err != nil {
		sc.log.Error("signing a certificate signing request", "name", name, "err", err)
		queue.AddRateLimited(name)
		return true
	}
	queue.Forget(name)
	return true
}

// wants reports whether csr is one to sign: approved, not denied, not failed, not signed, of a
// signer the server serves.
func (sc *signingController) wants(csr *certificatesv1.CertificateSigningRequest) bool {
	_, ours := signers[csr.Spec.SignerName]
	return ours && len(csr.Status.Certificate) == 0 && approved(csr) && !hasTrueCondition(csr, certificatesv1.CertificateFailed)
}

func (sc *signingController) sync(ctx context.Context, name string) error {
	cached, err := sc.lister.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !sc.wants(cached) {
		return nil
	}
	csr := cached.DeepCopy()
	if err := sc.sign(csr); err != nil {
		var refused *refusal
		if !errors.As(err, &refused) {
			return err
		}
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateFailed, Status: corev1.ConditionTrue, Reason: "SignerValidationFailure",
			Message: refused.Error(), LastUpdateTime: metav1.NewTime(sc.now()),
		})
	}
	_, err = sc.client.CertificateSigningRequests().UpdateStatus(ctx, csr, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // deleted, or changed: the change comes back through the informer
	}
	if err != nil {
		return fmt.Errorf("writing the status of %s: %w", name, err)
	}
	return nil
}

// refusal is a request the signer will not sign: it fails, rather than being retried.
type refusal struct{ err error }

func (r *refusal) Error() string { return r.err.Error() }

// sign puts the certificate into csr's status, or returns a refusal.
func (sc *signingController) sign(csr *certificatesv1.CertificateSigningRequest) error {
	req, err := ParseCSR(csr.Spec.Request)
	if err != nil {
		return fmt.Errorf("unable to parse csr %q: %w", csr.Name, err)
	}
	if err := signers[csr.Spec.SignerName](req, csr.Spec.Usages); err != nil {
		return &refusal{err}
	}
	// Read at each signing: a CA renewed by apictl certs renew signs at once.
	ca, err := certs.LoadCA(sc.signing.CertFile, sc.signing.KeyFile)
	if err != nil {
		return err
	}
	usages := make([]string, len(csr.Spec.Usages))
	for i, u := range csr.Spec.Usages {
		usages[i] = string(u)
	}
	now := sc.now()
	notBefore, notAfter := validity(now, requestedDuration(csr.Spec.ExpirationSeconds, sc.signing.Duration))
	cert, err := certs.Sign(ca, certs.SignRequest{PEM: csr.Spec.Request, Usages: usages, NotBefore: notBefore, NotAfter: notAfter})
	if err != nil {
		return fmt.Errorf("error auto signing csr: %w", err)
	}
	csr.Status.Certificate = cert
	return nil
}

// requestedDuration is the signer's duration: expirationSeconds within [10 minutes, max].
func requestedDuration(expirationSeconds *int32, maxDuration time.Duration) time.Duration {
	if expirationSeconds == nil {
		return maxDuration
	}
	d := time.Duration(*expirationSeconds) * time.Second
	switch {
	case d > maxDuration:
		return maxDuration
	case d < minDuration:
		return minDuration
	}
	return d
}

// validity is kube's PermissiveSigningPolicy's: backdated 5 minutes; a certificate of 8 hours or
// more ends 5 minutes early so that it lives ttl in all.
func validity(now time.Time, ttl time.Duration) (notBefore, notAfter time.Time) {
	notBefore = now.Add(-backdate)
	if ttl < short {
		return notBefore, now.Add(ttl)
	}
	return notBefore, now.Add(ttl - backdate)
}

func approved(csr *certificatesv1.CertificateSigningRequest) bool {
	return hasCondition(csr, certificatesv1.CertificateApproved) && !hasCondition(csr, certificatesv1.CertificateDenied)
}

// hasTrueCondition is true for a condition of type t whose status is True or empty.
func hasTrueCondition(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == t && (c.Status == "" || c.Status == corev1.ConditionTrue) {
			return true
		}
	}
	return false
}

// apiServerClientUsages is validAPIServerClientUsages: client auth, with digital signature and key
// encipherment allowed.
func apiServerClientUsages(usages []certificatesv1.KeyUsage) error {
	hasClientAuth := false
	for _, u := range usages {
		switch u {
		case certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment:
		case certificatesv1.UsageClientAuth:
			hasClientAuth = true
		default:
			return fmt.Errorf("invalid usage for client certificate: %s", u)
		}
	}
	if !hasClientAuth {
		return fmt.Errorf("missing required usage for client certificate: %s", certificatesv1.UsageClientAuth)
	}
	return nil
}

var (
	kubeletServingUsages      = sets.New(certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageServerAuth)
	kubeletServingUsagesNoRSA = sets.New(certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth)
	kubeletClientUsages       = sets.New(certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth)
	kubeletClientUsagesNoRSA  = sets.New(certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth)
)

// kubeletServing is ValidateKubeletServingCSR.
func kubeletServing(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
	if !reflect.DeepEqual([]string{"system:nodes"}, req.Subject.Organization) {
		return errors.New("subject organization is not system:nodes")
	}
	if len(req.DNSNames) == 0 && len(req.IPAddresses) == 0 {
		return errors.New("DNS or IP subjectAltName is required")
	}
	if len(req.EmailAddresses) > 0 {
		return errors.New("Email subjectAltNames are not allowed") //nolint:staticcheck // kube's message
	}
	if len(req.URIs) > 0 {
		return errors.New("URI subjectAltNames are not allowed") //nolint:staticcheck // kube's message
	}
	if u := sets.New(usages...); !kubeletServingUsages.Equal(u) && !kubeletServingUsagesNoRSA.Equal(u) {
		return fmt.Errorf("usages did not match %v", sets.List(kubeletServingUsages))
	}
	if !strings.HasPrefix(req.Subject.CommonName, "system:node:") {
		return errors.New("subject common name does not begin with system:node:")
	}
	return nil
}

// kubeletClient is ValidateKubeletClientCSR.
func kubeletClient(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
	if !reflect.DeepEqual([]string{"system:nodes"}, req.Subject.Organization) {
		return errors.New("subject organization is not system:nodes")
	}
	switch {
	case len(req.DNSNames) > 0:
		return errors.New("DNS subjectAltNames are not allowed") //nolint:staticcheck // kube's message
	case len(req.EmailAddresses) > 0:
		return errors.New("Email subjectAltNames are not allowed") //nolint:staticcheck // kube's message
	case len(req.IPAddresses) > 0:
		return errors.New("IP subjectAltNames are not allowed") //nolint:staticcheck // kube's message
	case len(req.URIs) > 0:
		return errors.New("URI subjectAltNames are not allowed") //nolint:staticcheck // kube's message
	}
	if !strings.HasPrefix(req.Subject.CommonName, "system:node:") {
		return errors.New("subject common name does not begin with system:node:")
	}
	if u := sets.New(usages...); !kubeletClientUsages.Equal(u) && !kubeletClientUsagesNoRSA.Equal(u) {
		return fmt.Errorf("usages did not match %v", sets.List(kubeletClientUsages))
	}
	return nil
}
