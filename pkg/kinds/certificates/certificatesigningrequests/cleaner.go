// Ported from k8s.io/kubernetes v1.37.2 pkg/controller/certificates/cleaner/cleaner.go.

package certificatesigningrequests

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"log/slog"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	certificatesclient "k8s.io/client-go/kubernetes/typed/certificates/v1"
	certificateslisters "k8s.io/client-go/listers/certificates/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/apictl/apictl/pkg/kinds"
)

// CleanerControllerName is kube-controller-manager's name for the CSR cleaner.
const CleanerControllerName = "certificatesigningrequest-cleaner-controller"

// kube's intervals: a round an hour; an issued, denied or failed request goes an hour after its
// condition, a pending one after a day, and any whose certificate expired.
const (
	cleanInterval      = time.Hour
	approvedExpiration = time.Hour
	deniedExpiration   = time.Hour
	pendingExpiration  = 24 * time.Hour
)

type cleaner struct {
	client   certificatesclient.CertificateSigningRequestsGetter
	informer cache.SharedIndexInformer
	lister   certificateslisters.CertificateSigningRequestLister
	log      *slog.Logger
	now      func() time.Time
}

func newCleaner(c kinds.ControllerContext) (func(ctx context.Context), error) {
	inf := c.Informers.Certificates().V1().CertificateSigningRequests()
	cl := &cleaner{client: c.Client.CertificatesV1(), informer: inf.Informer(), lister: inf.Lister(), log: c.Logger, now: time.Now}
	return cl.run, nil
}

func (cl *cleaner) run(ctx context.Context) {
	if !cache.WaitForCacheSync(ctx.Done(), cl.informer.HasSynced) {
		return
	}
	tick := time.NewTicker(cleanInterval)
	defer tick.Stop()
	for {
		cl.clean(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// clean deletes every request past its time.
func (cl *cleaner) clean(ctx context.Context) {
	csrs, err := cl.lister.List(labels.Everything())
	if err != nil {
		cl.log.Error("listing certificate signing requests", "err", err)
		return
	}
	for _, csr := range csrs {
		if !cl.expired(csr) {
			continue
		}
		err := cl.client.CertificateSigningRequests().Delete(ctx, csr.Name, metav1.DeleteOptions{
			Preconditions: &metav1.Preconditions{UID: &csr.UID}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			cl.log.Error("deleting a certificate signing request", "name", csr.Name, "err", err)
		}
	}
}

// expired is the cleaner's test: issued an hour after approval, denied or failed for an hour,
// pending for a day, approved and unissued for a day, or issued with an expired certificate.
func (cl *cleaner) expired(csr *certificatesv1.CertificateSigningRequest) bool {
	now := cl.now()
	older := func(t metav1.Time, d time.Duration) bool { return !t.IsZero() && now.Sub(t.Time) > d }
	issued := len(csr.Status.Certificate) > 0
	if len(csr.Status.Conditions) == 0 && older(csr.CreationTimestamp, pendingExpiration) {
		return true
	}
	for _, c := range csr.Status.Conditions {
		switch c.Type {
		case certificatesv1.CertificateApproved:
			if issued && (older(c.LastUpdateTime, approvedExpiration) || certificateExpired(csr.Status.Certificate, now)) ||
				!issued && older(c.LastUpdateTime, pendingExpiration) {
				return true
			}
		case certificatesv1.CertificateDenied, certificatesv1.CertificateFailed:
			if older(c.LastUpdateTime, deniedExpiration) {
				return true
			}
		}
	}
	return false
}

func certificateExpired(data []byte, now time.Time) bool {
	block, _ := pem.Decode(data)
	if block == nil {
		return false
	}
	certs, err := x509.ParseCertificates(block.Bytes)
	if err != nil || len(certs) == 0 {
		return false
	}
	return now.After(certs[0].NotAfter)
}
