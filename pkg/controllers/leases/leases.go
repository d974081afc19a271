// Package leases keeps the Leases each replica renews for itself in kube-system:
//   - kube-apiserver's identity Lease (KEP-1965), apiserver-<hash of the host name>, labelled
//     apiserver.kubernetes.io/identity=kube-apiserver, through which clients count the servers;
//   - with an embedded etcd, a Lease per etcd member, apictl-etcd-member-<id>, that carries the
//     member's own status: another replica cannot ask that member, whose client port is private to
//     it, and `apictl status` reads the sizes and raft index of every member from these.
//
// Expired Leases of either kind are deleted, as kube's apiserver lease garbage collector does.
//
// Ported from k8s.io/kubernetes v1.37.2 pkg/controlplane/apiserver/server.go (the identity lease
// hook and labelAPIServerHeartbeatFunc), staging/src/k8s.io/apiserver/pkg/server/config.go (the
// identity's hash) and pkg/controlplane/controller/apiserverleasegc/gc_controller.go.
package leases

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/cryptobyte"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	coordinationlisters "k8s.io/client-go/listers/coordination/v1"
	"k8s.io/component-helpers/apimachinery/lease"
	"k8s.io/utils/clock"
)

// Kube's identity Lease: its label, its duration and how often it is renewed and collected.
const (
	IdentityLabel          = "apiserver.kubernetes.io/identity"
	IdentityValue          = "kube-apiserver"
	IdentityDuration       = 3600 * time.Second
	IdentityRenewInterval  = 10 * time.Second
	IdentityGCPeriod       = 3600 * time.Second
	identityLeaseNamespace = metav1.NamespaceSystem
)

// The member Leases: a label that holds the member's ID (hex, as etcdctl writes it) and an annotation
// that holds its status. They expire within a minute of their replica's last renewal.
const (
	MemberLabel         = "apictl.io/etcd-member"
	MemberAnnotation    = "apictl.io/etcd-member-status"
	MemberDuration      = 60 * time.Second
	MemberRenewInterval = 10 * time.Second
	memberNamePrefix    = "apictl-etcd-member-"
)

// IdentityName is the name kube-apiserver gives its identity Lease on host: apiserver- and the
// first 16 bytes of the SHA-256 of the length-prefixed host name and "kube-apiserver", in lower-case
// base32. Replicas on one host share it, as kube's do.
func IdentityName(host string) (string, error) {
	b := cryptobyte.NewBuilder(nil)
	b.AddUint16LengthPrefixed(func(b *cryptobyte.Builder) { b.AddBytes([]byte(host)) })
	b.AddUint16LengthPrefixed(func(b *cryptobyte.Builder) { b.AddBytes([]byte(IdentityValue)) })
	data, err := b.Bytes()
	if err != nil {
		return "", fmt.Errorf("hashing the host name %q for the identity Lease: %w", host, err)
	}
	hash := sha256.Sum256(data)
	return "apiserver-" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(hash[:16])), nil
}

// MemberStatus is what a member Lease carries: the member's own answer to etcd's Status.
type MemberStatus struct {
	DBSize    int64  `json:"dbSizeBytes"`
	DBInUse   int64  `json:"dbSizeInUseBytes"`
	RaftTerm  uint64 `json:"raftTerm"`
	RaftIndex uint64 `json:"raftIndex"`
}

// Member is a member Lease read back: the status and when it was reported.
type Member struct {
	MemberStatus
	Reported time.Time
}

// Config is what the controllers need.
type Config struct {
	Client kubernetes.Interface
	// Leases lists kube-system's Leases (an informer's lister, so that reading them lists nothing).
	Leases coordinationlisters.LeaseLister
	// MemberID and Status, when set, keep this replica's member Lease: the embedded etcd member's
	// ID and a function that asks it for its status.
	MemberID uint64
	Status   func(ctx context.Context) (MemberStatus, error)
	Logger   *slog.Logger
}

