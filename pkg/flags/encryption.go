package flags

import (
	"github.com/spf13/pflag"

	"github.com/apictl/apictl/pkg/storage/encryption"
)

// EncryptionOptions say how values are encrypted at rest in etcd. They sit in kube's "Etcd flags"
// section.
type EncryptionOptions struct {
	// ProviderConfig is an apiserver.config.k8s.io/v1 EncryptionConfiguration file. Empty stores
	// values as they are.
	ProviderConfig string
	// AutomaticReload rereads ProviderConfig when it changes, without a restart; a bad file is logged
	// and the configuration in force stays.
	AutomaticReload bool
}

// NewEncryptionOptions returns kube's defaults: no encryption.
func NewEncryptionOptions() *EncryptionOptions { return &EncryptionOptions{} }

// AddFlags registers kube's encryption flags with the current values as defaults.
func (o *EncryptionOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ProviderConfig, "encryption-provider-config", o.ProviderConfig,
		"The file containing configuration for encryption providers to be used for storing secrets in etcd")
	fs.BoolVar(&o.AutomaticReload, "encryption-provider-config-automatic-reload", o.AutomaticReload,
		"Determines if the file set by --encryption-provider-config should be automatically reloaded if the disk contents change.")
}

// Complete has nothing to fill in.
func (o *EncryptionOptions) Complete() error { return nil }

// Validate loads the file with the loader `serve` uses, so both report kube's message for a bad one.
func (o *EncryptionOptions) Validate() []error {
	const s = SectionEtcd
	var errs problemList
	if o.AutomaticReload && o.ProviderConfig == "" {
		errs.add(problemf(s, "encryption-provider-config-automatic-reload", "",
			"must be set with --encryption-provider-config"))
	}
	if o.ProviderConfig == "" {
		return errs
	}
	if p := checkReadableFile(s, "encryption-provider-config", o.ProviderConfig); p != nil {
		errs.add(p)
		return errs
	}
	if _, err := o.Load(); err != nil {
		errs.add(problemf(s, "encryption-provider-config", o.ProviderConfig, "is invalid: %v", err))
	}
	return errs
}

// Load reads the configuration; nil when no file is given.
func (o *EncryptionOptions) Load() (*encryption.Config, error) {
	if o.ProviderConfig == "" {
		return nil, nil
	}
	return encryption.Load(o.ProviderConfig)
}
