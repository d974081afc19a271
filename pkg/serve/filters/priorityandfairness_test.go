package filters

import (
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"

	"github.com/apictl/apictl/pkg/serve/request"
)

// TestPriorityAndFairnessFilter checks the port of kube's filter around k8s.io/apiserver's APF: the
// headers, the seats a request holds while its handler runs (a watch's only until it is
// initialized), the long-running requests it leaves alone, and apiserver_current_inflight_requests.
// pkg/apiserver's TestPriorityAndFairness checks classification and 429 on a real server.
func TestPriorityAndFairnessFilter(t *testing.T) {
	for _, h := range []string{flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID, flowcontrolv1.ResponseHeaderMatchedPriorityLevelConfigurationUID} {
		if c := textproto.CanonicalMIMEHeaderKey(h); c != headerFlowSchemaUID && c != headerPriorityLevelUID {
			t.Errorf("header %s is %s to net/http, a key the filter does not set", h, c)
		}
	}
	apf, reg := newTestPriorityAndFairness(t)
	tests := []struct {
		name, method, target string
		user                 *request.User
		// initialize, for a watch, signals the end of its initial events halfway through.
		initialize  bool
		wantHeaders bool
		// executing is the read-only requests APF counts while the handler runs, before and after
		// the watch's initialization.
		executing, afterInit int32
	}{
		{name: "exempt GET", method: http.MethodGet, target: "/api/v1/namespaces/default/configmaps/x", user: apfAdmin, wantHeaders: true, executing: 1, afterInit: 1},
		{name: "global-default LIST", method: http.MethodGet, target: "/api/v1/configmaps", user: apfAlice, wantHeaders: true, executing: 1, afterInit: 1},
		{name: "watch", method: http.MethodGet, target: "/api/v1/configmaps?watch=true", user: apfAlice, initialize: true, wantHeaders: true, executing: 1, afterInit: 0},
		{name: "long-running log", method: http.MethodGet, target: "/api/v1/namespaces/default/pods/p/log", user: apfAlice},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var executing, afterInit int32
			h := apf.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				executing = apf.executing[0].n.Load()
				afterInit = executing
				if tt.initialize {
					// APF's goroutine gives the seats back once it sees the signal.
					utilflowcontrol.WatchInitialized(r.Context())
					for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
						if afterInit = apf.executing[0].n.Load(); afterInit == 0 {
							break
						}
					}
				}
				w.WriteHeader(http.StatusOK)
			}))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, newAPFRequest(tt.user, tt.method, tt.target))
			if w.Code != http.StatusOK {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			fs, pl := w.Header().Get(flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID), w.Header().Get(flowcontrolv1.ResponseHeaderMatchedPriorityLevelConfigurationUID)
			if got := fs != "" && pl != "" && fs != pl; got != tt.wantHeaders {
				t.Errorf("headers %v, want UIDs: %v", w.Header(), tt.wantHeaders)
			}
			if executing != tt.executing || afterInit != tt.afterInit {
				t.Errorf("executing %d, after initialization %d; want %d, %d", executing, afterInit, tt.executing, tt.afterInit)
			}
			if n := apf.executing[0].n.Load(); n != 0 {
				t.Errorf("%d requests still executing after the handler returned", n)
			}
		})
	}

	apf.publishInFlight()
	want := `
# HELP apiserver_current_inflight_requests Maximal number of currently used inflight request limit of this apiserver per request kind in last second.
# TYPE apiserver_current_inflight_requests gauge
apiserver_current_inflight_requests{request_kind="mutating"} 0
apiserver_current_inflight_requests{request_kind="readOnly"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "apiserver_current_inflight_requests"); err != nil {
		t.Error(err)
	}
	apf.publishInFlight() // a second with no request in it
	if err := testutil.GatherAndCompare(reg, strings.NewReader(strings.Replace(want, "} 1", "} 0", 1)), "apiserver_current_inflight_requests"); err != nil {
		t.Error(err)
	}
}
