package auth

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/apictl/apictl/pkg/serve/request"
)

// abacAPIVersion is the only ABAC policy version apictl reads; kube's v0 format predates it.
const abacAPIVersion = "abac.authorization.kubernetes.io/v1beta1"

// abacPolicy is one line of an ABAC policy file.
type abacPolicy struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Spec       abacSpec `json:"spec"`
}

type abacSpec struct {
	User            string `json:"user,omitempty"`
	Group           string `json:"group,omitempty"`
	Readonly        bool   `json:"readonly,omitempty"`
	APIGroup        string `json:"apiGroup,omitempty"`
	Resource        string `json:"resource,omitempty"`
	Namespace       string `json:"namespace,omitempty"`
	NonResourcePath string `json:"nonResourcePath,omitempty"`
}

// ABAC authorizes against a list of policies: one that matches allows, none matching has no opinion.
type ABAC struct {
	policies []abacSpec
}

var _ Authorizer = (*ABAC)(nil)

// LoadABAC reads a policy file of one JSON object per line, as kube's --authorization-policy-file.
func LoadABAC(path string) (*ABAC, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading authorization policy file: %w", err)
	}
	defer f.Close()
	a, err := ParseABAC(f)
	if err != nil {
		return nil, fmt.Errorf("authorization policy file %s: %w", path, err)
	}
	return a, nil
}

// ParseABAC reads policies from r; blank lines and lines starting with # are skipped.
func ParseABAC(r io.Reader) (*ABAC, error) {
	a := &ABAC{}
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 64*1024), 1024*1024)
	for line := 1; scanner.Scan(); line++ {
		text := bytes.TrimSpace(scanner.Bytes())
		if len(text) == 0 || text[0] == '#' {
			continue
		}
		var p abacPolicy
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("line %d: not a policy object: %w", line, err)
		}
		if p.APIVersion != abacAPIVersion || p.Kind != "Policy" {
			return nil, fmt.Errorf("line %d: want apiVersion %q and kind \"Policy\", got %q and %q", line, abacAPIVersion, p.APIVersion, p.Kind)
		}
		if p.Spec.User == "" && p.Spec.Group == "" {
			return nil, fmt.Errorf("line %d: the policy names neither a user nor a group, so it matches nobody", line)
		}
		a.policies = append(a.policies, p.Spec)
	}
	if err := scanner.Err(); err != nil {
		return nil, fmt.Errorf("reading policies: %w", err)
	}
	return a, nil
}

// Authorize allows the request if any policy matches it.
func (a *ABAC) Authorize(_ context.Context, u *request.User, info *request.RequestInfo) (Decision, string, error) {
	for i := range a.policies {
		if a.policies[i].matches(u, info) {
			return Allow, "", nil
		}
	}
	return NoOpinion, "No policy matched.", nil
}

func (p *abacSpec) matches(u *request.User, info *request.RequestInfo) bool {
	if u == nil || !p.subjectMatches(u) {
		return false
	}
	if p.Readonly && !isReadOnly(info.Verb) {
		return false
	}
	if info.IsResourceRequest {
		return wildcardOrEqual(p.Namespace, info.Namespace) && wildcardOrEqual(p.Resource, info.Resource) &&
			wildcardOrEqual(p.APIGroup, info.APIGroup)
	}
	return p.NonResourcePath == "*" || p.NonResourcePath == info.Path ||
		(strings.HasSuffix(p.NonResourcePath, "*") && strings.HasPrefix(info.Path, strings.TrimSuffix(p.NonResourcePath, "*")))
}

// subjectMatches follows kube: a named user must match, a named group must contain the user, and a
// policy must name at least one of them.
func (p *abacSpec) subjectMatches(u *request.User) bool {
	matched := false
	if p.User != "" {
		if p.User != "*" && p.User != u.Name {
			return false
		}
		matched = true
	}
	if p.Group != "" {
		if p.Group != "*" && !u.InGroup(p.Group) {
			return false
		}
		matched = true
	}
	return matched
}

func wildcardOrEqual(policy, value string) bool { return policy == "*" || policy == value }

func isReadOnly(verb string) bool { return verb == "get" || verb == "list" || verb == "watch" }
