package filters

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"
	fcmetrics "k8s.io/apiserver/pkg/util/flowcontrol/metrics"
	flowcontrolrequest "k8s.io/apiserver/pkg/util/flowcontrol/request"

	"github.com/apictl/apictl/pkg/serve/request"
)

// PriorityAndFairness is kube's API Priority and Fairness filter in place of the max-in-flight
// limit: each request is classified by the FlowSchemas, charged the seats estimate gives it and
// queued fairly at its priority level; a level that is full answers 429 with a Retry-After. Responses
// name the FlowSchema and priority level that took them (X-Kubernetes-PF-FlowSchema-UID,
// X-Kubernetes-PF-PriorityLevel-UID). A watch holds its seats until its handler says it is
// initialized (utilflowcontrol.WatchInitialized); the other long-running requests are not limited.
//
// Classification, queueing, seats and the apiserver_flowcontrol_* metrics are k8s.io/apiserver's
// (fc.Handle). The HTTP filter around it is ported from k8s.io/apiserver v0.37.2
// pkg/server/filters/priority-and-fairness.go (priorityAndFairnessHandler.Handle) rather than
// called: BenchmarkPriorityAndFairness measured the library's filter at 8.3 µs and 59 allocations
// for an exempt GET, and a profile of the bench harness's GET rows put it at a tenth of the server's
// CPU. The port keeps its behaviour and drops what apictl does not use: httplog key-values (each a
// walk up the context chain), copies of the request's info and user into k8s.io/apiserver's context
// for every request, package-level watermarks behind a mutex, and header-key canonicalisation.
type PriorityAndFairness struct {
	fc        utilflowcontrol.Interface
	estimate  flowcontrolrequest.WorkEstimatorFunc
	waitLimit time.Duration
	dropped   utilflowcontrol.DroppedRequestsTracker
	// executing and waiting count requests, read-only at 0 and mutating at 1, into kube's
	// apiserver_flowcontrol_read_vs_write_current_requests; the executing ones also into
	// apiserver_current_inflight_requests, as its highest value each second (see Run).
	executing, waiting [2]concurrencyGauge
	inflight           [2]prometheus.Gauge
}

// NewPriorityAndFairness makes the filter. waitLimit bounds the time in a queue of a request
// without a deadline (kube: a quarter of --request-timeout).
func NewPriorityAndFairness(fc utilflowcontrol.Interface, estimate flowcontrolrequest.WorkEstimatorFunc, waitLimit time.Duration, m *Metrics) *PriorityAndFairness {
	p := &PriorityAndFairness{fc: fc, estimate: estimate, waitLimit: waitLimit,
		dropped:  utilflowcontrol.NewDroppedRequestsTracker(),
		inflight: [2]prometheus.Gauge{m.inflight.WithLabelValues("readOnly"), m.inflight.WithLabelValues("mutating")},
	}
	p.executing[0].gauge, p.executing[1].gauge = fcmetrics.GetExecutingReadonlyConcurrency(), fcmetrics.GetExecutingMutatingConcurrency()
	p.waiting[0].gauge, p.waiting[1].gauge = fcmetrics.GetWaitingReadonlyConcurrency(), fcmetrics.GetWaitingMutatingConcurrency()
	return p
}

// Wrap puts the filter in front of next; both ports' chains share one p.
func (p *PriorityAndFairness) Wrap(next http.Handler) http.Handler { return &apfFilter{p, next} }

// Run publishes, every second until ctx ends, the most requests that executed at once during it
// as apiserver_current_inflight_requests, as kube's watermark maintenance does with APF on.
func (p *PriorityAndFairness) Run(ctx context.Context) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			p.publishInFlight()
		}
	}
}

func (p *PriorityAndFairness) publishInFlight() {
	for i := range p.executing {
		p.inflight[i].Set(float64(p.executing[i].high.Swap(0)))
	}
}

type concurrencyGauge struct {
	n, high atomic.Int32
	gauge   fcmetrics.RatioedGauge
}

func (g *concurrencyGauge) add(delta int32) {
	n := g.n.Add(delta)
	g.gauge.Set(float64(n))
	for {
		h := g.high.Load()
		if n <= h || g.high.CompareAndSwap(h, n) {
			return
		}
	}
}

type apfFilter struct {
	*PriorityAndFairness
	next http.Handler
}

// Header keys as net/http canonicalises them, so that setting them costs no canonicalisation.
const (
	headerFlowSchemaUID    = "X-Kubernetes-Pf-Flowschema-Uid"
	headerPriorityLevelUID = "X-Kubernetes-Pf-Prioritylevel-Uid"
)

func (f *apfFilter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	info, _ := request.RequestInfoFrom(r.Context())
	u, _ := request.UserFrom(r.Context())
	if info == nil || u == nil {
		// The filters before this one always set both: a request without them is a wiring bug.
		http.Error(w, "Internal Server Error: no request info or user for API Priority and Fairness", http.StatusInternalServerError)
		return
	}
	isWatch := info.Verb == "watch"
	if IsLongRunning(info) && !isWatch {
		f.next.ServeHTTP(w, r)
		return
	}
	gi := GenericRequestInfo(info)
	// The work estimator and the watch tracker read the request's info from k8s.io/apiserver's
	// context; the handlers after this filter do not.
	q := &apfRequest{f: f, w: w, r: r, mutating: info.Verb != "get" && info.Verb != "list" && !isWatch,
		estimated: r.WithContext(genericapirequest.WithRequestInfo(r.Context(), gi))}
	digest := utilflowcontrol.RequestDigest{RequestInfo: gi, User: userInfo{u}}
	if isWatch {
		q.serveWatch(digest)
	} else {
		waitCtx, cancel := f.waitContext(r.Context())
		f.fc.Handle(waitCtx, digest, q.note, q.estimateWork, q.queueNote, q.execute)
		cancel()
	}
	if !q.served {
		q.setHeaders()
		f.dropped.RecordDroppedRequest(q.plName)
		w.Header().Set("Retry-After", strconv.Itoa(int(f.dropped.GetRetryAfter(q.plName))))
		http.Error(w, "Too many requests, please try again later.", http.StatusTooManyRequests)
	}
}

