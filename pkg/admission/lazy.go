package admission

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apiserver/pkg/admission"
	"k8s.io/client-go/tools/cache"

	"github.com/apictl/apictl/pkg/controllers/synced"
)

// lazy builds one of kube's plugins the first time a request needs it, that is once its Plugin is
// Configured. Building is what costs: the webhook plugins compile their CEL environments, the policy
// plugins start their sources and dispatchers (the mutating one polls the server's /openapi/v3 every
// 5 s, which makes the server build its OpenAPI). A server with no webhook or policy configured, the
// common case, pays none of it at start or at idle. A build that fails is tried again by the next
// request, which gets the error meanwhile.
type lazy struct {
	name  string
	build func() (admission.Interface, error)

	mu    sync.Mutex
	built admission.Interface
}

func newLazy(name string, build func() (admission.Interface, error)) *lazy {
	return &lazy{name: name, build: build}
}

// plugin returns the built plugin, building it now if it is not yet.
func (l *lazy) plugin() (admission.Interface, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.built != nil {
		return l.built, nil
	}
	p, err := l.build()
	if err != nil {
		return nil, fmt.Errorf("building admission plugin %s: %w", l.name, err)
	}
	l.built = p
	return p, nil
}

// isBuilt reports whether a request has built the plugin yet.
func (l *lazy) isBuilt() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.built != nil
}

// Handles says yes to every operation: the built plugin answers for itself once it exists.
func (l *lazy) Handles(admission.Operation) bool { return true }

// lazyMutating is a lazily built mutating plugin.
type lazyMutating struct{ *lazy }

var _ admission.MutationInterface = lazyMutating{}

// Admit builds the plugin if needed and lets it admit a when it handles a's operation.
func (l lazyMutating) Admit(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	p, err := l.plugin()
	if err != nil {
		return err
	}
	m, ok := p.(admission.MutationInterface)
	if !ok || !p.Handles(a.GetOperation()) {
		return nil
	}
	return m.Admit(ctx, a, o)
}

// lazyValidating is a lazily built validating plugin.
type lazyValidating struct{ *lazy }

var _ admission.ValidationInterface = lazyValidating{}

// Validate builds the plugin if needed and lets it validate a when it handles a's operation.
func (l lazyValidating) Validate(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	p, err := l.plugin()
	if err != nil {
		return err
	}
	v, ok := p.(admission.ValidationInterface)
	if !ok || !p.Handles(a.GetOperation()) {
		return nil
	}
	return v.Validate(ctx, a, o)
}

// syncWait bounds that wait, as kube's plugins bound theirs (10 s); after it the plugin answers
// for itself ("not yet ready to handle request").
const syncWait = 10 * time.Second

// startInformers starts the informers of c.Informers that are not running yet and waits until
// those given have listed, for at most syncWait or until c.Drained closes. A plugin built by a
// request would otherwise poll for them itself, every 100 ms; synced.Wait looks every millisecond.
func startInformers(c Config, wait ...cache.SharedIndexInformer) error {
	c.Informers.Start(c.Drained)
	ctx, cancel := context.WithTimeout(context.Background(), syncWait)
	defer cancel()
	go func() {
		select {
		case <-c.Drained:
			cancel()
		case <-ctx.Done():
		}
	}()
	fns := make([]cache.InformerSynced, len(wait))
	for i, inf := range wait {
		fns[i] = inf.HasSynced
	}
	if synced.Wait(ctx, fns...) {
		return nil
	}
	select {
	case <-c.Drained:
		return errors.New("the server stopped before the admission plugin's informers listed")
	default:
		return nil // past syncWait: the plugin answers for itself
	}
}
