package apiserver_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

const benchSizePolicy = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: bench-size}
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["configmaps"]
  validations:
  - expression: "!has(object.data) || size(object.data) < 10"
    message: "too many keys"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: bench-size-binding}
spec:
  policyName: bench-size
  validationActions: [Deny]
`

// BenchmarkPolicyCreate is a whole server's answer to a configmap create over plain HTTP, without
// any admission policy and with one CEL policy that matches every create and allows it. The
// creates are dry runs (validating policies judge them too) so that etcd's write does not drown
// the difference. Run: go test -run NONE -bench PolicyCreate ./pkg/apiserver/
func BenchmarkPolicyCreate(b *testing.B) {
	s, c := policyServer(b, nil)
	url := s.InsecureURL + "/api/v1/namespaces/default/configmaps?dryRun=All"
	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"a":"b"}}`
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	create := func(b *testing.B) int {
		resp, err := client.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	run := func(b *testing.B) {
		b.ReportAllocs()
		b.ResetTimer()
		start := processCPU(b)
		for i := 0; i < b.N; i++ {
			if code := create(b); code != http.StatusCreated {
				b.Fatalf("create answered %d", code)
			}
		}
		// Client and server share the process: CPU per request counts both, and says more than
		// wall time on a shared machine.
		b.ReportMetric(float64((processCPU(b)-start).Microseconds())/float64(b.N), "cpu-µs/op")
	}
	b.Run("none", run)

	applyPolicies(b, c, benchSizePolicy)
	// The policy is in force once it refuses: a create with ten keys.
	big := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{` + keys(10) + `}}`
	untilPolicy(b, "the policy to refuse", func() (bool, string) {
		resp, err := client.Post(url, "application/json", strings.NewReader(big))
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusUnprocessableEntity, fmt.Sprintf("last answer %d", resp.StatusCode)
	})
	b.Run("one CEL policy", run)
}

func keys(n int) string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%q:%q", fmt.Sprint("k", i), "v")
	}
	return strings.Join(out, ",")
}

// processCPU is the process's user and system CPU time so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
