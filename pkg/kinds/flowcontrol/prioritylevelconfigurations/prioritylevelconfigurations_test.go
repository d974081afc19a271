package prioritylevelconfigurations

import (
	"fmt"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"github.com/apictl/apictl/pkg/kinds/kindtest"
)

// The files under testdata/want are what kube-apiserver v1.37.2 answered to a POST ?dryRun=All of
// the file of the same name under testdata/in, recorded with the reference server
// (../shared/reference).
func TestCreateAsKube(t *testing.T) {
	kindtest.CreateAsKube(t, Kind(), func(got, want *flowcontrolv1.PriorityLevelConfiguration) string {
		if !apiequality.Semantic.DeepEqual(got.Spec, want.Spec) || !apiequality.Semantic.DeepEqual(got.Status, want.Status) || got.Generation != want.Generation {
			return fmt.Sprintf("created %+v %+v (generation %d), want %+v %+v (%d)", got.Spec, got.Status, got.Generation, want.Spec, want.Status, want.Generation)
		}
		return ""
	})
}