// Run renews this replica's Leases and collects expired ones until ctx ends.
func Run(ctx context.Context, cfg Config) error {
	host, err := os.Hostname()
	if err != nil {
		return fmt.Errorf("reading the host name for the identity Lease: %w", err)
	}
	id, err := IdentityName(host)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	identity := lease.NewController(clock.RealClock{}, cfg.Client, id+"_"+string(uuid.NewUUID()), int32(IdentityDuration/time.Second),
		nil, IdentityRenewInterval, id, identityLeaseNamespace, func(l *coordinationv1.Lease) error {
			setLabel(l, IdentityLabel, IdentityValue)
			setLabel(l, corev1.LabelHostname, host)
			return nil
		})
	wg.Go(func() { identity.Run(ctx) })
	wg.Go(func() { collect(ctx, cfg, IdentityLabel+"="+IdentityValue, IdentityGCPeriod) })
	if cfg.Status != nil {
		member := strconv.FormatUint(cfg.MemberID, 16)
		renew := lease.NewController(clock.RealClock{}, cfg.Client, member, int32(MemberDuration/time.Second),
			nil, MemberRenewInterval, memberNamePrefix+member, identityLeaseNamespace, func(l *coordinationv1.Lease) error {
				setLabel(l, MemberLabel, member)
				st, err := cfg.Status(ctx)
				if err != nil {
					// The Lease is still renewed: its replica is up; the status it had stays.
					cfg.Logger.Debug("asking the embedded etcd member for its status for its Lease", "err", err)
					return nil
				}
				raw, err := json.Marshal(st)
				if err != nil {
					return err
				}
				if l.Annotations == nil {
					l.Annotations = map[string]string{}
				}
				l.Annotations[MemberAnnotation] = string(raw)
				return nil
			})
		wg.Go(func() { renew.Run(ctx) })
		wg.Go(func() { collect(ctx, cfg, MemberLabel, MemberDuration) })
	}
	wg.Wait()
	return nil
}

func setLabel(l *coordinationv1.Lease, key, value string) {
	if l.Labels == nil {
		l.Labels = map[string]string{}
	}
	l.Labels[key] = value
}

// Members reads the member Leases that have not expired, by member ID.
func Members(leases coordinationlisters.LeaseLister, now time.Time) map[uint64]Member {
	sel, err := labels.Parse(MemberLabel)
	if err != nil {
		return nil
	}
	list, err := leases.Leases(identityLeaseNamespace).List(sel)
	if err != nil {
		return nil
	}
	out := map[uint64]Member{}
	for _, l := range list {
		id, err := strconv.ParseUint(l.Labels[MemberLabel], 16, 64)
		if err != nil || expired(l, now) || l.Spec.RenewTime == nil {
			continue
		}
		var st MemberStatus
		if json.Unmarshal([]byte(l.Annotations[MemberAnnotation]), &st) != nil {
			continue
		}
		out[id] = Member{MemberStatus: st, Reported: l.Spec.RenewTime.Time}
	}
	return out
}

// Identities are the holders of the identity Leases that have not expired: the servers.
func Identities(leases coordinationlisters.LeaseLister, now time.Time) []string {
	sel, err := labels.Parse(IdentityLabel + "=" + IdentityValue)
	if err != nil {
		return nil
	}
	list, err := leases.Leases(identityLeaseNamespace).List(sel)
	if err != nil {
		return nil
	}
	var out []string
	for _, l := range list {
		if !expired(l, now) && l.Spec.HolderIdentity != nil {
			out = append(out, *l.Spec.HolderIdentity)
		}
	}
	return out
}

// expired is kube's isLeaseExpired: no renewal, no duration, or a renewal older than the duration.
func expired(l *coordinationv1.Lease, now time.Time) bool {
	return l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil ||
		l.Spec.RenewTime.Add(time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second).Before(now)
}

// collect deletes the expired Leases matching selector every period, as kube's apiserver lease
// garbage collector does: only the version it saw expire, so that a renewal meanwhile keeps it.
func collect(ctx context.Context, cfg Config, selector string, period time.Duration) {
	sel, err := labels.Parse(selector)
	if err != nil {
		cfg.Logger.Error("collecting expired Leases", "selector", selector, "err", err)
		return
	}
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		list, err := cfg.Leases.Leases(identityLeaseNamespace).List(sel)
		if err != nil {
			continue
		}
		for _, l := range list {
			if !expired(l, time.Now()) {
				continue
			}
			err := cfg.Client.CoordinationV1().Leases(l.Namespace).Delete(ctx, l.Name, metav1.DeleteOptions{
				Preconditions: &metav1.Preconditions{UID: &l.UID, ResourceVersion: &l.ResourceVersion}})
			if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				cfg.Logger.Info("deleting an expired Lease", "lease", l.Namespace+"/"+l.Name, "err", err)
			}
		}
	}
}
