// Package serviceaccounts gives every active namespace a "default" ServiceAccount, and puts it back
// when it is deleted, as kube-controller-manager's serviceaccount controller does.
package serviceaccounts

import (
	"context"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/apictl/apictl/pkg/controllers/namespacedefault"
	"github.com/apictl/apictl/pkg/storage"
)

// DefaultName is the ServiceAccount every namespace gets.
const DefaultName = "default"

// New returns the controller: it watches namespaces and serviceaccounts (watch caches) and creates
// through client.
func New(namespaces, serviceAccounts storage.Store, client corev1client.ServiceAccountsGetter, log *slog.Logger) *namespacedefault.Controller {
	return namespacedefault.New(namespacedefault.Config{
		Namespaces: namespaces, Objects: serviceAccounts, Resource: "serviceaccounts", Name: DefaultName,
		Logger: log.With("component", "serviceaccount-controller"),
		Reconcile: func(ctx context.Context, ns string, current []byte) error {
			if current != nil {
				return nil
			}
			sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: DefaultName}}
			_, err := client.ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{})
			switch {
			case err == nil, apierrors.IsAlreadyExists(err):
				return nil
			case apierrors.IsForbidden(err) || apierrors.IsNotFound(err):
				return nil // the namespace is terminating or gone: its next state decides
			}
			return fmt.Errorf("creating serviceaccount %s/%s: %w", ns, DefaultName, err)
		},
	})
}
