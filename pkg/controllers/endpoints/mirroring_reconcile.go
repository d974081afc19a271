//lint:file-ignore SA1019 core v1 Endpoints are deprecated in kube, which still serves them and keeps them with its controllers: so does apictl.

// Ported from k8s.io/kubernetes v1.37.2 pkg/controller/endpointslicemirroring/reconciler.go,
// reconciler_helpers.go and utils.go, without metrics.

package endpoints

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	endpointsliceutil "k8s.io/endpointslice/util"
	netutils "k8s.io/utils/net"
)

// mirroringReconciler writes the slices of one Endpoints.
type mirroringReconciler struct {
	client  kubernetes.Interface
	tracker *endpointsliceutil.EndpointSliceTracker
	events  record.EventRecorder
	log     *slog.Logger
	// maxEndpointsPerSubset is how many addresses of a subset are mirrored; the rest are skipped.
	maxEndpointsPerSubset int
}

// reconcile makes the mirrored slices match the Endpoints: one slice per address type and set of
// ports, holding at most maxEndpointsPerSubset addresses.
func (r *mirroringReconciler) reconcile(ctx context.Context, endpoints *corev1.Endpoints, existing []*discoveryv1.EndpointSlice) error {
	d := newDesiredCalc()
	invalid, skipped := 0, 0
	for _, subset := range RepackSubsets(endpoints.DeepCopy().Subsets) {
		key := d.initPorts(subset.Ports)
		total, added := len(subset.Addresses)+len(subset.NotReadyAddresses), 0
		for _, group := range []struct {
			addrs []corev1.EndpointAddress
			ready bool
		}{{subset.Addresses, true}, {subset.NotReadyAddresses, false}} {
			for _, a := range group.addrs {
				if added >= r.maxEndpointsPerSubset {
					break
				}
				if d.addAddress(a, key, group.ready) {
					added++
				} else {
					invalid++
					r.log.Info("an address in Endpoints is not a valid IP: it is not mirrored to an EndpointSlice",
						"endpoints", endpoints.Namespace+"/"+endpoints.Name, "ip", a.IP)
				}
			}
		}
		skipped += total - added
	}
	if invalid > 0 {
		r.events.Eventf(endpoints, corev1.EventTypeWarning, "InvalidIPAddress",
			"Skipped %d invalid IP addresses when mirroring to EndpointSlices", invalid)
	}
	if skipped > invalid {
		r.log.Info("addresses in Endpoints were skipped for exceeding the most mirrored per subset", "skipped", skipped,
			"endpoints", endpoints.Namespace+"/"+endpoints.Name)
		r.events.Eventf(endpoints, corev1.EventTypeWarning, "TooManyAddressesToMirror",
			"A max of %d addresses can be mirrored to EndpointSlices per Endpoints subset. %d addresses were skipped", r.maxEndpointsPerSubset, skipped)
	}

	existingByKey := slicesByKey(existing)
	var actions sliceActions
	for key, desired := range d.endpointsByKey {
		actions.append(r.reconcileByPortMapping(endpoints, existingByKey[key], desired, d.portsByKey[key], key.addressType()))
	}
	// Slices of ports and address types no longer wanted go.
	for key, slices := range existingByKey {
		if _, ok := d.endpointsByKey[key]; !ok {
			actions.toDelete = append(actions.toDelete, slices...)
		}
	}
	return r.finalize(ctx, endpoints, actions)
}

// reconcileByPortMapping keeps the first existing slice of a key (updating it if it differs) and
// deletes the others.
func (r *mirroringReconciler) reconcileByPortMapping(endpoints *corev1.Endpoints, existing []*discoveryv1.EndpointSlice,
	desired endpointsliceutil.EndpointSet, ports []discoveryv1.EndpointPort, addressType discoveryv1.AddressType) sliceActions {
	var actions sliceActions
	if desired.Len() == 0 {
		actions.toDelete = existing
		return actions
	}
	sliceName := ""
	if len(existing) > 0 {
		actions.toDelete = existing[1:]
		first := existing[0]
		annotations := withoutKeys(endpoints.Annotations, corev1.EndpointsLastChangeTriggerTime, corev1.LastAppliedConfigAnnotation)
		sliceLabels := withoutKeys(first.Labels, discoveryv1.LabelManagedBy, discoveryv1.LabelServiceName)
		if !endpointsChanged(first, desired) &&
			equality.Semantic.DeepEqual(endpoints.Labels, sliceLabels) &&
			equality.Semantic.DeepEqual(annotations, first.Annotations) &&
			!ownerReplaced(endpoints, first) {
			if !r.tracker.Has(first) {
				r.tracker.Update(first)
			}
			return actions
		}
		sliceName = first.Name
	}
	slice := newMirroredSlice(endpoints, ports, addressType, sliceName)
	for desired.Len() > 0 && len(slice.Endpoints) < r.maxEndpointsPerSubset {
		ep, _ := desired.PopAny()
		slice.Endpoints = append(slice.Endpoints, *ep)
	}
	if slice.Name != "" {
		actions.toUpdate = append(actions.toUpdate, slice)
	} else {
		actions.toCreate = append(actions.toCreate, slice)
	}
	return actions
}

