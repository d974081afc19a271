package certificatesigningrequests

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/apictl/apictl/internal/golden"
)

// probeRequest is a valid PEM request (CN probe, P-256), made for these tests.
const probeRequest = "-----BEGIN CERTIFICATE REQUEST-----\nMIHJMHICAQAwEDEOMAwGA1UEAwwFcHJvYmUwWTATBgcqhkjOPQIBBggqhkjOPQMB\nBwNCAAQpRFq9W3aA0qkqJNtnCu8qeKR9zqZH+YoUq7LLfrhAH8xM6qoqeXUcQMgg\ntaVFxOs/5+W49hXW7/EPIEXOd4HSoAAwCgYIKoZIzj0EAwIDRwAwRAIgaVQNw4hf\nwiJqCYrX6P4ATN/kq2YHg0EJAuGWO0iwLiICIBQDRW/86oESjo/YGJuMoKwA7mYz\nSsUdCDxE2WmANQ7m\n-----END CERTIFICATE REQUEST-----\n"

func csr(mod func(*certificatesv1.CertificateSigningRequest)) *certificatesv1.CertificateSigningRequest {
	c := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "c"},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: []byte(probeRequest), SignerName: "example.com/s",
			Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth}},
	}
	if mod != nil {
		mod(c)
	}
	return c
}

func cond(t certificatesv1.RequestConditionType) certificatesv1.CertificateSigningRequestCondition {
	return certificatesv1.CertificateSigningRequestCondition{Type: t, Status: corev1.ConditionTrue}
}

// TestValidation writes each case's errors, as kube words them, to testdata/validation.txt.
func TestValidation(t *testing.T) {
	s := strategy{now: time.Now}
	var b strings.Builder
	for _, tc := range []struct {
		name string
		errs func() []string
	}{
		{"valid", func() []string { return errStrings(s.Validate(csr(nil))) }},
		{"legacy signer, short duration, bad usages, no request", func() []string {
			return errStrings(s.Validate(csr(func(c *certificatesv1.CertificateSigningRequest) {
				c.Spec.SignerName, c.Spec.ExpirationSeconds, c.Spec.Request = legacyUnknownSignerName, new(int32(60)), []byte("x")
				c.Spec.Usages = []certificatesv1.KeyUsage{"client auth", "client auth", "flying"}
			})))
		}},
		{"signer without a path", func() []string {
			return errStrings(s.Validate(csr(func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = "example" })))
		}},
		{"approval adds Approved and Denied", func() []string {
			return errStrings(s.ValidateSubresourceUpdate(approval, csr(func(c *certificatesv1.CertificateSigningRequest) {
				c.Status.Conditions = append(c.Status.Conditions, cond(certificatesv1.CertificateApproved), cond(certificatesv1.CertificateDenied))
			}), csr(nil)))
		}},
		{"status adds Approved", func() []string {
			return errStrings(s.ValidateStatusUpdate(csr(func(c *certificatesv1.CertificateSigningRequest) {
				c.Status.Conditions = append(c.Status.Conditions, cond(certificatesv1.CertificateApproved))
			}), csr(nil)))
		}},
		{"approval sets a certificate", func() []string {
			return errStrings(s.ValidateSubresourceUpdate(approval, csr(func(c *certificatesv1.CertificateSigningRequest) { c.Status.Certificate = []byte("x") }), csr(nil)))
		}},
		{"a stored legacy signer stays valid", func() []string {
			legacy := csr(func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = legacyUnknownSignerName })
			return errStrings(s.ValidateUpdate(legacy, legacy))
		}},
	} {
		fmt.Fprintf(&b, "%s:\n", tc.name)
		for _, e := range tc.errs() {
			fmt.Fprintf(&b, "  %s\n", e)
		}
	}
	golden.Check(t, "validation.txt", b.String())
}

func errStrings[T interface{ Error() string }](errs []T) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Error()
	}
	return out
}

