package rootcacert

import (
	"context"
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// recordingClient records creates and updates; the other methods are not called.
type recordingClient struct {
	corev1client.ConfigMapInterface
	created, updated []*corev1.ConfigMap
}

func (r *recordingClient) Create(_ context.Context, cm *corev1.ConfigMap, _ metav1.CreateOptions) (*corev1.ConfigMap, error) {
	r.created = append(r.created, cm)
	return cm, nil
}

func (r *recordingClient) Update(_ context.Context, cm *corev1.ConfigMap, _ metav1.UpdateOptions) (*corev1.ConfigMap, error) {
	r.updated = append(r.updated, cm)
	return cm, nil
}

func TestReconcile(t *testing.T) {
	const bundle = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
	stored := func(data map[string]string, annotations map[string]string) []byte {
		b, _ := json.Marshal(corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName, Annotations: annotations}, Data: data})
		return b
	}
	for _, tc := range []struct {
		name                 string
		current              []byte
		wantCreate, wantUpdt bool
		wantAnnotation       string
	}{
		{name: "missing", wantCreate: true, wantAnnotation: Description},
		{name: "as it should be", current: stored(map[string]string{DataKey: bundle}, map[string]string{DescriptionAnnotation: Description})},
		{name: "another description is kept", current: stored(map[string]string{DataKey: bundle}, map[string]string{DescriptionAnnotation: "ours"})},
		{name: "tampered data", current: stored(map[string]string{DataKey: "x"}, map[string]string{DescriptionAnnotation: "ours"}), wantUpdt: true, wantAnnotation: Description},
		{name: "extra key", current: stored(map[string]string{DataKey: bundle, "more": "y"}, map[string]string{DescriptionAnnotation: Description}), wantUpdt: true, wantAnnotation: Description},
		{name: "no description", current: stored(map[string]string{DataKey: bundle}, nil), wantUpdt: true, wantAnnotation: Description},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &recordingClient{}
			if err := reconcile(context.Background(), c, "team-a", tc.current, bundle); err != nil {
				t.Fatal(err)
			}
			if (len(c.created) == 1) != tc.wantCreate || (len(c.updated) == 1) != tc.wantUpdt {
				t.Fatalf("created %d, updated %d", len(c.created), len(c.updated))
			}
			for _, cm := range append(c.created, c.updated...) {
				if len(cm.Data) != 1 || cm.Data[DataKey] != bundle || cm.Annotations[DescriptionAnnotation] != tc.wantAnnotation || cm.Name != ConfigMapName {
					t.Errorf("wrote %+v", cm)
				}
			}
		})
	}
}