// finalize writes: slices to create reuse, by address type, the names of slices to delete.
func (r *mirroringReconciler) finalize(ctx context.Context, endpoints *corev1.Endpoints, actions sliceActions) error {
	actions.recycle()
	client := r.client.DiscoveryV1().EndpointSlices(endpoints.Namespace)
	// Endpoints being deleted get no new slices.
	if endpoints.DeletionTimestamp == nil {
		for _, s := range actions.toCreate {
			created, err := client.Create(ctx, s, metav1.CreateOptions{})
			if err != nil {
				if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
					return nil
				}
				return fmt.Errorf("creating an EndpointSlice for Endpoints %s/%s: %w", endpoints.Namespace, endpoints.Name, err)
			}
			r.tracker.Update(created)
		}
	}
	for _, s := range actions.toUpdate {
		updated, err := client.Update(ctx, s, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("updating the EndpointSlice %s of Endpoints %s/%s: %w", s.Name, endpoints.Namespace, endpoints.Name, err)
		}
		r.tracker.Update(updated)
	}
	for _, s := range actions.toDelete {
		if err := client.Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting the EndpointSlice %s of Endpoints %s/%s: %w", s.Name, endpoints.Namespace, endpoints.Name, err)
		}
		r.tracker.ExpectDeletion(s)
	}
	return nil
}

// deleteSlices deletes the mirrored slices of Endpoints that are gone or no longer mirrored.
func (r *mirroringReconciler) deleteSlices(ctx context.Context, namespace, name string, slices []*discoveryv1.EndpointSlice) error {
	var errs []error
	for _, s := range slices {
		if err := r.client.DiscoveryV1().EndpointSlices(namespace).Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("deleting %d of the %d EndpointSlices of Endpoints %s/%s, among them: %w", len(errs), len(slices), namespace, name, errs[0])
	}
	return nil
}

// endpointsChanged says whether a slice's endpoints differ from the desired ones.
func endpointsChanged(s *discoveryv1.EndpointSlice, desired endpointsliceutil.EndpointSet) bool {
	matches := 0
	for i := range s.Endpoints {
		got := desired.Get(&s.Endpoints[i])
		if got == nil || !endpointsliceutil.EndpointsEqualBeyondHash(got, &s.Endpoints[i]) {
			return true
		}
		matches++
	}
	return desired.Len() != matches
}

// ownerReplaced says the slice belongs to an earlier Endpoints of the same name.
func ownerReplaced(endpoints *corev1.Endpoints, s *discoveryv1.EndpointSlice) bool {
	return slices.ContainsFunc(s.OwnerReferences, func(o metav1.OwnerReference) bool {
		return o.Kind == "Endpoints" && o.Name == endpoints.Name && o.UID != endpoints.UID
	})
}

// sliceActions are the writes of a reconcile.
type sliceActions struct {
	toCreate, toUpdate, toDelete []*discoveryv1.EndpointSlice
}

func (a *sliceActions) append(b sliceActions) {
	a.toCreate = append(a.toCreate, b.toCreate...)
	a.toUpdate = append(a.toUpdate, b.toUpdate...)
	a.toDelete = append(a.toDelete, b.toDelete...)
}

// recycle turns a create and a delete of the same address type into an update.
func (a *sliceActions) recycle() {
	for _, t := range []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6} {
		for {
			ci := slices.IndexFunc(a.toCreate, func(s *discoveryv1.EndpointSlice) bool { return s.AddressType == t })
			di := slices.IndexFunc(a.toDelete, func(s *discoveryv1.EndpointSlice) bool { return s.AddressType == t })
			if ci < 0 || di < 0 {
				break
			}
			s := a.toCreate[ci]
			s.Name = a.toDelete[di].Name
			a.toCreate = slices.Delete(a.toCreate, ci, ci+1)
			a.toDelete = slices.Delete(a.toDelete, di, di+1)
			a.toUpdate = append(a.toUpdate, s)
		}
	}
}

// portKey groups endpoints by address type and ports.
type portKey string

