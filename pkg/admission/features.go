package admission

import (
	"fmt"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
)

// FeatureGate returns kube's apiserver feature gates, as the plugins inspect them, with the
// settings of apictl's own gates (name -> enabled) applied to the gates kube knows. It is a copy:
// k8s.io/apiserver's process-wide gate is never changed.
func FeatureGate(settings map[string]bool) (featuregate.FeatureGate, error) {
	fg := utilfeature.DefaultMutableFeatureGate.DeepCopy()
	known := fg.GetAll()
	apply := map[string]bool{}
	for name, on := range settings {
		if _, ok := known[featuregate.Feature(name)]; ok && fg.Enabled(featuregate.Feature(name)) != on {
			apply[name] = on
		}
	}
	// Only gates kube knows, set to another value than kube's, are applied: what fails is a gate
	// kube locked.
	if err := fg.SetFromMap(apply); err != nil {
		return nil, fmt.Errorf("applying the feature gates to the admission plugins' gates: %w", err)
	}
	return fg, nil
}
