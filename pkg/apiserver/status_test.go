package apiserver_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/apictl/apictl/internal/servertest"
	"github.com/apictl/apictl/pkg/certs"
	"github.com/apictl/apictl/pkg/serve/auth/rbac"
	"github.com/apictl/apictl/pkg/status"
)

// TestStatusEndpoint reads /apictl/v1/status as the admin, as a user without the status reader's
// ClusterRole (kube's 403) and as one bound to it.
func TestStatusEndpoint(t *testing.T) {
	t.Setenv(servertest.EnvAuthorizationMode, "") // the default, RBAC, is what this test is about
	s := servertest.Start(t)
	ctx := context.Background()

	// Readiness does not wait for the controllers' Lease (kube's /readyz has no leader-election
	// check), and until a replica holds it status rightly warns.
	var r *status.Report
	eventually(t, "a replica holds the controllers' Lease", func() error {
		var err error
		if r, err = status.Fetch(ctx, s.AdminConfig); err == nil && (r.Controllers == nil || r.Controllers.Holder == "") {
			err = fmt.Errorf("controllers section %+v", r.Controllers)
		}
		return err
	})
	if r.Exit != status.ExitHealthy || !r.Server.Ready {
		t.Errorf("a new server: exit %d, ready %v, findings %+v", r.Exit, r.Server.Ready, r.Findings)
	}
	if r.Etcd == nil || len(r.Etcd.Members) != 1 || r.Etcd.Members[0].Role != status.RoleLeader || r.Etcd.Members[0].DBSize == 0 || r.Etcd.Quota == 0 {
		t.Errorf("etcd section: %+v", r.Etcd)
	}
	if r.API == nil || r.API.Objects == 0 || r.API.Bytes == 0 || len(r.API.Largest) != 10 {
		t.Errorf("api section: %+v", r.API)
	}
	if r.Snapshots == nil || !r.Snapshots.Scheduled || r.Snapshots.NextDue.IsZero() {
		t.Errorf("snapshots section: %+v", r.Snapshots)
	}
	if len(r.Certificates) == 0 {
		t.Error("no certificates")
	}
	if c := r.Controllers; c == nil || c.Holder == "" || c.Holder != strings.Join(c.Replicas, "") {
		t.Errorf("controllers section: %+v", c)
	}

	_, kubeconfig := clientFor(t, s, "alice", "dev")
	aliceConfig, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	_, err = status.Fetch(ctx, aliceConfig)
	want := `403 Forbidden: forbidden: User "alice" cannot get path "/apictl/v1/status"`
	if err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("alice without the role: %v, want an error ending in %s", err, want)
	}
	admin := adminClient(t, s)
	mustCreate(t, admin.RbacV1().ClusterRoleBindings().Create, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-reads-status"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: rbac.StatusReader},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}})
	eventually(t, "alice reads the status with the role", func() error {
		_, err := status.Fetch(ctx, aliceConfig)
		return err
	})
}

// TestStatusFindings makes each warning and problem the server itself can show real, and checks
// the exit code and the line that names it.
func TestStatusFindings(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		setup func(t *testing.T, s *servertest.Server)
		exit  int
		line  string
	}{
		{
			name: "scheduled snapshots off", args: []string{"--etcd-disable-snapshots"},
			exit: status.ExitWarnings, line: "scheduled snapshots are off (--etcd-disable-snapshots): nothing backs etcd up",
		},
		{
			name: "a certificate that expires within 30 days",
			setup: func(t *testing.T, s *servertest.Server) {
				issueShortLived(t, s, "short", 24*time.Hour)
			},
			exit: status.ExitWarnings, line: "certificate short (",
		},
		{
			name: "an expired certificate",
			setup: func(t *testing.T, s *servertest.Server) {
				issueShortLived(t, s, "brief", time.Second)
				time.Sleep(1100 * time.Millisecond)
			},
			exit: status.ExitProblems, line: "certificate brief (",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := servertest.Start(t, tc.args...)
			if tc.setup != nil {
				tc.setup(t, s)
			}
			r, err := status.Fetch(context.Background(), s.AdminConfig)
			if err != nil {
				t.Fatal(err)
			}
			if r.Exit != tc.exit {
				t.Errorf("exit %d, want %d; findings %+v", r.Exit, tc.exit, r.Findings)
			}
			if len(r.Findings) == 0 || !strings.Contains(r.Findings[0].Message, tc.line) {
				t.Errorf("findings %+v, want the first to name %q", r.Findings, tc.line)
			}
		})
	}
}

// issueShortLived issues a client certificate valid for validity into s's cert dir, where the
// status lists it with the server's own.
func issueShortLived(t *testing.T, s *servertest.Server, user string, validity time.Duration) {
	t.Helper()
	spec := certs.NewClientSpec(s.CertDir, user)
	spec.Server = s.SecureURL
	spec.Validity = validity
	spec.KubeconfigOut = filepath.Join(s.CertDir, user+".kubeconfig")
	if _, err := certs.IssueClient(context.Background(), spec); err != nil {
		t.Fatal(fmt.Errorf("issuing %s for %s: %w", user, validity, err))
	}
}
