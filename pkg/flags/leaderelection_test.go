package flags

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestLeaderElectionOptions(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want []string // the errors, in order
	}{
		{name: "defaults"},
		{name: "off skips the checks", args: []string{"--leader-elect=false", "--leader-elect-lease-duration=0", "--leader-elect-resource-lock=endpoints"}},
		{name: "short settings for tests", args: []string{"--leader-elect-lease-duration=3s", "--leader-elect-renew-deadline=2s", "--leader-elect-retry-period=500ms"}},
		{name: "renew deadline not below lease duration", args: []string{"--leader-elect-lease-duration=10s"},
			want: []string{"--leader-elect-renew-deadline 10s must be less than --leader-elect-lease-duration (10s): the leader must give up before others may take over"}},
		{name: "retry period that does not fit the renew deadline", args: []string{"--leader-elect-retry-period=9s"},
			want: []string{"--leader-elect-retry-period 9s must be less than --leader-elect-renew-deadline (10s) divided by 1.2: retries wait up to 20% longer, and at least one must fit in the renew deadline"}},
		{name: "sub-second lease", args: []string{"--leader-elect-lease-duration=900ms", "--leader-elect-renew-deadline=500ms", "--leader-elect-retry-period=100ms"},
			want: []string{"--leader-elect-lease-duration 900ms must be at least 1s: the Lease stores whole seconds"}},
		{name: "everything wrong at once", args: []string{"--leader-elect-lease-duration=0", "--leader-elect-renew-deadline=-1s",
			"--leader-elect-retry-period=0", "--leader-elect-resource-lock=endpoints", "--leader-elect-resource-name=Not_A_Name",
			"--leader-elect-resource-namespace="},
			want: []string{
				"--leader-elect-lease-duration 0s must be greater than zero",
				"--leader-elect-renew-deadline -1s must be greater than zero",
				"--leader-elect-retry-period 0s must be greater than zero",
				"--leader-elect-resource-lock endpoints is not supported: use leases (a coordination.k8s.io/v1 Lease)",
				"--leader-elect-resource-name Not_A_Name is not a valid Lease name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
				"--leader-elect-resource-namespace must not be empty: name the Lease's namespace, e.g. kube-system",
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := NewLeaderElectionOptions()
			var fss NamedFlagSets
			o.AddFlags(fss.FlagSet(SectionLeaderElection))
			if err := fss.FlagSet(SectionLeaderElection).Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			if err := o.Complete(); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, err := range o.Validate() {
				got = append(got, err.Error())
				if p, ok := err.(*Problem); !ok || p.Section != SectionLeaderElection {
					t.Errorf("%v is not a problem of the leader election section", err)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// The defaults are kube-controller-manager's, with apictl's own Lease.
func TestLeaderElectionDefaults(t *testing.T) {
	o := NewLeaderElectionOptions()
	want := LeaderElectionOptions{LeaderElect: true, LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second,
		RetryPeriod: 2 * time.Second, ResourceLock: "leases", ResourceName: "apictl-controllers", ResourceNamespace: "kube-system"}
	if *o != want {
		t.Errorf("defaults %+v, want %+v", *o, want)
	}
}
