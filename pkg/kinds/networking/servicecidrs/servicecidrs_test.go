package servicecidrs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The files under testdata/want are what kube-apiserver v1.37.2 answered to a dry-run POST of the
// file of the same name under testdata/in, recorded with the reference server (../shared/reference).

func TestCreateAsKube(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join("testdata", "in"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Run(strings.TrimSuffix(e.Name(), ".json"), func(t *testing.T) {
			var in, want networkingv1.ServiceCIDR
			var status struct{ Kind, Message string }
			read(t, filepath.Join("testdata", "in", e.Name()), &in)
			read(t, filepath.Join("testdata", "want", e.Name()), &status)
			s := strategy{}
			s.PrepareForCreate(&in)
			var errs field.ErrorList
			for _, msg := range apivalidation.NameIsDNSSubdomain(in.Name, false) {
				errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), in.Name, msg))
			}
			errs = append(errs, s.Validate(&in)...)
			if status.Kind == "Status" {
				got := ""
				if len(errs) > 0 {
					got = apierrors.NewInvalid(Kind().GroupVersionKind().GroupKind(), in.Name, errs).Error()
				}
				if got != status.Message {
					t.Errorf("got  %s\nwant %s", got, status.Message)
				}
				return
			}
			read(t, filepath.Join("testdata", "want", e.Name()), &want)
			if len(errs) > 0 || !equality.Semantic.DeepEqual(in.Spec, want.Spec) || !equality.Semantic.DeepEqual(in.Status, want.Status) {
				t.Errorf("errors %v, spec %+v status %+v; kube stored spec %+v status %+v", errs, in.Spec, in.Status, want.Spec, want.Status)
			}
		})
	}
}

func read(t *testing.T, path string, into any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestUpdate: the CIDRs are immutable, but a single-stack ServiceCIDR may become dual-stack; status
// comes only through the status subresource.
func TestUpdate(t *testing.T) {
	cidr := func(cidrs ...string) *networkingv1.ServiceCIDR {
		return &networkingv1.ServiceCIDR{Spec: networkingv1.ServiceCIDRSpec{CIDRs: cidrs}}
	}
	for _, tc := range []struct {
		name     string
		old, new *networkingv1.ServiceCIDR
		want     string
	}{
		{"same", cidr("10.0.0.0/24"), cidr("10.0.0.0/24"), ""},
		{"to dual-stack", cidr("10.0.0.0/24"), cidr("10.0.0.0/24", "fd00::/64"), ""},
		{"changed", cidr("10.0.0.0/24"), cidr("10.1.0.0/24"), `spec.cidrs[0]: Invalid value: "10.1.0.0/24": field is immutable`},
		{"dual-stack of one family", cidr("10.0.0.0/24"), cidr("10.0.0.0/24", "10.1.0.0/24"), "may specify no more than one IP for each IP family"},
		{"shrunk", cidr("10.0.0.0/24", "fd00::/64"), cidr("10.0.0.0/24"), `spec.cidrs: Invalid value: ["10.0.0.0/24"]: field is immutable`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := strategy{}.ValidateUpdate(tc.new, tc.old).ToAggregate()
			switch {
			case tc.want == "" && got != nil:
				t.Errorf("refused: %v", got)
			case tc.want != "" && (got == nil || !strings.Contains(got.Error(), tc.want)):
				t.Errorf("got %v, want %q", got, tc.want)
			}
		})
	}
	old := cidr("10.0.0.0/24")
	old.Status.Conditions = nil
	next := cidr("10.0.0.0/24")
	next.Status.Conditions = append(next.Status.Conditions, readyTrue())
	strategy{}.PrepareForUpdate(next, old)
	if len(next.Status.Conditions) != 0 {
		t.Error("an update of the main resource changed status")
	}
	stored := strategy{}.PrepareForStatusUpdate(&networkingv1.ServiceCIDR{Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.9.0.0/24"}},
		Status: networkingv1.ServiceCIDRStatus{Conditions: append(next.Status.Conditions, readyTrue())}}, old).(*networkingv1.ServiceCIDR)
	if stored.Spec.CIDRs[0] != "10.0.0.0/24" || len(stored.Status.Conditions) != 1 {
		t.Errorf("a status write stored %+v", stored)
	}
}

func readyTrue() metav1.Condition {
	return metav1.Condition{Type: networkingv1.ServiceCIDRConditionReady, Status: metav1.ConditionTrue}
}
