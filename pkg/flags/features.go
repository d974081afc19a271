package flags

import "github.com/spf13/pflag"

// FeatureOptions switch optional server features.
type FeatureOptions struct {
	// Profiling serves /debug/pprof.
	Profiling bool
}

// NewFeatureOptions returns kube's defaults.
func NewFeatureOptions() *FeatureOptions { return &FeatureOptions{Profiling: true} }

// AddFlags registers the feature flags with the current values as defaults.
func (o *FeatureOptions) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.Profiling, "profiling", o.Profiling, "Enable profiling via web interface host:port/debug/pprof/")
}

// Complete has nothing to fill in.
func (o *FeatureOptions) Complete() error { return nil }

// Validate has nothing to check: a bool cannot be wrong.
func (o *FeatureOptions) Validate() []error { return nil }
