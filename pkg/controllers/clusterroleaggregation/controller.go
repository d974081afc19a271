// Package clusterroleaggregation keeps each ClusterRole that has an aggregationRule holding the union
// of the rules of the ClusterRoles its selectors match, as kube's clusterrole-aggregation controller
// does: admin, edit and view grow as roles labelled aggregate-to-* come and go.
package clusterroleaggregation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	rbacv1client "k8s.io/client-go/kubernetes/typed/rbac/v1"
)

// FieldManager is the manager of the aggregated rules in managedFields, as kube names it.
const FieldManager = "clusterrole-aggregation-controller"

// Source is what the controller reads: the current ClusterRoles (shared, never changed) and a channel
// that closes at their next change. The RBAC policy index (rbac.Policy) is one, fed by the watch cache.
type Source interface {
	ClusterRoles() []*rbacv1.ClusterRole
	Changed() <-chan struct{}
}

// Controller writes the aggregated rules.
type Controller struct {
	source Source
	client rbacv1client.ClusterRolesGetter
	log    *slog.Logger
	// retry is how long a failed sync waits before trying again without a change.
	retry time.Duration
}

// New returns a controller that reads source and writes through client.
func New(source Source, client rbacv1client.ClusterRolesGetter, log *slog.Logger) *Controller {
	return &Controller{source: source, client: client, log: log.With("component", "clusterrole-aggregation-controller"), retry: time.Second}
}

// Run syncs every aggregated ClusterRole now and after every change, until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	for {
		changed := c.source.Changed()
		wait := time.Duration(-1)
		if err := c.SyncAll(ctx); err != nil && ctx.Err() == nil {
			// A conflict means the role changed under us: its next version is on its way.
			level := slog.LevelWarn
			if apierrors.IsConflict(err) {
				level = slog.LevelDebug
			}
			c.log.Log(ctx, level, "aggregating cluster roles failed; retrying", "err", err)
			wait = c.retry
		}
		if !c.await(ctx, changed, wait) {
			return
		}
	}
}

// await returns when changed closes or, with wait >= 0, after wait; false when ctx ended.
func (c *Controller) await(ctx context.Context, changed <-chan struct{}, wait time.Duration) bool {
	var retry <-chan time.Time
	if wait >= 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		retry = t.C
	}
	select {
	case <-ctx.Done():
		return false
	case <-changed:
	case <-retry:
	}
	return true
}

// SyncAll brings every aggregated ClusterRole up to date.
func (c *Controller) SyncAll(ctx context.Context) error {
	roles := c.source.ClusterRoles()
	slices.SortFunc(roles, func(a, b *rbacv1.ClusterRole) int { return strings.Compare(a.Name, b.Name) })
	var errs []error
	for _, r := range roles {
		if r.AggregationRule == nil || len(r.AggregationRule.ClusterRoleSelectors) == 0 {
			continue
		}
		rules, err := Aggregate(r, roles)
		if err != nil {
			errs = append(errs, fmt.Errorf("clusterrole %s: %w", r.Name, err))
			continue
		}
		if equality.Semantic.DeepEqual(rules, r.Rules) {
			continue
		}
		updated := r.DeepCopy()
		updated.Rules = rules
		if _, err := c.client.ClusterRoles().Update(ctx, updated, metav1.UpdateOptions{FieldManager: FieldManager}); err != nil {
			errs = append(errs, fmt.Errorf("updating clusterrole %s: %w", r.Name, err))
			continue
		}
		c.log.Debug("aggregated the rules of a cluster role", "name", r.Name, "rules", len(rules))
	}
	return errors.Join(errs...)
}

// Aggregate returns the rules role gathers from roles (sorted by name): the rules of every other role
// its selectors match, each rule once, in selector order and then name order.
func Aggregate(role *rbacv1.ClusterRole, roles []*rbacv1.ClusterRole) ([]rbacv1.PolicyRule, error) {
	var rules []rbacv1.PolicyRule
	for _, s := range role.AggregationRule.ClusterRoleSelectors {
		selector, err := metav1.LabelSelectorAsSelector(&s)
		if err != nil {
			return nil, fmt.Errorf("clusterRoleSelector: %w", err)
		}
		for _, other := range roles {
			if other.Name == role.Name || !selector.Matches(labels.Set(other.Labels)) {
				continue
			}
			for _, rule := range other.Rules {
				if !slices.ContainsFunc(rules, func(have rbacv1.PolicyRule) bool { return equality.Semantic.DeepEqual(have, rule) }) {
					rules = append(rules, rule)
				}
			}
		}
	}
	return rules, nil
}
