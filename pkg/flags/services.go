package flags

import (
	"fmt"
	"net"
	"strings"

	"github.com/spf13/pflag"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	netutils "k8s.io/utils/net"
)

// DefaultServiceClusterIPRange is kube-apiserver's range when --service-cluster-ip-range is unset.
const DefaultServiceClusterIPRange = "10.0.0.0/24"

// SectionMisc holds the flags kube-apiserver prints under "Misc flags", the service ranges among them.
const SectionMisc = "misc"

// ServicesOptions are the ranges services draw their cluster IPs and node ports from.
type ServicesOptions struct {
	// ClusterIPRange is one CIDR, or two of different IP families (dual-stack), comma-separated; the
	// first is the primary family. Empty means DefaultServiceClusterIPRange.
	ClusterIPRange string
	// NodePortRange is inclusive at both ends.
	NodePortRange utilnet.PortRange

	cidrs []*net.IPNet
}

// NewServicesOptions returns kube's defaults: node ports 30000-32767, the default cluster IP range.
func NewServicesOptions() *ServicesOptions {
	return &ServicesOptions{NodePortRange: utilnet.PortRange{Base: 30000, Size: 2768}}
}

// AddFlags registers the service range flags with kube's names and help.
func (o *ServicesOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ClusterIPRange, "service-cluster-ip-range", o.ClusterIPRange, ""+
		"A CIDR notation IP range from which to assign service cluster IPs. This must not "+
		"overlap with any IP ranges assigned to nodes or pods. Max of two dual-stack CIDRs is allowed. "+
		"Defaults to "+DefaultServiceClusterIPRange+".")
	fs.Var(&o.NodePortRange, "service-node-port-range", ""+
		"A port range to reserve for services with NodePort visibility.  This must not overlap with the ephemeral port range on nodes.  "+
		"Example: '30000-32767'. Inclusive at both ends of the range.")
}

// Complete parses the cluster IP range, or takes the default.
func (o *ServicesOptions) Complete() error {
	o.cidrs = nil
	ranges := o.ClusterIPRange
	if strings.TrimSpace(ranges) == "" {
		ranges = DefaultServiceClusterIPRange
	}
	for _, r := range strings.Split(ranges, ",") {
		if _, cidr, err := netutils.ParseCIDRSloppy(strings.TrimSpace(r)); err == nil {
			o.cidrs = append(o.cidrs, cidr)
		} else {
			o.cidrs = append(o.cidrs, nil)
		}
	}
	return nil
}

// Validate reports a range that is not a CIDR, more than two, or two of one family, with kube's
// messages and the flag's value.
func (o *ServicesOptions) Validate() []error {
	var errs []error
	problem := func(format string, args ...any) {
		errs = append(errs, problemf(SectionMisc, "service-cluster-ip-range", o.ClusterIPRange, format, args...))
	}
	if len(o.cidrs) > 2 {
		problem("must not contain more than two entries: give one range, or one IPv4 and one IPv6 range")
	}
	for i, c := range o.cidrs {
		if c == nil {
			problem("has an entry (%d) that is not a valid CIDR: write it as 10.0.0.0/24 or fd00:10:96::/112", i)
		}
	}
	if len(o.cidrs) == 2 && o.cidrs[0] != nil && o.cidrs[1] != nil {
		if dual, err := netutils.IsDualStackCIDRs(o.cidrs); err != nil || !dual {
			problem("has two ranges of the same IP family: give one IPv4 and one IPv6 range")
		}
	}
	for _, c := range o.cidrs {
		if c == nil {
			continue
		}
		if ones, bits := c.Mask.Size(); bits-ones < 2 {
			problem("%s leaves no address for services: use a range of at least 4 addresses", c)
		}
	}
	if o.NodePortRange.Size <= 0 {
		errs = append(errs, problemf(SectionMisc, "service-node-port-range", o.NodePortRange.String(), "is empty: use a range such as 30000-32767"))
	}
	return errs
}

// ServiceCIDRs returns the completed cluster IP ranges, the primary first; nil before Complete or when
// invalid.
func (o *ServicesOptions) ServiceCIDRs() []*net.IPNet {
	for _, c := range o.cidrs {
		if c == nil {
			return nil
		}
	}
	return o.cidrs
}

// String shows the ranges in use, for logs.
func (o *ServicesOptions) String() string {
	return fmt.Sprintf("cluster IPs %v, node ports %s", o.cidrs, o.NodePortRange.String())
}
