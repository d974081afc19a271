package flags

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/apictl/apictl/pkg/serve"
	"github.com/apictl/apictl/pkg/serve/audit"
)

// SectionAuditing holds the audit log flags; kube prints it after the serving sections.
const SectionAuditing = "auditing"

// Audit log formats, as kube names them. apictl writes only JSON: kube's one-line text format is
// meant for people and no audit tool reads it.
const (
	AuditFormatJSON   = "json"
	AuditFormatLegacy = "legacy"
)

// auditGroupVersion is the only version apictl writes events in, kube's default.
const auditGroupVersion = "audit.k8s.io/v1"

// AuditOptions are kube's audit log flags: a policy file says what is logged, the log path where.
// Both are needed for anything to be written, as in kube.
type AuditOptions struct {
	PolicyFile string
	Path       string
	MaxAge     int
	MaxBackups int
	MaxSize    int
	Format     string
	Compress   bool
	Version    string
}

// NewAuditOptions returns kube's defaults: no log, and when there is one, rotation at 100 MB keeping
// 100 files for 366 days.
func NewAuditOptions() *AuditOptions {
	return &AuditOptions{MaxAge: 366, MaxBackups: 100, MaxSize: 100, Format: AuditFormatJSON, Version: auditGroupVersion}
}

// AddFlags registers the audit flags with kube's names and help, the current values as defaults.
func (o *AuditOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.PolicyFile, "audit-policy-file", o.PolicyFile,
		"Path to the file that defines the audit policy configuration.")
	fs.StringVar(&o.Path, "audit-log-path", o.Path,
		"If set, all requests coming to the apiserver will be logged to this file.  '-' means standard out.")
	fs.IntVar(&o.MaxAge, "audit-log-maxage", o.MaxAge,
		"The maximum number of days to retain old audit log files based on the timestamp encoded in their filename. Setting a value of 0 means old audit log files are not removed based on age.")
	fs.IntVar(&o.MaxBackups, "audit-log-maxbackup", o.MaxBackups,
		"The maximum number of old audit log files to retain. Setting a value of 0 will mean there's no restriction on the number of files.")
	fs.IntVar(&o.MaxSize, "audit-log-maxsize", o.MaxSize,
		"The maximum size in megabytes of the audit log file before it gets rotated. Setting to 0 disables rotation (not recommended).")
	fs.StringVar(&o.Format, "audit-log-format", o.Format,
		"Format of saved audits. \"json\" indicates structured json format, one event per line. Known formats are json (kube's \"legacy\" 1-line text format is not supported).")
	fs.StringVar(&o.Version, "audit-log-version", o.Version,
		"API group and version used for serializing audit events written to log.")
	fs.BoolVar(&o.Compress, "audit-log-compress", o.Compress, "If set, the rotated log files will be compressed using gzip.")
}

// Complete has nothing to fill in.
func (o *AuditOptions) Complete() error { return nil }

// Validate reports every problem with the audit settings. The policy file is read and checked with
// the code the server loads it with, so `flags validate` finds what `serve` would refuse.
func (o *AuditOptions) Validate() []error {
	const s = SectionAuditing
	var errs []error
	switch o.Format {
	case AuditFormatJSON:
	case AuditFormatLegacy:
		errs = append(errs, problemf(s, "audit-log-format", o.Format, "is not supported by apictl: use json"))
	default:
		errs = append(errs, problemf(s, "audit-log-format", o.Format, "is not a known format: use json"))
	}
	if o.Version != auditGroupVersion {
		errs = append(errs, problemf(s, "audit-log-version", o.Version, "is not supported: the allowed version is %q", auditGroupVersion))
	}
	for _, f := range []struct {
		flag string
		n    int
	}{{"audit-log-maxage", o.MaxAge}, {"audit-log-maxbackup", o.MaxBackups}, {"audit-log-maxsize", o.MaxSize}} {
		if f.n < 0 {
			errs = append(errs, problemf(s, f.flag, strconv.Itoa(f.n), "can't be a negative number"))
		}
	}
	if p := checkReadableFile(s, "audit-policy-file", o.PolicyFile); p != nil {
		errs = append(errs, p)
	} else if o.PolicyFile != "" {
		if _, err := audit.LoadPolicy(o.PolicyFile); err != nil {
			errs = append(errs, problemf(s, "audit-policy-file", o.PolicyFile, "is not a valid audit policy: %s", policyError(err)))
		}
	}
	return errs
}

// policyError is kube's message without the prefix and the path, which the problem already gives.
func policyError(err error) string {
	msg := strings.TrimPrefix(err.Error(), "loading audit policy file: ")
	if i := strings.LastIndex(msg, ": from file "); i >= 0 {
		msg = msg[:i]
	}
	return msg
}

// ApplyTo loads the policy and opens the audit log. Without both, or with a policy that logs
// nothing, nothing is audited and the server's chain has no audit filter.
func (o *AuditOptions) ApplyTo(_ context.Context, cfg *serve.Config) error {
	cfg.Audit = nil
	switch {
	case o.PolicyFile == "" && o.Path == "":
		return nil
	case o.PolicyFile == "":
		cfg.Logger.Warn("--audit-log-path is set without --audit-policy-file: no audit events will be written")
		return nil
	case o.Path == "":
		cfg.Logger.Warn("--audit-policy-file is set without --audit-log-path: no audit events will be written")
		return nil
	}
	policy, err := audit.LoadPolicy(o.PolicyFile)
	if err != nil {
		return err
	}
	if policy.LogsNothing() {
		cfg.Logger.Info("every rule of --audit-policy-file has level None: no audit events will be written", "policy", o.PolicyFile)
		return nil
	}
	out, err := audit.OpenLog(audit.LogOptions{Path: o.Path, MaxAge: o.MaxAge, MaxBackups: o.MaxBackups, MaxSize: o.MaxSize, Compress: o.Compress})
	if err != nil {
		return fmt.Errorf("opening --audit-log-path %s: %w", o.Path, err)
	}
	if cfg.Audit, err = audit.New(audit.Options{Policy: policy, Out: out, Logger: cfg.Logger, MaxBodyBytes: cfg.MaxRequestBodyBytes}); err != nil {
		out.Close()
		return err
	}
	cfg.Logger.Info("audit log", "path", o.Path, "policy", o.PolicyFile)
	return nil
}
