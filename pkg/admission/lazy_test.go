package admission

import (
	"context"
	"errors"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
)

// built reports whether p's kube plugin exists yet.
func built(t *testing.T, p Plugin) bool {
	t.Helper()
	switch l := p.Interface.(type) {
	case lazyMutating:
		return l.isBuilt()
	case lazyValidating:
		return l.isBuilt()
	}
	t.Fatalf("plugin %s is not built lazily: %T", p.Name, p.Interface)
	return false
}

// TestWebhookPluginsBuiltOnFirstConfiguration: with no webhook configuration the chain builds
// neither webhook plugin (no CEL environments at start); the first request after one appears
// builds the plugin that is configured, and only that one.
func TestWebhookPluginsBuiltOnFirstConfiguration(t *testing.T) {
	e := newChainEnv(t)
	ctx := context.Background()
	attrs := cmAttributes(configMap("ns", "a", nil), false)
	if err := e.chain.Admit(ctx, attrs, &Objects{}); err != nil {
		t.Fatal(err)
	}
	if err := e.chain.Validate(ctx, attrs, &Objects{}); err != nil {
		t.Fatal(err)
	}
	if built(t, e.chain.mutating[0]) || built(t, e.chain.validating[0]) {
		t.Fatal("a webhook plugin was built with no webhook configured")
	}
	if _, err := e.client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx,
		&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "v"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventuallyTrue(t, "the validating plugin to see its configuration", e.chain.validating[0].Configured)
	if err := e.chain.Validate(ctx, attrs, &Objects{}); err != nil {
		t.Fatal(err)
	}
	if !built(t, e.chain.validating[0]) {
		t.Error("the validating webhook plugin was not built by a request it is configured for")
	}
	if built(t, e.chain.mutating[0]) {
		t.Error("the mutating webhook plugin was built with no mutating webhook configured")
	}
}

// TestPolicyPluginsBuiltOnFirstBinding: the policy plugins (the mutating one polls the server's
// OpenAPI once started) are not built while no binding of their kind exists.
func TestPolicyPluginsBuiltOnFirstBinding(t *testing.T) {
	env := newPolicyEnv(t, namespace("mapns", nil), addLabel(), addLabelBinding())
	if built(t, env.mutating) || built(t, env.validating) {
		t.Fatal("a policy plugin was built before any request")
	}
	waitFor(t, "the mutating plugin to count its binding", env.mutating.Configured)
	attrs := createAttributes(configMap("mapns", "m1", nil), configMaps)
	if err := env.mutating.Interface.(admission.MutationInterface).Admit(context.Background(), attrs, objectInterfaces()); err != nil {
		t.Fatal(err)
	}
	if !built(t, env.mutating) {
		t.Error("the mutating policy plugin was not built by its first request")
	}
	if built(t, env.validating) {
		t.Error("the validating policy plugin was built with no binding and no request")
	}
}

// TestLazyRetriesAFailedBuild: a build that fails fails the request and is tried again by the next.
func TestLazyRetriesAFailedBuild(t *testing.T) {
	calls := 0
	l := lazyValidating{newLazy("Test", func() (admission.Interface, error) {
		calls++
		if calls == 1 {
			return nil, errors.New("not yet")
		}
		return admission.NewHandler(admission.Create), nil
	})}
	attrs := cmAttributes(configMap("ns", "a", nil), false)
	if err := l.Validate(context.Background(), attrs, &Objects{}); err == nil || err.Error() != "building admission plugin Test: not yet" {
		t.Fatalf("first request: %v", err)
	}
	if err := l.Validate(context.Background(), attrs, &Objects{}); err != nil || !l.isBuilt() || calls != 2 {
		t.Fatalf("second request: err %v, built %v, builds %d", err, l.isBuilt(), calls)
	}
}