func TestStrategies(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := strategy{now: func() time.Time { return now }}

	created := csr(func(c *certificatesv1.CertificateSigningRequest) {
		c.Spec.Username, c.Spec.Groups = "mallory", []string{"system:masters"}
		c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{cond(certificatesv1.CertificateApproved)}
	})
	s.PrepareForCreate(created)
	s.PrepareForCreateBy(created, &user.DefaultInfo{Name: "bob", UID: "u1", Groups: []string{"devs"}, Extra: map[string][]string{"k": {"v"}}})
	if created.Spec.Username != "bob" || created.Spec.UID != "u1" || created.Spec.Groups[0] != "devs" || created.Spec.Extra["k"][0] != "v" || len(created.Status.Conditions) != 0 {
		t.Errorf("create kept what the client sent: %+v", created)
	}

	old := csr(nil)
	upd := csr(func(c *certificatesv1.CertificateSigningRequest) {
		c.Spec.SignerName = "example.com/other"
		c.Labels = map[string]string{"a": "b"}
		c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{cond(certificatesv1.CertificateApproved)}
	})
	s.PrepareForUpdate(upd, old)
	if upd.Spec.SignerName != "example.com/s" || len(upd.Status.Conditions) != 0 || upd.Labels["a"] != "b" {
		t.Errorf("an update of the main resource changed spec or status, or lost labels: %+v", upd)
	}

	appr := s.PrepareForSubresourceUpdate(approval, csr(func(c *certificatesv1.CertificateSigningRequest) {
		c.Status.Certificate = []byte("x")
		c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{cond(certificatesv1.CertificateApproved)}
	}), old).(*certificatesv1.CertificateSigningRequest)
	if len(appr.Status.Certificate) != 0 || len(appr.Status.Conditions) != 1 || !appr.Status.Conditions[0].LastUpdateTime.Time.Equal(now) {
		t.Errorf("approval: %+v", appr.Status)
	}

	approvedOld := csr(func(c *certificatesv1.CertificateSigningRequest) {
		c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "kept"}}
	})
	st := s.PrepareForStatusUpdate(csr(func(c *certificatesv1.CertificateSigningRequest) {
		c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "changed"}}
		c.Status.Certificate = []byte("cert")
	}), approvedOld).(*certificatesv1.CertificateSigningRequest)
	if st.Status.Conditions[0].Reason != "kept" || string(st.Status.Certificate) != "cert" {
		t.Errorf("status kept the Approved condition as stored and took the certificate: %+v", st.Status)
	}
}

func TestSignerDurations(t *testing.T) {
	year := 365 * 24 * time.Hour
	for _, tc := range []struct {
		seconds *int32
		max     time.Duration
		want    time.Duration
	}{
		{nil, year, year},
		{new(int32(3600)), year, time.Hour},
		{new(int32(60)), year, 10 * time.Minute},
		{new(int32(3600)), 30 * time.Minute, 30 * time.Minute},
	} {
		if got := requestedDuration(tc.seconds, tc.max); got != tc.want {
			t.Errorf("requestedDuration(%v, %s) = %s, want %s", tc.seconds, tc.max, got, tc.want)
		}
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if nb, na := validity(now, time.Hour); !nb.Equal(now.Add(-5*time.Minute)) || !na.Equal(now.Add(time.Hour)) {
		t.Errorf("validity of an hour: %s to %s", nb, na)
	}
	if nb, na := validity(now, year); na.Sub(nb) != year {
		t.Errorf("validity of a year lasts %s", na.Sub(nb))
	}
	if err := apiServerClientUsages([]certificatesv1.KeyUsage{certificatesv1.UsageServerAuth}); err == nil {
		t.Error("the kube-apiserver-client signer accepted server auth")
	}
	if err := apiServerClientUsages([]certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}); err != nil {
		t.Error(err)
	}
}

// allowOnly allows verb on the signer resource named name, nothing else.
func allowOnly(verb, name string) authorizer.Authorizer {
	return authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		if a.GetVerb() == verb && a.GetResource() == "signers" && a.GetName() == name && a.GetAPIGroup() == "certificates.k8s.io" {
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionNoOpinion, "", nil
	})
}

func TestAdmission(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: "certificates.k8s.io", Version: "v1", Resource: "certificatesigningrequests"}
	attrs := func(op admission.Operation, sub string, obj, old runtime.Object) admission.Attributes {
		return admission.NewAttributesRecord(obj, old, schema.GroupVersionKind{}, "", "c", gvr, sub, op, nil, false, &user.DefaultInfo{Name: "approver"})
	}
	approved := csr(func(c *certificatesv1.CertificateSigningRequest) {
		c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{cond(certificatesv1.CertificateApproved)}
	})
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		err   error
		allow bool
	}{
		{"approve, allowed by name", admitApproval(ctx, attrs(admission.Update, approval, approved, csr(nil)), allowOnly("approve", "example.com/s")), true},
		{"approve, allowed by domain", admitApproval(ctx, attrs(admission.Update, approval, approved, csr(nil)), allowOnly("approve", "example.com/*")), true},
		{"approve, not allowed", admitApproval(ctx, attrs(admission.Update, approval, approved, csr(nil)), allowOnly("sign", "example.com/s")), false},
		{"sign, not allowed", admitSigning(ctx, attrs(admission.Update, "status", csr(func(c *certificatesv1.CertificateSigningRequest) { c.Status.Certificate = []byte("x") }), csr(nil)), allowOnly("approve", "example.com/s")), false},
		{"status without change", admitSigning(ctx, attrs(admission.Update, "status", csr(nil), csr(nil)), allowOnly("", "")), true},
	} {
		if (tc.err == nil) != tc.allow {
			t.Errorf("%s: %v", tc.name, tc.err)
		}
	}
}
