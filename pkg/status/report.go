// Package status gathers the state of a running control plane into one Report, judges it (what is a
// warning, what is a problem) and prints it: the facts behind `apictl status` and the server's
// /apictl/v1/status endpoint.
//
// The Report's JSON is a stable schema (docs/operations.md): fields are added, never renamed or
// removed, within apiVersion apictl.io/v1.
package status

import "time"

// APIVersion names the schema of a Report's JSON.
const APIVersion = "apictl.io/v1"

// Severity grades a Finding; its order is that of the exit codes.
type Severity string

const (
	SeverityWarning Severity = "warning"
	SeverityProblem Severity = "problem"
)

// Exit codes of `apictl status`, for cron jobs and monitors.
const (
	ExitHealthy  = 0
	ExitWarnings = 1
	ExitProblems = 2
)

// Report is everything `apictl status` shows, in the order of its sections.
type Report struct {
	APIVersion string `json:"apiVersion"`
	// Time is when the facts were gathered.
	Time time.Time `json:"time"`
	// Findings are the warnings and problems, problems first; Exit is the exit code they make.
	Findings []Finding `json:"findings"`
	Exit     int       `json:"exit"`

	Server       Server        `json:"server"`
	Etcd         *Etcd         `json:"etcd,omitempty"`
	Snapshots    *Snapshots    `json:"snapshots,omitempty"`
	Certificates []Certificate `json:"certificates,omitempty"`
	// CertificatesError says why the cert dir could not be read.
	CertificatesError string       `json:"certificatesError,omitempty"`
	Controllers       *Controllers `json:"controllers,omitempty"`
	API               *API         `json:"api,omitempty"`
	Load              *Load        `json:"load,omitempty"`
}

// Finding is one warning or problem, in the section that shows it.
type Finding struct {
	Severity Severity `json:"severity"`
	Section  string   `json:"section"`
	Message  string   `json:"message"`
}

// Section names, as Findings and the table name them.
const (
	SectionServer       = "server"
	SectionEtcd         = "etcd"
	SectionSnapshots    = "snapshots"
	SectionCertificates = "certificates"
	SectionControllers  = "controllers"
	SectionAPI          = "api"
	SectionLoad         = "load"
)

// Server is the API server as its clients see it.
type Server struct {
	// URL is the server asked; empty when none was.
	URL string `json:"url,omitempty"`
	// Error says why the server did not answer; the other fields are then empty.
	Error   string `json:"error,omitempty"`
	Version string `json:"version,omitempty"`
	// Kubernetes is the Kubernetes version the server serves.
	Kubernetes string    `json:"kubernetesVersion,omitempty"`
	Started    time.Time `json:"started,omitzero"`
	// Ready is /readyz's answer; FailedChecks each check that failed, with its reason.
	Ready        bool    `json:"ready"`
	FailedChecks []Check `json:"failedChecks,omitempty"`
}

// Check is one failed readyz check.
type Check struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Etcd is the etcd cluster under the server.
type Etcd struct {
	// Embedded is true for apictl's own etcd, false for --etcd-servers.
	Embedded bool `json:"embedded"`
	// Leader is the leader's member ID in hex; empty when no member knows one.
	Leader string `json:"leader,omitempty"`
	// Quota is the database size at which etcd raises NOSPACE.
	Quota   int64    `json:"quotaBytes"`
	Members []Member `json:"members"`
	Alarms  []Alarm  `json:"alarms,omitempty"`
	// AlarmsError says why the alarms could not be listed (they need a quorum).
	AlarmsError string `json:"alarmsError,omitempty"`
	// Error says why the cluster could not be asked at all.
	Error string `json:"error,omitempty"`
}

// Member is one etcd member. The sizes and indexes are its own Status answer; Error says why it gave none.
type Member struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Role    string `json:"role"` // leader, follower, learner or unknown
	PeerURL string `json:"peerURL"`
	// The sizes, term and index are absent for a member whose status is not known (another member
	// of an embedded cluster, whose client port is private to it, that has not reported through its
	// Lease): a member that answers never has a zero index or size.
	DBSize   int64  `json:"dbSizeBytes,omitempty"`
	DBInUse  int64  `json:"dbSizeInUseBytes,omitempty"`
	RaftTerm uint64 `json:"raftTerm,omitempty"`
	// RaftIndex is the member's raft index; Lag how far it is behind the newest index known
	// (absent when 0).
	RaftIndex uint64 `json:"raftIndex,omitempty"`
	Lag       uint64 `json:"raftLag,omitempty"`
	// ReportedAt is set when the sizes, term and index are not the member's answer to this server
	// but what its own replica last reported, at that time (its member Lease, renewed every 10 s).
	ReportedAt time.Time `json:"reportedAt,omitzero"`
	// LearnerSince is when the server first saw the member as a learner.
	LearnerSince time.Time `json:"learnerSince,omitzero"`
	Error        string    `json:"error,omitempty"`
}

