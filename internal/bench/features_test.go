package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiserverv1 "k8s.io/apiserver/pkg/apis/apiserver/v1"
	"sigs.k8s.io/yaml"
)

// TestFeaturesManifests decodes the features-on server's policy objects strictly, so that a typo
// fails here rather than the bench's setup, and checks that the encryption key is AES-CBC's size.
func TestFeaturesManifests(t *testing.T) {
	var policy admissionregistrationv1.ValidatingAdmissionPolicy
	var binding admissionregistrationv1.ValidatingAdmissionPolicyBinding
	for i, into := range []any{&policy, &binding} {
		dec := json.NewDecoder(strings.NewReader(featuresVAP[i].body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(into); err != nil {
			t.Fatalf("%s: %v", featuresVAP[i].path, err)
		}
	}
	if binding.Spec.PolicyName != policy.Name || len(policy.Spec.Validations) != 1 {
		t.Errorf("binding %q for policy %q with %d validations", binding.Spec.PolicyName, policy.Name, len(policy.Spec.Validations))
	}
	var enc apiserverv1.EncryptionConfiguration
	if err := yaml.UnmarshalStrict([]byte(featuresEncryption), &enc); err != nil {
		t.Fatal(err)
	}
	if key := enc.Resources[0].Providers[0].AESCBC.Keys[0].Secret; len(key) != 44 {
		t.Errorf("AES-CBC key %q: want 32 bytes in base64", key)
	}
}

func TestCheckAudited(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, content string
		write         bool
		wantErr       string
	}{
		{name: "no log", wantErr: "no such file"},
		{name: "empty log", write: true, wantErr: "audit is not on"},
		{name: "entries", write: true, content: `{"kind":"Event"}` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.write {
				if err := os.WriteFile(filepath.Join(dir, featuresAuditOf), []byte(tc.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			err := checkAudited(dir)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("checkAudited = %v, want %q", err, tc.wantErr)
			}
		})
	}
}
