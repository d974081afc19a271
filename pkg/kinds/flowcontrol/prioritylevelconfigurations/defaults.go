package prioritylevelconfigurations

// Ported from k8s.io/kubernetes v1.37.2 pkg/apis/flowcontrol/v1/defaults.go (the SetDefaults_
// functions) in the order pkg/apis/flowcontrol/v1/zz_generated.defaults.go calls them.

import flowcontrolv1 "k8s.io/api/flowcontrol/v1"

// The defaults of a priority level's numbers.
const (
	DefaultHandSize                 int32 = 8
	DefaultQueues                   int32 = 64
	DefaultQueueLengthLimit         int32 = 50
	DefaultNominalConcurrencyShares int32 = 30
)

// SetDefaults is SetObjectDefaults_PriorityLevelConfiguration.
func SetDefaults(pl *flowcontrolv1.PriorityLevelConfiguration) {
	if e := pl.Spec.Exempt; e != nil {
		setZero(&e.NominalConcurrencyShares)
		setZero(&e.LendablePercent)
	}
	if l := pl.Spec.Limited; l != nil {
		if l.NominalConcurrencyShares == nil {
			n := DefaultNominalConcurrencyShares
			l.NominalConcurrencyShares = &n
		}
		setZero(&l.LendablePercent)
		if q := l.LimitResponse.Queuing; q != nil {
			if q.HandSize == 0 {
				q.HandSize = DefaultHandSize
			}
			if q.Queues == 0 {
				q.Queues = DefaultQueues
			}
			if q.QueueLengthLimit == 0 {
				q.QueueLengthLimit = DefaultQueueLengthLimit
			}
		}
	}
}

func setZero(p **int32) {
	if *p == nil {
		*p = new(int32)
	}
}
