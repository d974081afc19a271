// Package rootcacert publishes the CA bundle clients verify the API server with as the ConfigMap
// kube-root-ca.crt (key ca.crt) in every active namespace, and keeps it so when it is changed or
// deleted, as kube-controller-manager's root-ca-cert-publisher does.
package rootcacert

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/apictl/apictl/pkg/controllers/namespacedefault"
	"github.com/apictl/apictl/pkg/storage"
)

// Kube's names and description (pkg/controller/certificates/rootcacertpublisher).
const (
	ConfigMapName         = "kube-root-ca.crt"
	DataKey               = "ca.crt"
	DescriptionAnnotation = "kubernetes.io/description"
	Description           = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. " +
		"No other usage is guaranteed across distributions of Kubernetes clusters."
)

// New returns the controller for the PEM bundle rootCA: it watches namespaces and configmaps
// (watch caches) and writes through client.
func New(namespaces, configMaps storage.Store, client corev1client.ConfigMapsGetter, rootCA []byte, log *slog.Logger) *namespacedefault.Controller {
	return namespacedefault.New(namespacedefault.Config{
		Namespaces: namespaces, Objects: configMaps, Resource: "configmaps", Name: ConfigMapName,
		Logger: log.With("component", "root-ca-cert-publisher"),
		Reconcile: func(ctx context.Context, ns string, current []byte) error {
			return reconcile(ctx, client.ConfigMaps(ns), ns, current, string(rootCA))
		},
	})
}

func reconcile(ctx context.Context, client corev1client.ConfigMapInterface, ns string, current []byte, bundle string) error {
	data := map[string]string{DataKey: bundle}
	if current == nil {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName, Annotations: map[string]string{DescriptionAnnotation: Description}},
			Data:       data,
		}
		_, err := client.Create(ctx, cm, metav1.CreateOptions{})
		switch {
		case err == nil, apierrors.IsAlreadyExists(err):
			return nil
		case apierrors.IsForbidden(err) || apierrors.IsNotFound(err):
			return nil // the namespace is terminating or gone
		}
		return fmt.Errorf("creating configmap %s/%s: %w", ns, ConfigMapName, err)
	}
	var cm corev1.ConfigMap
	if err := json.Unmarshal(current, &cm); err != nil {
		return fmt.Errorf("decoding configmap %s/%s: %w", ns, ConfigMapName, err)
	}
	// As kube: the data must be exactly the bundle and the description present (any text).
	if len(cm.Data) == 1 && cm.Data[DataKey] == bundle && cm.Annotations[DescriptionAnnotation] != "" {
		return nil
	}
	cm.Data = data
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[DescriptionAnnotation] = Description
	_, err := client.Update(ctx, &cm, metav1.UpdateOptions{})
	if err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
		return fmt.Errorf("updating configmap %s/%s: %w", ns, ConfigMapName, err)
	}
	return nil // a conflict or a delete brings the next version through the watch
}