// Member roles.
const (
	RoleLeader   = "leader"
	RoleFollower = "follower"
	RoleLearner  = "learner"
	RoleUnknown  = "unknown"
)

// Alarm is an etcd alarm raised on a member (NOSPACE, CORRUPT).
type Alarm struct {
	Member string `json:"member"`
	Type   string `json:"type"`
}

// Snapshots are the scheduled snapshots of etcd.
type Snapshots struct {
	// Scheduled is false when scheduled snapshots are off (--etcd-disable-snapshots).
	Scheduled bool   `json:"scheduled"`
	Schedule  string `json:"schedule,omitempty"`
	Dir       string `json:"dir"`
	// Interval is the schedule's period, in seconds, as of the last snapshot.
	Interval int64 `json:"intervalSeconds,omitempty"`
	// LastSuccess is the newest scheduled snapshot on disk.
	LastSuccess *Snapshot `json:"lastSuccess,omitempty"`
	// LastFailure is when this server's last scheduled snapshot failed, if it did after LastSuccess.
	LastFailure time.Time `json:"lastFailure,omitzero"`
	NextDue     time.Time `json:"nextDue,omitzero"`
	Error       string    `json:"error,omitempty"`
}

// Snapshot is one snapshot file.
type Snapshot struct {
	Name    string    `json:"name"`
	Created time.Time `json:"created"`
	Size    int64     `json:"sizeBytes"`
}

// Certificate is one certificate of the data dir.
type Certificate struct {
	Name     string    `json:"name"`
	Path     string    `json:"path"`
	Subject  string    `json:"subject"`
	NotAfter time.Time `json:"notAfter"`
	// Status is `apictl certs list`'s: ok, expiring, expired, ...
	Status string `json:"status"`
}

// Controllers say who runs the cluster-wide controllers.
type Controllers struct {
	// Lease is namespace/name of the controllers' Lease; empty without leader election.
	Lease    string    `json:"lease,omitempty"`
	Holder   string    `json:"holder,omitempty"`
	Since    time.Time `json:"since,omitzero"`
	Renewed  time.Time `json:"renewed,omitzero"`
	Duration int64     `json:"leaseDurationSeconds,omitempty"`
	// Replicas are the servers' identities that compete for the Lease, as far as they are known.
	Replicas []string `json:"replicas,omitempty"`
	// Servers are the holders of the servers' identity Leases (kube-system/apiserver-<hash>, one per
	// host, as kube-apiserver keeps them).
	Servers []string `json:"servers,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// API is what the server serves, from its watch caches: no LIST is made.
type API struct {
	Groups    int   `json:"groups"`
	Resources int   `json:"resources"`
	Objects   int64 `json:"objects"`
	Bytes     int64 `json:"bytes"`
	// Largest are the ten resources that store the most bytes.
	Largest []ResourceSize `json:"largest"`
}

// ResourceSize is one resource's object count and stored bytes.
type ResourceSize struct {
	Resource string `json:"resource"`
	Objects  int64  `json:"objects"`
	Bytes    int64  `json:"bytes"`
}

// Load is what the server is doing now.
type Load struct {
	// InFlight counts requests being served, by kind (readOnly, mutating).
	InFlight map[string]int64 `json:"inFlight,omitempty"`
	// PriorityLevels are API Priority and Fairness's, when it is on.
	PriorityLevels []PriorityLevel `json:"priorityLevels,omitempty"`
	// Watches counts the watches the watch caches serve.
	Watches int64 `json:"watches"`
}

// PriorityLevel is one APF priority level's requests executing and waiting in its queues.
type PriorityLevel struct {
	Name      string `json:"name"`
	Executing int64  `json:"executing"`
	Waiting   int64  `json:"waiting"`
}