func newPortKey(ports []discoveryv1.EndpointPort, t discoveryv1.AddressType) portKey {
	return portKey(fmt.Sprintf("%s-%s", t, endpointsliceutil.NewPortMapKey(ports)))
}

func (k portKey) addressType() discoveryv1.AddressType {
	if strings.HasPrefix(string(k), string(discoveryv1.AddressTypeIPv6)) {
		return discoveryv1.AddressTypeIPv6
	}
	return discoveryv1.AddressTypeIPv4
}

func slicesByKey(existing []*discoveryv1.EndpointSlice) map[portKey][]*discoveryv1.EndpointSlice {
	out := map[portKey][]*discoveryv1.EndpointSlice{}
	for _, s := range existing {
		k := newPortKey(s.Ports, s.AddressType)
		out[k] = append(out[k], s)
	}
	return out
}

// desiredCalc gathers the desired endpoints by key.
type desiredCalc struct {
	portsByKey     map[portKey][]discoveryv1.EndpointPort
	endpointsByKey map[portKey]endpointsliceutil.EndpointSet
}

func newDesiredCalc() *desiredCalc {
	return &desiredCalc{portsByKey: map[portKey][]discoveryv1.EndpointPort{}, endpointsByKey: map[portKey]endpointsliceutil.EndpointSet{}}
}

// initPorts registers a subset's ports for both address types and returns their keys.
func (d *desiredCalc) initPorts(subsetPorts []corev1.EndpointPort) map[discoveryv1.AddressType]portKey {
	ports := make([]discoveryv1.EndpointPort, 0, len(subsetPorts))
	for _, p := range subsetPorts {
		p := p.DeepCopy()
		ports = append(ports, discoveryv1.EndpointPort{Name: &p.Name, Port: &p.Port, Protocol: &p.Protocol, AppProtocol: p.AppProtocol})
	}
	keys := map[discoveryv1.AddressType]portKey{}
	for _, t := range []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6} {
		k := newPortKey(ports, t)
		keys[t] = k
		if _, ok := d.endpointsByKey[k]; !ok {
			d.endpointsByKey[k] = endpointsliceutil.EndpointSet{}
		}
		d.portsByKey[k] = ports
	}
	return keys
}

// addAddress adds an address under its type's key; false when it is not an IP.
func (d *desiredCalc) addAddress(a corev1.EndpointAddress, keys map[discoveryv1.AddressType]portKey, ready bool) bool {
	ip := netutils.ParseIPSloppy(a.IP)
	if ip == nil {
		return false
	}
	t := discoveryv1.AddressTypeIPv4
	if ip.To4() == nil {
		t = discoveryv1.AddressTypeIPv6
	}
	ep := &discoveryv1.Endpoint{Addresses: []string{ip.String()}, Conditions: discoveryv1.EndpointConditions{Ready: &ready},
		TargetRef: a.TargetRef, NodeName: a.NodeName}
	if a.Hostname != "" {
		ep.Hostname = &a.Hostname
	}
	d.endpointsByKey[keys[t]].Insert(ep)
	return true
}

// newMirroredSlice is a slice of endpoints' labels and annotations (but kubectl's and the trigger
// time), owned by it; without a name it is created from the Endpoints' name as a prefix.
func newMirroredSlice(endpoints *corev1.Endpoints, ports []discoveryv1.EndpointPort, t discoveryv1.AddressType, name string) *discoveryv1.EndpointSlice {
	owner := metav1.NewControllerRef(endpoints, schema.GroupVersionKind{Version: "v1", Kind: "Endpoints"})
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Namespace:       endpoints.Namespace,
			Labels:          maps.Clone(endpoints.Labels),
			Annotations:     withoutKeys(endpoints.Annotations, corev1.EndpointsLastChangeTriggerTime, corev1.LastAppliedConfigAnnotation),
			OwnerReferences: []metav1.OwnerReference{*owner},
		},
		Ports:       ports,
		AddressType: t,
		Endpoints:   []discoveryv1.Endpoint{},
	}
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	s.Labels[discoveryv1.LabelServiceName] = endpoints.Name
	s.Labels[discoveryv1.LabelManagedBy] = MirroringControllerName
	if name == "" {
		s.GenerateName = endpoints.Name + "-"
		if len(apimachineryvalidation.NameIsDNSSubdomain(s.GenerateName, true)) != 0 {
			s.GenerateName = endpoints.Name
		}
	}
	return s
}

// withoutKeys is a copy of m without keys (never nil).
func withoutKeys(m map[string]string, keys ...string) map[string]string {
	out := make(map[string]string, len(m))
	maps.Copy(out, m)
	for _, k := range keys {
		delete(out, k)
	}
	return out
}
