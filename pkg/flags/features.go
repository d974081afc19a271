package flags

import "github.com/spf13/pflag"

// FeatureOptions switch optional server features.
type FeatureOptions struct {
	// Profiling serves /debug/pprof.
	Profiling bool
	// EnablePriorityAndFairness queues and dispatches requests by API Priority and Fairness instead of
	// the max-in-flight limits.
	EnablePriorityAndFairness bool
}

// NewFeatureOptions returns kube's defaults.
func NewFeatureOptions() *FeatureOptions {
	return &FeatureOptions{Profiling: true, EnablePriorityAndFairness: true}
}

// AddFlags registers the feature flags with the current values as defaults.
func (o *FeatureOptions) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.Profiling, "profiling", o.Profiling, "Enable profiling via web interface host:port/debug/pprof/")
	fs.BoolVar(&o.EnablePriorityAndFairness, "enable-priority-and-fairness", o.EnablePriorityAndFairness,
		"If true, replace the max-in-flight handler with an enhanced one that queues and dispatches with priority and fairness")
}

// Complete has nothing to fill in.
func (o *FeatureOptions) Complete() error { return nil }

// Validate has nothing to check: a bool cannot be wrong.
func (o *FeatureOptions) Validate() []error { return nil }
