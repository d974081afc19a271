package garbagecollector

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"
)

// metrics are the collector's, registered once and shared by its runs.
type metrics struct {
	graphNodes  prometheus.Gauge
	deletions   *prometheus.CounterVec
	refsRemoved prometheus.Counter
	finalized   *prometheus.CounterVec
	queues      *queueMetrics
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		graphNodes: prometheus.NewGauge(prometheus.GaugeOpts{Name: "apictl_garbage_collector_graph_nodes",
			Help: "Number of objects in the garbage collector's dependency graph, owners only named by references included."}),
		deletions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apictl_garbage_collector_deletions_total",
			Help: "Number of objects the garbage collector deleted, by propagation policy."}, []string{"propagation_policy"}),
		refsRemoved: prometheus.NewCounter(prometheus.CounterOpts{Name: "apictl_garbage_collector_owner_references_removed_total",
			Help: "Number of owner references the garbage collector removed from dependents (orphaning and dangling references)."}),
		finalized: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apictl_garbage_collector_finalizers_removed_total",
			Help: "Number of orphan and foregroundDeletion finalizers the garbage collector removed once their work was done."}, []string{"finalizer"}),
		queues: newQueueMetrics(),
	}
	if reg == nil {
		return m, nil
	}
	var errs []error
	for _, c := range []prometheus.Collector{m.graphNodes, m.deletions, m.refsRemoved, m.finalized} {
		errs = append(errs, reg.Register(c))
	}
	errs = append(errs, m.queues.register(reg))
	return m, errors.Join(errs...)
}

// queueMetrics are kube's work queue metrics (workqueue_depth and the others, labelled by queue
// name), given to client-go's work queues through their MetricsProvider, so that no global
// provider is set.
type queueMetrics struct {
	depth, unfinished, longest *prometheus.GaugeVec
	adds, retries              *prometheus.CounterVec
	latency, work              *prometheus.HistogramVec
}

func newQueueMetrics() *queueMetrics {
	label := []string{"name"}
	return &queueMetrics{
		depth: prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: "workqueue", Name: "depth",
			Help: "Current depth of workqueue"}, label),
		adds: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "workqueue", Name: "adds_total",
			Help: "Total number of adds handled by workqueue"}, label),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "workqueue", Name: "queue_duration_seconds",
			Help: "How long in seconds an item stays in workqueue before being requested.", Buckets: prometheus.ExponentialBuckets(10e-9, 10, 10)}, label),
		work: prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "workqueue", Name: "work_duration_seconds",
			Help: "How long in seconds processing an item from workqueue takes.", Buckets: prometheus.ExponentialBuckets(10e-9, 10, 10)}, label),
		unfinished: prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: "workqueue", Name: "unfinished_work_seconds",
			Help: "How many seconds of work has done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases."}, label),
		longest: prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: "workqueue", Name: "longest_running_processor_seconds",
			Help: "How many seconds has the longest running processor for workqueue been running."}, label),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "workqueue", Name: "retries_total",
			Help: "Total number of retries handled by workqueue"}, label),
	}
}

// register adds the vectors to reg; where another controller registered the same vector first,
// its vector is used instead, so that every queue of the process shows under one name.
func (q *queueMetrics) register(reg prometheus.Registerer) error {
	var errs []error
	gauge := func(v **prometheus.GaugeVec) {
		if err := reg.Register(*v); err != nil {
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) {
				if existing, ok := are.ExistingCollector.(*prometheus.GaugeVec); ok {
					*v = existing
					return
				}
			}
			errs = append(errs, err)
		}
	}
	counter := func(v **prometheus.CounterVec) {
		if err := reg.Register(*v); err != nil {
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) {
				if existing, ok := are.ExistingCollector.(*prometheus.CounterVec); ok {
					*v = existing
					return
				}
			}
			errs = append(errs, err)
		}
	}
	histogram := func(v **prometheus.HistogramVec) {
		if err := reg.Register(*v); err != nil {
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) {
				if existing, ok := are.ExistingCollector.(*prometheus.HistogramVec); ok {
					*v = existing
					return
				}
			}
			errs = append(errs, err)
		}
	}
	gauge(&q.depth)
	gauge(&q.unfinished)
	gauge(&q.longest)
	counter(&q.adds)
	counter(&q.retries)
	histogram(&q.latency)
	histogram(&q.work)
	return errors.Join(errs...)
}

var _ workqueue.MetricsProvider = (*queueMetrics)(nil)

func (q *queueMetrics) NewDepthMetric(name string) workqueue.GaugeMetric {
	return q.depth.WithLabelValues(name)
}

func (q *queueMetrics) NewAddsMetric(name string) workqueue.CounterMetric {
	return q.adds.WithLabelValues(name)
}

func (q *queueMetrics) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return q.latency.WithLabelValues(name)
}

func (q *queueMetrics) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return q.work.WithLabelValues(name)
}

func (q *queueMetrics) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return q.unfinished.WithLabelValues(name)
}

func (q *queueMetrics) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return q.longest.WithLabelValues(name)
}

func (q *queueMetrics) NewRetriesMetric(name string) workqueue.CounterMetric {
	return q.retries.WithLabelValues(name)
}
