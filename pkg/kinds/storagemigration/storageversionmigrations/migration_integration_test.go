package storageversionmigrations_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	svmv1 "k8s.io/api/storagemigration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/apictl/apictl/internal/servertest"
	"github.com/apictl/apictl/pkg/storage/embedded"
)

const widgetsCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.svm.example.com
spec:
  group: svm.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
  - name: v2
    served: true
    storage: false
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`

// widgets is more than one page of the migrator's LIST (500), so that it goes on with continue.
const widgets = 520

var (
	crdGVR    = apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")
	widgetGVR = schema.GroupVersionResource{Group: "svm.example.com", Version: "v1", Resource: "widgets"}
)

// storedVersions reads every widget as etcd holds it: its apiVersion and mod revision by name.
func storedVersions(t *testing.T, etcd *clientv3.Client) (map[string]string, map[string]int64) {
	t.Helper()
	resp, err := etcd.Get(context.Background(), "/registry/svm.example.com/widgets/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	versions, revisions := map[string]string{}, map[string]int64{}
	for _, kv := range resp.Kvs {
		var obj struct {
			APIVersion string `json:"apiVersion"`
		}
		if err := json.Unmarshal(kv.Value, &obj); err != nil {
			t.Fatalf("%s holds %q: %v", kv.Key, kv.Value, err)
		}
		name := filepath.Base(string(kv.Key))
		versions[name], revisions[name] = obj.APIVersion, kv.ModRevision
	}
	return versions, revisions
}

// TestMigrationRewritesInTheStorageVersion is kube's use of a migration for a CRD: objects stored
// at v1, the storage version moved to v2, a StorageVersionMigration rewrites every object at v2,
// leaves an object already at v2 unwritten, succeeds, and the CRD's storedVersions is trimmed to v2.
func TestMigrationRewritesInTheStorageVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	etcdSrv, err := embedded.Start(ctx, embedded.Config{Dir: t.TempDir(), UnsafeNoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = etcdSrv.Close(context.Background()) })
	etcd, err := clientv3.New(clientv3.Config{Endpoints: etcdSrv.ClientURLs(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { etcd.Close() })
	crdPath := filepath.Join(t.TempDir(), "widgets.yaml")
	if err := os.WriteFile(crdPath, []byte(widgetsCRD), 0o600); err != nil {
		t.Fatal(err)
	}
	s := servertest.Start(t, "--etcd-servers", etcdSrv.ClientURLs()[0], "--api-config", crdPath)
	kube, err := kubernetes.NewForConfig(s.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg := *s.AdminConfig
	cfg.QPS, cfg.Burst = -1, 0
	dyn, err := dynamic.NewForConfig(&cfg)
	if err != nil {
		t.Fatal(err)
	}

	// Objects at the v1 storage version, written by many clients at once.
	names := make(chan string)
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			var err error
			for name := range names {
				w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "svm.example.com/v1", "kind": "Widget",
					"metadata": map[string]any{"name": name}, "spec": map[string]any{"size": name}}}
				if _, e := dyn.Resource(widgetGVR).Namespace("default").Create(ctx, w, metav1.CreateOptions{}); e != nil && err == nil {
					err = e
				}
			}
			errs <- err
		}()
	}
	for i := range widgets {
		names <- fmt.Sprintf("w%03d", i)
	}
	close(names)
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatalf("creating widgets: %v", err)
		}
	}
	if versions, _ := storedVersions(t, etcd); len(versions) != widgets || versions["w000"] != "svm.example.com/v1" {
		t.Fatalf("etcd holds %d widgets, w000 as %q; want %d at v1", len(versions), versions["w000"], widgets)
	}

	// v2 becomes the storage version; a widget written now is stored at v2 already.
	storageV2 := `[{"op":"replace","path":"/spec/versions/0/storage","value":false},{"op":"replace","path":"/spec/versions/1/storage","value":true}]`
	if _, err := dyn.Resource(crdGVR).Patch(ctx, "widgets.svm.example.com", types.JSONPatchType, []byte(storageV2), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// As in kube, the CRD's handler takes the new storage version once its informer has the
	// update, so "late" is written again until it lands at v2.
	late := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "svm.example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "late"}}}
	var before map[string]string
	var revisionsBefore map[string]int64
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		if _, err := dyn.Resource(widgetGVR).Namespace("kube-system").Create(ctx, late, metav1.CreateOptions{}); err != nil {
			return false, err
		}
		before, revisionsBefore = storedVersions(t, etcd)
		if before["late"] == "svm.example.com/v2" {
			return true, nil
		}
		return false, dyn.Resource(widgetGVR).Namespace("kube-system").Delete(ctx, "late", metav1.DeleteOptions{})
	})
	if err != nil {
		t.Fatalf("a widget written after the storage version moved is not stored at v2: %v", err)
	}
	if before["late"] != "svm.example.com/v2" || before["w001"] != "svm.example.com/v1" {
		t.Fatalf("before the migration etcd holds late at %q, w001 at %q", before["late"], before["w001"])
	}

	svm := &svmv1.StorageVersionMigration{ObjectMeta: metav1.ObjectMeta{Name: "widgets"},
		Spec: svmv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: "svm.example.com", Resource: "widgets"}}}
	if _, err := kube.StoragemigrationV1().StorageVersionMigrations().Create(ctx, svm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	// Done is kube's end: Succeeded, and Running turned False by the runner's cleanup.
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		svm, err = kube.StoragemigrationV1().StorageVersionMigrations().Get(ctx, "widgets", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return meta.IsStatusConditionTrue(svm.Status.Conditions, string(svmv1.MigrationSucceeded)) &&
			meta.IsStatusConditionFalse(svm.Status.Conditions, string(svmv1.MigrationRunning)), nil
	})
	if err != nil {
		t.Fatalf("the migration did not end: %v; status %+v\nlogs:\n%s", err, svm.Status, s.Logs)
	}
	t.Logf("migrated %d widgets in %s", widgets+1, time.Since(start).Round(time.Millisecond))
	if meta.IsStatusConditionTrue(svm.Status.Conditions, string(svmv1.MigrationFailed)) || svm.Status.ResourceVersion == "" {
		t.Errorf("status %+v", svm.Status)
	}
	succeeded := meta.FindStatusCondition(svm.Status.Conditions, string(svmv1.MigrationSucceeded))
	if succeeded.Reason != "StorageVersionMigrationSucceeded" || succeeded.Message != "Migration completed" {
		t.Errorf("Succeeded condition %+v", succeeded)
	}

	after, revisionsAfter := storedVersions(t, etcd)
	for name, v := range after {
		if v != "svm.example.com/v2" {
			t.Errorf("after the migration etcd holds %s at %s, want v2", name, v)
		}
	}
	if len(after) != widgets+1 {
		t.Errorf("etcd holds %d widgets, want %d", len(after), widgets+1)
	}
	// As kube's store, the rewrite of an object already in the storage version writes nothing.
	if revisionsAfter["late"] != revisionsBefore["late"] {
		t.Errorf("late, stored at v2 already, was written again: revision %d, then %d", revisionsBefore["late"], revisionsAfter["late"])
	}

	u, err := dyn.Resource(crdGVR).Get(ctx, "widgets.svm.example.com", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &crd); err != nil {
		t.Fatal(err)
	}
	if strings.Join(crd.Status.StoredVersions, ",") != "v2" {
		t.Errorf("the CRD's storedVersions are %v, want [v2]", crd.Status.StoredVersions)
	}
	var migrating *apiextensionsv1.CustomResourceDefinitionCondition
	for i := range crd.Status.Conditions {
		if crd.Status.Conditions[i].Type == apiextensionsv1.StorageMigrating {
			migrating = &crd.Status.Conditions[i]
		}
	}
	if migrating == nil || migrating.Status != apiextensionsv1.ConditionFalse || migrating.Reason != "MigrationSucceeded" ||
		migrating.Message != "The migration has succeeded and the stored versions have been updated" {
		t.Errorf("the CRD's StorageMigrating condition is %+v", migrating)
	}
}
