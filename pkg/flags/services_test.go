package flags

import (
	"fmt"
	"strings"
	"testing"
)

func TestServicesOptions(t *testing.T) {
	for _, tt := range []struct {
		ranges, ports string
		want          []string // the completed ranges, or
		err           string   // a substring of the one error
	}{
		{ranges: "", want: []string{"10.0.0.0/24"}},
		{ranges: "10.96.0.0/12", want: []string{"10.96.0.0/12"}},
		{ranges: "10.96.0.1/12", want: []string{"10.96.0.0/12"}},
		{ranges: "fd00:10:96::/112,10.96.0.0/16", want: []string{"fd00:10:96::/112", "10.96.0.0/16"}},
		{ranges: "10.96.0.0", err: "--service-cluster-ip-range 10.96.0.0 has an entry (0) that is not a valid CIDR"},
		{ranges: "10.0.0.0/24,10.1.0.0/24", err: "has two ranges of the same IP family: give one IPv4 and one IPv6 range"},
		{ranges: "10.0.0.0/24,fd00::/112,10.2.0.0/24", err: "must not contain more than two entries"},
		{ranges: "10.0.0.0/31", err: "10.0.0.0/31 leaves no address for services"},
		{ranges: "10.0.0.0/24", ports: "30000-29000", err: "--service-node-port-range"},
	} {
		t.Run(tt.ranges+" "+tt.ports, func(t *testing.T) {
			o := NewServicesOptions()
			o.ClusterIPRange = tt.ranges
			if tt.ports != "" {
				if err := o.NodePortRange.Set(tt.ports); err != nil {
					if strings.Contains(tt.err, "node-port") {
						return // refused as it is parsed
					}
					t.Fatal(err)
				}
			}
			if err := o.Complete(); err != nil {
				t.Fatal(err)
			}
			errs := o.Validate()
			if tt.err != "" {
				if len(errs) != 1 || !strings.Contains(errs[0].Error(), tt.err) {
					t.Fatalf("errors %v, want one with %q", errs, tt.err)
				}
				return
			}
			if len(errs) > 0 {
				t.Fatalf("errors %v", errs)
			}
			if got := fmt.Sprint(o.ServiceCIDRs()); got != fmt.Sprint(tt.want) {
				t.Errorf("ranges %s, want %v", got, tt.want)
			}
		})
	}
	if o := NewServicesOptions(); o.NodePortRange.String() != "30000-32767" {
		t.Errorf("default node ports %s", o.NodePortRange.String())
	}
}
