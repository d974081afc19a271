package apiserver

import (
	"context"
	"fmt"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiserverstorage "k8s.io/apiserver/pkg/storage"
	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"
	fcmetrics "k8s.io/apiserver/pkg/util/flowcontrol/metrics"
	flowcontrolrequest "k8s.io/apiserver/pkg/util/flowcontrol/request"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/apictl/apictl/pkg/kinds/flowcontrol/ensurer"
	"github.com/apictl/apictl/pkg/serve/filters"
	"github.com/apictl/apictl/pkg/storage/cacher"
)

// addPriorityAndFairness runs API Priority and Fairness as kube-apiserver does, when the flowcontrol
// API is served:
//   - the priority-and-fairness-config-producer hook keeps the bootstrap FlowSchemas and priority
//     levels (pkg/kinds/flowcontrol/ensurer), on every replica;
//   - with --enable-priority-and-fairness, k8s.io/apiserver's config controller (the
//     priority-and-fairness-config-consumer hook) follows them through the informers and writes their
//     status, and its filter takes the place of the max-in-flight limit, with the limits' sum as the
//     server's concurrency to share out. A LIST is charged by the objects its watch cache holds.
//
// Its metrics (apiserver_flowcontrol_*) live in component-base's global registry, where the library
// registers them; /metrics serves them from there.
func (a *assembly) addPriorityAndFairness() error {
	s, cfg, cl, caches, bg := a.server, a.cfg, a.cl, a.caches, &a.bg
	if _, ok := cfg.API.Resource(flowcontrolv1.GroupName, "v1", "flowschemas"); !ok {
		return nil // flags refuse --enable-priority-and-fairness without the API
	}
	fsInformer := cl.informers.Flowcontrol().V1().FlowSchemas()
	plInformer := cl.informers.Flowcontrol().V1().PriorityLevelConfigurations()
	e := &ensurer.Ensurer{
		Client:         cl.kube.FlowcontrolV1(),
		FlowSchemas:    fsInformer.Lister(),
		PriorityLevels: plInformer.Lister(),
		Logger:         cfg.Logger.With("component", "apf-bootstrap"),
	}
	synced := []cache.InformerSynced{fsInformer.Informer().HasSynced, plInformer.Informer().HasSynced}
	if err := s.AddPostStartHook(ensurer.HookName, func(ctx context.Context) error {
		if !cache.WaitForCacheSync(ctx.Done(), synced...) {
			return fmt.Errorf("APF bootstrap ensurer: waiting for the FlowSchema and PriorityLevelConfiguration informers: %w", ctx.Err())
		}
		if err := e.Initialize(ctx); err != nil {
			return err
		}
		bg.goRun(func() { e.Keep(ctx) })
		return nil
	}); err != nil {
		return err
	}
	if !cfg.EnablePriorityAndFairness {
		return nil
	}
	// The metrics are registered before the controller makes its first priority levels: a gauge made
	// before registration looks its vector member up on every change, for the life of the level
	// (TimingRatioHistogramVec.NewForLabelValuesSafe), about a tenth of APF's cost per request.
	fcmetrics.Register()
	fc := utilflowcontrol.New(cl.informers, cl.kube.FlowcontrolV1(), cfg.MaxRequestsInFlight+cfg.MaxMutatingRequestsInFlight)
	s.AddMetrics(flowcontrolMetrics{})
	estimate := flowcontrolrequest.NewWorkEstimator(caches.objectStats, fc.GetInterestedWatchCount,
		flowcontrolrequest.DefaultWorkEstimatorConfig(), fc.GetMaxSeats)
	apf := filters.NewPriorityAndFairness(fc, estimate, cfg.RequestTimeout/4, s.RequestMetrics())
	if err := s.SetRequestLimit(apf.Wrap); err != nil {
		return err
	}
	if err := s.AddPostStartHook("priority-and-fairness-config-consumer", func(ctx context.Context) error {
		bg.goRun(func() { _ = fc.Run(ctx.Done()) }) // Run fails only when the informers never sync, as the server stops
		return nil
	}); err != nil {
		return err
	}
	return s.AddPostStartHook("priority-and-fairness-filter", func(ctx context.Context) error {
		bg.goRun(func() { apf.Run(ctx) })
		return nil
	})
}

// flowcontrolMetrics gathers the apiserver_flowcontrol_* families of component-base's registry: the
// rest of what is registered there is not apictl's to serve (and some of its names are).
type flowcontrolMetrics struct{}

func (flowcontrolMetrics) Gather() ([]*dto.MetricFamily, error) {
	all, err := legacyregistry.DefaultGatherer.Gather()
	out := all[:0]
	for _, f := range all {
		if strings.HasPrefix(f.GetName(), "apiserver_flowcontrol_") {
			out = append(out, f)
		}
	}
	return out, err
}

var _ prometheus.Gatherer = flowcontrolMetrics{}

// storedBytes is what the memory budget charges a LIST of a resource by (filters.MemoryBudget): the
// bytes its watch cache holds, the figure objectStats shares out for APF.
func (w *watchCaches) storedBytes(group, resource string) (int64, bool) {
	st, err := w.objectStats(schema.GroupResource{Group: group, Resource: resource}.String())
	return st.ObjectCount * st.EstimatedAverageObjectSizeBytes, err == nil
}

// objectStats is what API Priority and Fairness charges a LIST by: how many objects the resource's
// watch cache holds and their average stored size. key is the group resource as
// schema.GroupResource.String spells it.
func (w *watchCaches) objectStats(key string) (apiserverstorage.Stats, error) {
	gr := schema.ParseGroupResource(key)
	c, _ := w.byResource[gr].(*cacher.Cacher)
	if c == nil {
		if custom := w.custom.Load(); custom != nil {
			c = (*custom)()[gr]
		}
	}
	if c == nil {
		// Aggregated or unknown: the list costs this server little, as the library assumes.
		return apiserverstorage.Stats{}, flowcontrolrequest.ObjectCountNotFoundErr
	}
	st := c.Stats()
	out := apiserverstorage.Stats{ObjectCount: int64(st.Objects)}
	if st.Objects > 0 {
		out.EstimatedAverageObjectSizeBytes = st.Bytes / int64(st.Objects)
	}
	return out, nil
}
