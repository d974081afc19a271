package admission

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// mapperResetInterval bounds how often a missing paramKind makes the mapper read discovery again:
// the policy source retries a policy whose paramKind it cannot map every second.
const mapperResetInterval = 5 * time.Second

// resettingMapper resets a discovery-backed mapper when it does not know a kind, so that a policy
// whose paramKind is a CRD created after the mapper last read discovery starts working within
// mapperResetInterval. kube resets its deferred mapper every 30 s instead (the
// start-apiserver-admission-initializer hook); reading on a miss needs no goroutine and is sooner.
type resettingMapper struct {
	meta.ResettableRESTMapper
	interval time.Duration
	now      func() time.Time

	mu        sync.Mutex
	lastReset time.Time
}

func newResettingMapper(m meta.ResettableRESTMapper, interval time.Duration) *resettingMapper {
	return &resettingMapper{ResettableRESTMapper: m, interval: interval, now: time.Now}
}

// RESTMapping maps gk, reading discovery again once if the mapper does not know it.
func (m *resettingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	mapping, err := m.ResettableRESTMapper.RESTMapping(gk, versions...)
	if err == nil || !meta.IsNoMatchError(err) || !m.mayReset() {
		return mapping, err
	}
	m.Reset()
	return m.ResettableRESTMapper.RESTMapping(gk, versions...)
}

// mayReset reports whether interval has passed since the last reset, and if so counts one now.
func (m *resettingMapper) mayReset() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if !m.lastReset.IsZero() && now.Sub(m.lastReset) < m.interval {
		return false
	}
	m.lastReset = now
	return true
}