// apfRequest is one request's state: what kube's filter keeps in closures, in one allocation.
type apfRequest struct {
	f         *apfFilter
	w         http.ResponseWriter
	r         *http.Request
	estimated *http.Request // r with k8s.io/apiserver's request info
	mutating  bool
	served    bool

	fsName, plName string
	fsUID, plUID   string
	classified     bool
}

func (q *apfRequest) note(fs *flowcontrolv1.FlowSchema, pl *flowcontrolv1.PriorityLevelConfiguration, _ string) {
	q.fsName, q.fsUID, q.plName, q.plUID, q.classified = fs.Name, string(fs.UID), pl.Name, string(pl.UID), true
}

// estimateWork is called, if at all, after note.
func (q *apfRequest) estimateWork() flowcontrolrequest.WorkEstimate {
	est := q.f.estimate(q.estimated, q.fsName, q.plName)
	fcmetrics.ObserveWorkEstimatedSeats(q.plName, q.fsName, est.MaxSeats())
	return est
}

func (q *apfRequest) queueNote(inQueue bool) {
	if inQueue {
		q.f.waiting[q.kind()].add(1)
	} else {
		q.f.waiting[q.kind()].add(-1)
	}
}

func (q *apfRequest) kind() int {
	if q.mutating {
		return 1
	}
	return 0
}

func (q *apfRequest) execute() {
	g := &q.f.executing[q.kind()]
	g.add(1)
	defer g.add(-1)
	q.served = true
	q.setHeaders()
	q.f.next.ServeHTTP(q.w, q.r)
}

// setHeaders names the UIDs, not the names, of the FlowSchema and priority level, as kube does, so
// that a client rejected at a low priority does not learn the names an administrator chose.
func (q *apfRequest) setHeaders() {
	if !q.classified {
		return
	}
	h := q.w.Header()
	h[headerPriorityLevelUID] = []string{q.plUID}
	h[headerFlowSchemaUID] = []string{q.fsUID}
}

// serveWatch runs fc.Handle in a goroutine that holds the watch's seats until the watch handler
// signals that it has sent its initial events, while this goroutine serves the watch itself.
func (q *apfRequest) serveWatch(digest utilflowcontrol.RequestDigest) {
	f, ctx := q.f, q.r.Context()
	start := make(chan struct{}) // closed by the execute below once APF admits the watch
	signal := utilflowcontrol.NewInitializationSignal()
	var forget utilflowcontrol.ForgetWatchFunc
	defer func() {
		signal.Signal() // in case the request never reached the storage that signals
		if forget != nil {
			forget()
		}
	}()
	execute := func() {
		g := &f.executing[0]
		g.add(1)
		defer g.add(-1)
		q.served = true
		q.setHeaders()
		forget = f.fc.RegisterWatch(q.estimated)
		close(start)
		signal.Wait()
	}
	result := make(chan any, 1)
	go func() {
		defer func() {
			err := recover()
			if err != nil && err != http.ErrAbortHandler {
				buf := make([]byte, 64<<10)
				err = fmt.Sprintf("%v\n%s", err, buf[:runtime.Stack(buf, false)])
			}
			result <- err
		}()
		waitCtx, cancel := f.waitContext(ctx)
		defer cancel()
		f.fc.Handle(waitCtx, digest, q.note, q.estimateWork, q.queueNote, execute)
	}()
	select {
	case <-start:
		defer func() {
			signal.Signal()
			if err := <-result; err != nil {
				panic(err)
			}
		}()
		f.next.ServeHTTP(q.w, q.r.WithContext(utilflowcontrol.WithInitializationSignal(ctx, signal)))
	case err := <-result:
		if err != nil {
			panic(err)
		}
	}
}

// waitContext bounds a request's wait in its queue: a quarter of the time left before its deadline,
// or waitLimit without one, and never more than a minute (kube's getRequestWaitContext).
func (f *apfFilter) waitContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Err() != nil {
		return ctx, func() {}
	}
	now := time.Now()
	limit := f.waitLimit
	if deadline, ok := ctx.Deadline(); ok {
		limit = deadline.Sub(now) / 4
	}
	return context.WithDeadline(ctx, now.Add(min(limit, time.Minute)))
}

// userInfo is apictl's user as k8s.io/apiserver's user.Info, without copying it.
type userInfo struct{ u *request.User }

func (i userInfo) GetName() string               { return i.u.Name }
func (i userInfo) GetUID() string                { return i.u.UID }
func (i userInfo) GetGroups() []string           { return i.u.Groups }
func (i userInfo) GetExtra() map[string][]string { return i.u.Extra }

// GenericRequestInfo is info as k8s.io/apiserver spells it.
func GenericRequestInfo(info *request.RequestInfo) *genericapirequest.RequestInfo {
	return &genericapirequest.RequestInfo{
		IsResourceRequest: info.IsResourceRequest,
		Path:              info.Path,
		Verb:              info.Verb,
		APIPrefix:         info.APIPrefix,
		APIGroup:          info.APIGroup,
		APIVersion:        info.APIVersion,
		Namespace:         info.Namespace,
		Resource:          info.Resource,
		Subresource:       info.Subresource,
		Name:              info.Name,
		Parts:             info.Parts,
	}
}
