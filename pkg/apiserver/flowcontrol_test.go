package apiserver_test

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"k8s.io/client-go/kubernetes"

	"github.com/apictl/apictl/internal/servertest"
	"github.com/apictl/apictl/pkg/kinds/flowcontrol/flowschemas"
	"github.com/apictl/apictl/pkg/kinds/flowcontrol/prioritylevelconfigurations"
)

// A server runs API Priority and Fairness as kube-apiserver does: it keeps kube's bootstrap
// FlowSchemas and priority levels, its config controller writes their status, responses name the
// FlowSchema and level that took them, and a level with no room left answers 429 with Retry-After.
func TestPriorityAndFairness(t *testing.T) {
	// A small server concurrency, so that a level of one share has a single seat.
	srv := servertest.Start(t, "--max-requests-inflight", "10", "--max-mutating-requests-inflight", "5")
	client := kubernetes.NewForConfigOrDie(srv.AdminConfig)
	fc := client.FlowcontrolV1()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// The bootstrap objects, with kube's names and specs (defaulted as stored).
	for _, want := range append(slices.Clone(bootstrap.MandatoryFlowSchemas), bootstrap.SuggestedFlowSchemas...) {
		got, err := fc.FlowSchemas().Get(ctx, want.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("bootstrap FlowSchema %s: %v", want.Name, err)
		}
		w := want.DeepCopy()
		flowschemas.SetDefaults(w)
		if !apiequality.Semantic.DeepEqual(got.Spec, w.Spec) {
			t.Errorf("FlowSchema %s spec %+v, want %+v", want.Name, got.Spec, w.Spec)
		}
		if got.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] != "true" {
			t.Errorf("FlowSchema %s annotations %v, want the auto-update annotation", want.Name, got.Annotations)
		}
	}
	for _, want := range append(slices.Clone(bootstrap.MandatoryPriorityLevelConfigurations), bootstrap.SuggestedPriorityLevelConfigurations...) {
		got, err := fc.PriorityLevelConfigurations().Get(ctx, want.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("bootstrap PriorityLevelConfiguration %s: %v", want.Name, err)
		}
		w := want.DeepCopy()
		prioritylevelconfigurations.SetDefaults(w)
		if !apiequality.Semantic.DeepEqual(got.Spec, w.Spec) {
			t.Errorf("PriorityLevelConfiguration %s spec %+v, want %+v", want.Name, got.Spec, w.Spec)
		}
	}

	// A level of one share that rejects what it cannot run at once, and a FlowSchema sending a
	// test user's every request there.
	one, zero := int32(1), int32(0)
	tiny := &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "apf-test-tiny"},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: &one, LendablePercent: &zero, BorrowingLimitPercent: &zero,
				LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}}}}
	if tiny, err := fc.PriorityLevelConfigurations().Create(ctx, tiny, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	} else if tiny.Generation != 1 || *tiny.Spec.Limited.LendablePercent != 0 {
		t.Errorf("created level %+v", tiny)
	}
	schema := &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "apf-test-flood"},
		Spec: flowcontrolv1.FlowSchemaSpec{PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "apf-test-tiny"},
			MatchingPrecedence: 500, DistinguisherMethod: &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: "flooder"}}},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"},
					Namespaces: []string{"*"}, ClusterScope: true}},
			}}}}
	schema, err := fc.FlowSchemas().Create(ctx, schema, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// The config controller writes the status: the level exists, so the schema is not dangling.
	for {
		fs, err := fc.FlowSchemas().Get(ctx, schema.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(fs.Status.Conditions) == 1 && fs.Status.Conditions[0].Type == flowcontrolv1.FlowSchemaConditionDangling &&
			fs.Status.Conditions[0].Status == flowcontrolv1.ConditionFalse {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("FlowSchema status %+v, want Dangling=False", fs.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}

	httpClient, err := srv.HTTPClient()
	if err != nil {
		t.Fatal(err)
	}
	do := func(impersonate string) (*http.Response, string) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.SecureURL+"/api/v1/namespaces/default/configmaps", nil)
		if impersonate != "" {
			req.Header.Set("Impersonate-User", impersonate)
		}
		resp, err := httpClient.Do(req)
		if err != nil {
			t.Error(err)
			return nil, ""
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}

	// The admin is in system:masters: the exempt schema and level take it.
	exemptFS, err := fc.FlowSchemas().Get(ctx, "exempt", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	exemptPL, err := fc.PriorityLevelConfigurations().Get(ctx, "exempt", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	resp, _ := do("")
	if got := resp.Header.Get(flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID); got != string(exemptFS.UID) {
		t.Errorf("FlowSchema UID header %q, want exempt's %s", got, exemptFS.UID)
	}
	if got := resp.Header.Get(flowcontrolv1.ResponseHeaderMatchedPriorityLevelConfigurationUID); got != string(exemptPL.UID) {
		t.Errorf("priority level UID header %q, want exempt's %s", got, exemptPL.UID)
	}

	// The flooder may read, so that its requests take their time.
	if _, err := client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "apf-test-flooder"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "flooder"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The flooder's requests share one seat: many at once, and some are turned away.
	var mu sync.Mutex
	codes := map[int]int{}
	var rejected *http.Response
	var rejectedBody string
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				resp, body := do("flooder")
				if resp == nil {
					return
				}
				mu.Lock()
				codes[resp.StatusCode]++
				if resp.StatusCode == http.StatusTooManyRequests {
					rejected, rejectedBody = resp, body
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if rejected == nil {
		t.Fatalf("no request of the flood was rejected: %v", codes)
	}
	if got := rejected.Header.Get(flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID); got != string(schema.UID) {
		t.Errorf("a rejected request names FlowSchema %q, want %s", got, schema.UID)
	}
	if rejected.Header.Get("Retry-After") == "" || strings.TrimSpace(rejectedBody) != "Too many requests, please try again later." {
		t.Errorf("rejection: Retry-After %q, body %q", rejected.Header.Get("Retry-After"), rejectedBody)
	}

	// kube's metrics count the rejections of the level.
	metrics, err := http.Get(srv.InsecureURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer metrics.Body.Close()
	text, _ := io.ReadAll(metrics.Body)
	if !strings.Contains(string(text), `apiserver_flowcontrol_rejected_requests_total{flow_schema="apf-test-flood",priority_level="apf-test-tiny",reason="concurrency-limit"}`) {
		t.Errorf("/metrics lacks the level's rejections")
	}
}
