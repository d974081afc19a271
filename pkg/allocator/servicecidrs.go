package allocator

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apictl/apictl/pkg/storage"
)

// serviceCIDRPrefix is where ServiceCIDRs are stored.
var serviceCIDRPrefix = storage.ResourcePrefix(networkingv1.GroupName, "servicecidrs", "")

// readyRanges are the ranges of family that cluster IPs are allocated from, as kube's MetaAllocator
// has them: every range of a ServiceCIDR that is ready (a Ready condition that is not False or
// Unknown, or none yet) and not being deleted; the flag's range first, then the others by
// ServiceCIDR name. They are read with quorum on each allocation, so that every replica sees a
// ServiceCIDR as soon as it is written. While no ServiceCIDR of family exists at all (the default
// one is not made yet, or the networking.k8s.io API is turned off), the flag's range is the one.
func (a *Allocator) readyRanges(ctx context.Context, fam corev1.IPFamily) ([]ipRange, error) {
	res, err := a.store.List(ctx, serviceCIDRPrefix, storage.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the ServiceCIDRs: %w", err)
	}
	cidrs := make([]networkingv1.ServiceCIDR, 0, len(res.Items))
	for _, kv := range res.Items {
		var c networkingv1.ServiceCIDR
		if err := json.Unmarshal(kv.Value, &c); err != nil {
			return nil, fmt.Errorf("decoding the ServiceCIDR %s: %w", kv.Key, err)
		}
		cidrs = append(cidrs, c)
	}
	slices.SortFunc(cidrs, func(x, y networkingv1.ServiceCIDR) int { return cmp.Compare(x.Name, y.Name) })
	flag, configured := a.ranges[fam]
	var out []ipRange
	seen := false // a ServiceCIDR of fam, ready or not
	add := func(r ipRange) {
		if !slices.ContainsFunc(out, func(o ipRange) bool { return o.prefix == r.prefix }) {
			out = append(out, r)
		}
	}
	for _, c := range cidrs {
		for _, s := range c.Spec.CIDRs {
			_, n, err := net.ParseCIDR(s)
			if err != nil {
				continue // validation keeps these out
			}
			r, err := newIPRange(n)
			if err != nil || r.family != fam {
				continue
			}
			seen = true
			if c.DeletionTimestamp.IsZero() && isReady(&c) {
				add(r)
			}
		}
	}
	if !seen {
		if configured {
			return []ipRange{flag}, nil
		}
		return nil, nil
	}
	if configured {
		if i := slices.IndexFunc(out, func(o ipRange) bool { return o.prefix == flag.prefix }); i > 0 {
			out = slices.Insert(slices.Delete(out, i, i+1), 0, flag)
		}
	}
	return out, nil
}

// isReady is kube's: a ServiceCIDR is ready unless its Ready condition says otherwise, so that
// allocation works where no controller sets the condition.
func isReady(c *networkingv1.ServiceCIDR) bool {
	cond := apimeta.FindStatusCondition(c.Status.Conditions, networkingv1.ServiceCIDRConditionReady)
	return cond == nil || cond.Status == metav1.ConditionTrue
}
