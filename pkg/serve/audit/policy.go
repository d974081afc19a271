package audit

import (
	"fmt"

	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	kubeaudit "k8s.io/apiserver/pkg/audit"
	auditpolicy "k8s.io/apiserver/pkg/audit/policy"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/apictl/apictl/pkg/serve/request"
)

// Policy decides, per request, the level an event is written at and which stages are left out.
type Policy struct {
	evaluator kubeaudit.PolicyRuleEvaluator
	// logsNothing is set when every rule's level is None.
	logsNothing bool
}

// levelConfig is what a policy decides for one request.
type levelConfig struct {
	level             auditinternal.Level
	omitStages        []auditinternal.Stage
	omitManagedFields bool
}

// LoadPolicy reads and validates an audit.k8s.io/v1 Policy file with
// kube's own loader, so its errors are kube's: unknown fields, bad levels, bad stages, a rule with
// both resources and nonResourceURLs, an empty rule list.
func LoadPolicy(path string) (*Policy, error) {
	p, err := auditpolicy.LoadPolicyFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("loading audit policy file: %w", err)
	}
	logsNothing := true
	for _, r := range p.Rules {
		logsNothing = logsNothing && r.Level == auditinternal.LevelNone
	}
	return &Policy{evaluator: auditpolicy.NewPolicyRuleEvaluator(p), logsNothing: logsNothing}, nil
}

// LogsNothing reports whether every rule's level is None, so that no request is ever logged and the
// server can leave audit out of its chain.
func (p *Policy) LogsNothing() bool { return p.logsNothing }

// evaluate returns the first matching rule's decision for u (nil when authentication failed)
// making the request described by info.
func (p *Policy) evaluate(u *request.User, info *request.RequestInfo, path string) levelConfig {
	rac := p.evaluator.EvaluatePolicyRule(attributes(u, info, path))
	return levelConfig{level: rac.Level, omitStages: rac.OmitStages, omitManagedFields: rac.OmitManagedFields}
}

// attributes adapts apictl's request info to the attributes kube's policy rules match against.
func attributes(u *request.User, info *request.RequestInfo, path string) authorizer.Attributes {
	a := authorizer.AttributesRecord{Path: path}
	if u != nil {
		a.User = &user.DefaultInfo{Name: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra}
	}
	if info != nil {
		a.Verb = info.Verb
		a.Namespace = info.Namespace
		a.APIGroup = info.APIGroup
		a.APIVersion = info.APIVersion
		a.Resource = info.Resource
		a.Subresource = info.Subresource
		a.Name = info.Name
		a.ResourceRequest = info.IsResourceRequest
		if info.Path != "" {
			a.Path = info.Path
		}
	}
	return a
}
