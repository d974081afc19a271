"""Drives an apictl server the way a user of the Python Kubernetes client would.

Usage: suite.py KUBECONFIG WORKDIR

It is written for Debian's python3-kubernetes 22.6 and run by python_test.go. Each step asserts what
kube-apiserver answers; the first failure prints the step, the reason and the traceback, and the
script exits 1. It exits 0 when every step passed and 2 on bad usage. SIGALRM bounds the whole run,
and every watch carries timeout_seconds, so nothing hangs.
"""

import base64
import datetime
import json
import os
import signal
import sys
import threading
import time
import traceback

from kubernetes import client, config, dynamic, watch
from kubernetes.client.rest import ApiException
from kubernetes.dynamic.exceptions import ConflictError

NS = "py"
GROUP, VERSION, PLURAL = "py.example.com", "v1", "gadgets"
TOTAL_SECONDS = 90


class Failure(Exception):
    """An assertion about the server's answer failed."""


def check(cond, msg, *args):
    if not cond:
        raise Failure(msg % args if args else msg)


def equal(got, want, what):
    check(got == want, "%s: got %r, want %r", what, got, want)


def expect_error(code, reason, fn, *args, **kwargs):
    """Calls fn, which must raise ApiException with HTTP status code and a Status body of reason;
    returns the Status as a dict."""
    try:
        got = fn(*args, **kwargs)
    except ApiException as e:
        check(e.status == code, "%s: got HTTP %s, want %s; body: %s", fn.__name__, e.status, code, e.body)
        try:
            status = json.loads(e.body)
        except (TypeError, ValueError):
            raise Failure("%s: the %s answer's body is not JSON: %r" % (fn.__name__, code, e.body))
        equal(status.get("kind"), "Status", "%s: error body kind" % fn.__name__)
        equal(status.get("apiVersion"), "v1", "%s: error body apiVersion" % fn.__name__)
        equal(status.get("status"), "Failure", "%s: Status.status" % fn.__name__)
        equal(status.get("code"), code, "%s: Status.code" % fn.__name__)
        equal(status.get("reason"), reason, "%s: Status.reason" % fn.__name__)
        return status
    raise Failure("%s: succeeded, want HTTP %s %s; got %r" % (fn.__name__, code, reason, got))


def wait_gone(read, what, seconds=20):
    """Polls read() until it answers 404."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            read()
        except ApiException as e:
            if e.status == 404:
                return
            raise
        check(time.monotonic() < deadline, "%s still exists after %ss", what, seconds)
        time.sleep(0.1)


def names(items):
    return sorted(i.metadata.name for i in items)


def b64(s):
    return base64.b64encode(s.encode()).decode()


class Suite:
    def __init__(self, workdir):
        self.v1 = client.CoreV1Api()
        self.coord = client.CoordinationV1Api()
        self.rbac = client.RbacAuthorizationV1Api()
        self.custom = client.CustomObjectsApi()
        self.workdir = workdir

    # The tutorial's snippets, exactly: the models carry no apiVersion or kind, so neither does the body.
    def step_tutorial(self):
        ns = self.v1.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NS)))
        equal(ns.metadata.name, NS, "created namespace name")
        equal(ns.status.phase, "Active", "created namespace phase")
        check(ns.metadata.uid and ns.metadata.resource_version and ns.metadata.creation_timestamp,
              "the created namespace lacks uid, resourceVersion or creationTimestamp: %s", ns.metadata)
        equal((ns.api_version, ns.kind), ("v1", "Namespace"), "created namespace apiVersion, kind")

        cm = self.v1.create_namespaced_config_map(
            NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="tutorial"), data={"greeting": "hello"}))
        equal(cm.metadata.namespace, NS, "created configmap namespace")
        equal(cm.data, {"greeting": "hello"}, "created configmap data")
        equal((cm.api_version, cm.kind), ("v1", "ConfigMap"), "created configmap apiVersion, kind")

    def step_namespaces(self):
        ns = self.v1.read_namespace(NS)
        equal(ns.metadata.name, NS, "read namespace")
        listed = self.v1.list_namespace()
        check({"default", "kube-system", "kube-public", NS} <= set(names(listed.items)),
              "list_namespace: %s lacks a default namespace or %s", names(listed.items), NS)
        check(listed.metadata.resource_version, "the namespace list has no resourceVersion")
        one = self.v1.list_namespace(field_selector="metadata.name=" + NS)
        equal(names(one.items), [NS], "list_namespace with field_selector metadata.name")

        ns.metadata.labels = {"team": "python"}
        replaced = self.v1.replace_namespace(NS, ns)
        equal(replaced.metadata.labels.get("team"), "python", "replaced namespace label")
        check(replaced.metadata.resource_version != ns.metadata.resource_version,
              "replace_namespace kept resourceVersion %s", ns.metadata.resource_version)
        equal(self.v1.read_namespace(NS).metadata.labels.get("team"), "python", "namespace label read back")

        self.v1.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="py-scratch")))
        self.v1.delete_namespace("py-scratch")
        try:
            ns = self.v1.read_namespace("py-scratch")
            check(ns.metadata.deletion_timestamp is not None and ns.status.phase == "Terminating",
                  "a deleted namespace still there must be Terminating with a deletionTimestamp: %s", ns)
        except ApiException as e:
            equal(e.status, 404, "reading a deleted namespace")
        wait_gone(lambda: self.v1.read_namespace("py-scratch"), "namespace py-scratch")

    def step_configmaps(self):
        body = client.V1ConfigMap(
            metadata=client.V1ObjectMeta(name="cm1", labels={"app": "py-crud"}), data={"k1": "v1"})
        created = self.v1.create_namespaced_config_map(NS, body)
        read = self.v1.read_namespaced_config_map("cm1", NS)
        equal(read.metadata.uid, created.metadata.uid, "read configmap uid")
        equal(read.data, {"k1": "v1"}, "read configmap data")

        listed = self.v1.list_namespaced_config_map(NS, label_selector="app=py-crud")
        equal(names(listed.items), ["cm1"], "list_namespaced_config_map by label")
        everywhere = self.v1.list_config_map_for_all_namespaces(label_selector="app=py-crud")
        equal([(i.metadata.namespace, i.metadata.name) for i in everywhere.items], [(NS, "cm1")],
              "list_config_map_for_all_namespaces by label")

        read.data["k2"] = "v2"
        replaced = self.v1.replace_namespaced_config_map("cm1", NS, read)
        equal(replaced.data, {"k1": "v1", "k2": "v2"}, "replaced configmap data")
        check(replaced.metadata.resource_version != read.metadata.resource_version,
              "replace kept resourceVersion %s", read.metadata.resource_version)

        dry = self.v1.create_namespaced_config_map(NS, client.V1ConfigMap(
            metadata=client.V1ObjectMeta(name="dry"), data={"k": "v"}), dry_run="All")
        equal(dry.data, {"k": "v"}, "dry-run create's answer")
        expect_error(404, "NotFound", self.v1.read_namespaced_config_map, "dry", NS)

        status = self.v1.delete_namespaced_config_map("cm1", NS)
        check(status is not None, "delete_namespaced_config_map returned nothing")
        expect_error(404, "NotFound", self.v1.read_namespaced_config_map, "cm1", NS)

    def step_secrets(self):
        body = client.V1Secret(metadata=client.V1ObjectMeta(name="s1"),
                               string_data={"user": "admin", "password": "s3cr3t"})
        created = self.v1.create_namespaced_secret(NS, body)
        want = {"user": b64("admin"), "password": b64("s3cr3t")}
        equal(created.data, want, "created secret data (string_data folded into data)")
        equal(created.string_data, None, "created secret string_data")
        equal(created.type, "Opaque", "created secret's defaulted type")
        read = self.v1.read_namespaced_secret("s1", NS)
        equal(read.data, want, "read secret data")

        read.data["extra"] = b64("x")
        read.string_data = {"user": "root"}
        replaced = self.v1.replace_namespaced_secret("s1", NS, read)
        equal(replaced.data, {"user": b64("root"), "password": b64("s3cr3t"), "extra": b64("x")},
              "replaced secret data (string_data wins over data)")
        equal(names(self.v1.list_namespaced_secret(NS, field_selector="metadata.name=s1").items), ["s1"],
              "list_namespaced_secret")
        self.v1.delete_namespaced_secret("s1", NS)
        expect_error(404, "NotFound", self.v1.read_namespaced_secret, "s1", NS)

    def step_leases(self):
        # MicroTime keeps microseconds; a fixed non-zero fraction makes the round trip exact.
        now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=123456)
        spec = client.V1LeaseSpec(holder_identity="py-1", lease_duration_seconds=15, acquire_time=now,
                                  renew_time=now, lease_transitions=0)
        self.coord.create_namespaced_lease(NS, client.V1Lease(metadata=client.V1ObjectMeta(name="py-lock"), spec=spec))
        read = self.coord.read_namespaced_lease("py-lock", NS)
        equal(read.spec.holder_identity, "py-1", "lease holder")
        equal(read.spec.lease_duration_seconds, 15, "lease duration")
        equal(read.spec.renew_time, now, "lease renewTime round trip")

        later = now + datetime.timedelta(seconds=5, microseconds=1)
        read.spec.renew_time = later
        read.spec.holder_identity = "py-2"
        read.spec.lease_transitions = 1
        self.coord.replace_namespaced_lease("py-lock", NS, read)
        again = self.coord.read_namespaced_lease("py-lock", NS)
        equal((again.spec.holder_identity, again.spec.renew_time, again.spec.lease_transitions),
              ("py-2", later, 1), "renewed lease")
        equal(names(self.coord.list_namespaced_lease(NS).items), ["py-lock"], "list_namespaced_lease")
        self.coord.delete_namespaced_lease("py-lock", NS)
        expect_error(404, "NotFound", self.coord.read_namespaced_lease, "py-lock", NS)

    def step_rbac(self):
        rule = client.V1PolicyRule(api_groups=[""], resources=["configmaps"], verbs=["get", "list", "watch"])
        self.rbac.create_namespaced_role(
            NS, client.V1Role(metadata=client.V1ObjectMeta(name="py-reader"), rules=[rule]))
        role = self.rbac.read_namespaced_role("py-reader", NS)
        equal([(r.api_groups, r.resources, r.verbs) for r in role.rules],
              [([""], ["configmaps"], ["get", "list", "watch"])], "read role rules")
        role.rules.append(client.V1PolicyRule(api_groups=[""], resources=["secrets"], verbs=["get"]))
        role = self.rbac.replace_namespaced_role("py-reader", NS, role)
        equal(len(role.rules), 2, "replaced role rule count")
        equal(names(self.rbac.list_namespaced_role(NS).items), ["py-reader"], "list_namespaced_role")

        ref = client.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="Role", name="py-reader")
        subjects = [client.V1Subject(kind="ServiceAccount", name="default", namespace=NS),
                    client.V1Subject(kind="User", name="alice", api_group="rbac.authorization.k8s.io")]
        self.rbac.create_namespaced_role_binding(
            NS, client.V1RoleBinding(metadata=client.V1ObjectMeta(name="py-readers"), role_ref=ref, subjects=subjects))
        rb = self.rbac.read_namespaced_role_binding("py-readers", NS)
        equal((rb.role_ref.kind, rb.role_ref.name), ("Role", "py-reader"), "read rolebinding roleRef")
        equal([(s.kind, s.name) for s in rb.subjects], [("ServiceAccount", "default"), ("User", "alice")],
              "read rolebinding subjects")
        rb.subjects.append(client.V1Subject(kind="Group", name="devs", api_group="rbac.authorization.k8s.io"))
        rb = self.rbac.replace_namespaced_role_binding("py-readers", NS, rb)
        equal(len(rb.subjects), 3, "replaced rolebinding subject count")
        # roleRef is immutable, as in kube's RBAC validation.
        rb.role_ref = client.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="ClusterRole", name="view")
        expect_error(422, "Invalid", self.rbac.replace_namespaced_role_binding, "py-readers", NS, rb)
        equal(names(self.rbac.list_namespaced_role_binding(NS).items), ["py-readers"],
              "list_namespaced_role_binding")

        self.rbac.create_cluster_role(client.V1ClusterRole(
            metadata=client.V1ObjectMeta(name="py-cluster-reader", labels={"app": "py"}), rules=[rule]))
        equal(names(self.rbac.list_cluster_role(label_selector="app=py").items), ["py-cluster-reader"],
              "list_cluster_role by label")
        self.rbac.delete_cluster_role("py-cluster-reader")
        expect_error(404, "NotFound", self.rbac.read_cluster_role, "py-cluster-reader")

        self.rbac.delete_namespaced_role_binding("py-readers", NS)
        self.rbac.delete_namespaced_role("py-reader", NS)
        expect_error(404, "NotFound", self.rbac.read_namespaced_role_binding, "py-readers", NS)
        expect_error(404, "NotFound", self.rbac.read_namespaced_role, "py-reader", NS)

    def step_custom_resources(self):
        c = self.custom
        body = {"apiVersion": GROUP + "/" + VERSION, "kind": "Gadget",
                "metadata": {"name": "g1", "labels": {"app": "py"}},
                "spec": {"color": "red", "size": 3, "unknown": "pruned"}}
        created = c.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, body)
        check(created["metadata"].get("uid") and created["metadata"].get("resourceVersion"),
              "the created gadget lacks uid or resourceVersion: %s", created["metadata"])
        equal(created["spec"], {"color": "red", "size": 3}, "created gadget spec (unknown field pruned)")

        got = c.get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "g1")
        equal(got["metadata"]["uid"], created["metadata"]["uid"], "read gadget uid")
        listed = c.list_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, label_selector="app=py")
        equal(listed.get("kind"), "GadgetList", "gadget list kind")
        equal([i["metadata"]["name"] for i in listed["items"]], ["g1"], "list gadgets by label")

        # CustomObjectsApi's patch sends application/merge-patch+json.
        patched = c.patch_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "g1", {"spec": {"color": "blue"}})
        equal(patched["spec"], {"color": "blue", "size": 3}, "merge-patched gadget spec")

        patched["spec"]["size"] = 4
        replaced = c.replace_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "g1", patched)
        equal(replaced["spec"], {"color": "blue", "size": 4}, "replaced gadget spec")

        bad = dict(body, metadata={"name": "g-bad"}, spec={"size": "three"})
        expect_error(422, "Invalid", c.create_namespaced_custom_object, GROUP, VERSION, NS, PLURAL, bad)

        c.delete_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "g1")
        expect_error(404, "NotFound", c.get_namespaced_custom_object, GROUP, VERSION, NS, PLURAL, "g1")

    def step_patch(self):
        v1 = self.v1
        v1.create_namespaced_config_map(NS, client.V1ConfigMap(
            metadata=client.V1ObjectMeta(name="patchme", labels={"x": "1"}), data={"a": "1", "b": "2"}))

        # A dict body goes out as application/strategic-merge-patch+json; null deletes a key.
        cm = v1.patch_namespaced_config_map("patchme", NS, {"data": {"a": None, "c": "3"}})
        equal(cm.data, {"b": "2", "c": "3"}, "strategic-merge-patched data")

        # A list body goes out as application/json-patch+json.
        cm = v1.patch_namespaced_config_map("patchme", NS, [
            {"op": "test", "path": "/data/c", "value": "3"},
            {"op": "replace", "path": "/data/c", "value": "30"},
            {"op": "add", "path": "/metadata/labels/z", "value": "26"},
            {"op": "remove", "path": "/data/b"},
        ])
        equal(cm.data, {"c": "30"}, "JSON-patched data")
        equal(cm.metadata.labels, {"x": "1", "z": "26"}, "JSON-patched labels")
        expect_error(422, "Invalid", v1.patch_namespaced_config_map, "patchme", NS,
                     [{"op": "test", "path": "/data/c", "value": "nope"}])
        expect_error(404, "NotFound", v1.patch_namespaced_config_map, "absent", NS, {"data": {"a": "1"}})

        # The typed API cannot send a merge patch in 22.6; the dynamic client can choose the content type.
        dyn = self.dynamic()
        cms = dyn.resources.get(api_version="v1", kind="ConfigMap")
        merged = dyn.patch(cms, {"data": {"c": None, "d": "4"}, "metadata": {"labels": {"x": None}}},
                           name="patchme", namespace=NS, content_type="application/merge-patch+json")
        equal(merged.to_dict()["data"], {"d": "4"}, "merge-patched data")
        equal(merged.to_dict()["metadata"]["labels"], {"z": "26"}, "merge-patched labels")

        # A list with a merge key tells strategic merge from merge: ServiceAccount.secrets merges on name.
        v1.create_namespaced_service_account(NS, client.V1ServiceAccount(
            metadata=client.V1ObjectMeta(name="py-sa"), secrets=[client.V1ObjectReference(name="s-a")]))
        sa = v1.patch_namespaced_service_account("py-sa", NS, {"secrets": [{"name": "s-b"}]})
        equal(sorted(s.name for s in sa.secrets), ["s-a", "s-b"], "strategic merge of a keyed list")
        sa = v1.patch_namespaced_service_account("py-sa", NS, {"secrets": [{"name": "s-a", "$patch": "delete"}]})
        equal([s.name for s in sa.secrets], ["s-b"], "strategic merge $patch: delete")
        sas = dyn.resources.get(api_version="v1", kind="ServiceAccount")
        sa = dyn.patch(sas, {"secrets": [{"name": "s-c"}]}, name="py-sa", namespace=NS,
                       content_type="application/merge-patch+json")
        equal([s["name"] for s in sa.to_dict()["secrets"]], ["s-c"], "merge patch replaces a keyed list")

        v1.delete_namespaced_service_account("py-sa", NS)
        v1.delete_namespaced_config_map("patchme", NS)

    def step_watch(self):
        v1 = self.v1
        sel = "watch=py"
        rv0 = v1.list_namespaced_config_map(NS, label_selector=sel).metadata.resource_version
        events = []
        errors = []

        def run():
            w = watch.Watch()
            try:
                for ev in w.stream(v1.list_namespaced_config_map, NS, label_selector=sel,
                                   resource_version=rv0, timeout_seconds=10):
                    events.append((ev["type"], ev["object"].metadata.name, ev["object"].metadata.resource_version))
                    if ev["type"] == "DELETED":
                        w.stop()
            except Exception as e:  # reported by the main thread
                errors.append(e)

        watcher = threading.Thread(target=run, daemon=True)
        watcher.start()
        meta = client.V1ObjectMeta(name="w1", labels={"watch": "py"})
        v1.create_namespaced_config_map(NS, client.V1ConfigMap(metadata=meta, data={"n": "0"}))
        v1.patch_namespaced_config_map("w1", NS, {"data": {"n": "1"}})
        v1.delete_namespaced_config_map("w1", NS)
        watcher.join(15)
        check(not watcher.is_alive(), "the watch did not end within 15s; events so far: %s", events)
        check(not errors, "the watch failed: %r", errors)
        equal([(t, n) for t, n, _ in events], [("ADDED", "w1"), ("MODIFIED", "w1"), ("DELETED", "w1")],
              "watch events from the list's resourceVersion")
        check(len({rv for _, _, rv in events}) == 3, "watch events share a resourceVersion: %s", events)

        # Resuming from an event's resourceVersion yields only what came after it.
        for i, want in ((0, ["MODIFIED", "DELETED"]), (1, ["DELETED"])):
            w = watch.Watch()
            got = []
            for ev in w.stream(v1.list_namespaced_config_map, NS, label_selector=sel,
                               resource_version=events[i][2], timeout_seconds=5):
                got.append(ev["type"])
                if ev["type"] == "DELETED":
                    w.stop()
            equal(got, want, "watch resumed from the %s event's resourceVersion" % events[i][0])
            equal(w.resource_version, events[2][2], "Watch.resource_version after the DELETED event")

        # With a label selector, an object that stops matching leaves as DELETED and comes back as ADDED.
        # As in kube's watch cache, the DELETED event carries the last state that matched, at the
        # resourceVersion of the change that made it stop matching.
        rv = v1.list_namespaced_config_map(NS, label_selector=sel).metadata.resource_version
        created = v1.create_namespaced_config_map(NS, client.V1ConfigMap(
            metadata=client.V1ObjectMeta(name="w2", labels={"watch": "py"})))
        left = v1.patch_namespaced_config_map("w2", NS, {"metadata": {"labels": {"watch": "elsewhere"}}})
        back = v1.patch_namespaced_config_map("w2", NS, {"metadata": {"labels": {"watch": "py"}}})
        w = watch.Watch()
        got = []
        for ev in w.stream(v1.list_namespaced_config_map, NS, label_selector=sel, resource_version=rv,
                           timeout_seconds=5):
            got.append((ev["type"], ev["object"].metadata.labels.get("watch"), ev["object"].metadata.resource_version))
            if len(got) == 3:
                w.stop()
        equal(got, [("ADDED", "py", created.metadata.resource_version),
                    ("DELETED", "py", left.metadata.resource_version),
                    ("ADDED", "py", back.metadata.resource_version)],
              "watch events (type, label, resourceVersion) of an object leaving and re-entering the selector")
        v1.delete_namespaced_config_map("w2", NS)

        # The server ends a quiet watch at timeoutSeconds.
        start = time.monotonic()
        quiet = list(watch.Watch().stream(v1.list_namespaced_config_map, NS, label_selector="none=here",
                                          resource_version=rv0, timeout_seconds=1))
        equal(quiet, [], "events on a quiet watch")
        check(time.monotonic() - start < 5, "a watch with timeout_seconds=1 lasted %.1fs", time.monotonic() - start)

        # Custom resources watch the same way, as dicts.
        c = self.custom
        rv = c.list_namespaced_custom_object(GROUP, VERSION, NS, PLURAL)["metadata"]["resourceVersion"]
        c.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, {
            "apiVersion": GROUP + "/" + VERSION, "kind": "Gadget", "metadata": {"name": "watched"},
            "spec": {"color": "green"}})
        w = watch.Watch()
        got = []
        for ev in w.stream(c.list_namespaced_custom_object, GROUP, VERSION, NS, PLURAL,
                           resource_version=rv, timeout_seconds=5):
            got.append((ev["type"], ev["object"]["metadata"]["name"]))
            w.stop()
        equal(got, [("ADDED", "watched")], "custom resource watch")
        c.delete_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "watched")

    def step_paging(self):
        v1 = self.v1
        ns = "py-pages"
        v1.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=ns)))
        for i in range(7):
            v1.create_namespaced_config_map(ns, client.V1ConfigMap(
                metadata=client.V1ObjectMeta(name="page-%d" % i), data={"i": str(i)}))
        everything = names(v1.list_namespaced_config_map(ns).items)
        check(len(everything) >= 7, "list without limit: %s", everything)

        pages = []
        first = v1.list_namespaced_config_map(ns, limit=3)
        token = first.metadata._continue
        pages.append(names(first.items))
        check(token, "the first page of %d items has no continue token", len(everything))
        if first.metadata.remaining_item_count is not None:
            equal(first.metadata.remaining_item_count, len(everything) - 3, "remainingItemCount")
        # Later pages come from the first page's snapshot: an object created now is not in them.
        v1.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="zz-late")))
        while token:
            page = v1.list_namespaced_config_map(ns, limit=3, _continue=token)
            check(len(page.items) <= 3, "a page with limit=3 has %d items", len(page.items))
            pages.append(names(page.items))
            token = page.metadata._continue
            check(len(pages) <= len(everything), "paging does not end: %s", pages)
        got = [n for p in pages for n in p]
        equal(sorted(got), everything, "the pages' items, snapshot of the first page")
        equal(len(pages), (len(everything) + 2) // 3, "number of pages")

        v1.delete_collection_namespaced_config_map(ns)
        left = names(v1.list_namespaced_config_map(ns).items)
        check("zz-late" not in left and not any(n.startswith("page-") for n in left),
              "delete_collection left %s", left)
        v1.delete_namespace(ns)

    def step_errors(self):
        v1 = self.v1
        status = expect_error(404, "NotFound", v1.read_namespaced_config_map, "nope", NS)
        equal(status.get("details"), {"name": "nope", "kind": "configmaps"}, "404 Status details")
        equal(status.get("message"), 'configmaps "nope" not found', "404 Status message")
        expect_error(404, "NotFound", v1.read_namespace, "no-such-namespace")

        meta = client.V1ObjectMeta(name="conflict")
        stale = v1.create_namespaced_config_map(NS, client.V1ConfigMap(metadata=meta, data={"v": "1"}))
        fresh = v1.read_namespaced_config_map("conflict", NS)
        fresh.data["v"] = "2"
        v1.replace_namespaced_config_map("conflict", NS, fresh)
        stale.data["v"] = "stale"
        status = expect_error(409, "Conflict", v1.replace_namespaced_config_map, "conflict", NS, stale)
        equal(status.get("details"), {"name": "conflict", "kind": "configmaps"}, "409 Conflict details")
        check("the object has been modified" in status.get("message", ""),
              "409 Conflict message: %r", status.get("message"))
        equal(v1.read_namespaced_config_map("conflict", NS).data, {"v": "2"}, "data after the refused replace")
        stale_delete = client.V1DeleteOptions(
            preconditions=client.V1Preconditions(resource_version=stale.metadata.resource_version))
        expect_error(409, "Conflict", v1.delete_namespaced_config_map, "conflict", NS, body=stale_delete)

        status = expect_error(409, "AlreadyExists", v1.create_namespaced_config_map, NS,
                              client.V1ConfigMap(metadata=client.V1ObjectMeta(name="conflict")))
        equal(status.get("details"), {"name": "conflict", "kind": "configmaps"}, "409 AlreadyExists details")
        equal(status.get("message"), 'configmaps "conflict" already exists', "409 AlreadyExists message")
        expect_error(409, "AlreadyExists", v1.create_namespace,
                     client.V1Namespace(metadata=client.V1ObjectMeta(name=NS)))

        status = expect_error(422, "Invalid", v1.create_namespaced_config_map, NS,
                              client.V1ConfigMap(metadata=client.V1ObjectMeta(name="Not_A_Name")))
        causes = status.get("details", {}).get("causes", [])
        check(any(c.get("field") == "metadata.name" for c in causes), "422 causes lack metadata.name: %s", causes)
        v1.delete_namespaced_config_map("conflict", NS)

    def dynamic(self):
        # Discovery is cached in a file; keep it in the test's directory, not the shared /tmp.
        return dynamic.DynamicClient(client.ApiClient(), cache_file=os.path.join(self.workdir, "discovery.json"))

    def step_server_side_apply(self):
        # DynamicClient.server_side_apply exists in 22.6, but it sends application/apply-patch+yaml, and
        # the client's REST layer only serializes dict bodies for JSON content types: a dict body fails
        # in the client ("Cannot prepare a request message") before any request. A JSON document is
        # YAML, so the body goes as a string, with name and namespace given explicitly.
        dyn = self.dynamic()
        cms = dyn.resources.get(api_version="v1", kind="ConfigMap")

        def apply(manager, data, force=None):
            doc = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied", "namespace": NS},
                   "data": data}
            return dyn.server_side_apply(cms, body=json.dumps(doc), name="applied", namespace=NS,
                                         field_manager=manager, force_conflicts=force).to_dict()

        got = apply("py-a", {"owner": "a", "extra": "1"})
        equal(got["data"], {"owner": "a", "extra": "1"}, "data after the first apply (create)")
        managers = {(m["manager"], m["operation"]) for m in got["metadata"].get("managedFields", [])}
        check(("py-a", "Apply") in managers, "managedFields lack py-a's Apply: %s", managers)

        try:
            apply("py-b", {"owner": "b"})
            raise Failure("apply by py-b of a field py-a owns succeeded, want 409 Conflict")
        except ConflictError as e:
            status = json.loads(e.body)
            equal(status.get("reason"), "Conflict", "apply conflict Status.reason")
            check("py-a" in status.get("message", ""), "apply conflict message does not name py-a: %r",
                  status.get("message"))
        got = apply("py-b", {"owner": "b"}, force=True)
        equal(got["data"], {"owner": "b", "extra": "1"}, "data after the forced apply")

        # py-a no longer applies extra, which it alone owned: the field goes; owner is py-b's now.
        got = apply("py-a", {})
        equal(got.get("data"), {"owner": "b"}, "data after py-a dropped its fields")
        self.v1.delete_namespaced_config_map("applied", NS)

        gadgets = dyn.resources.get(api_version=GROUP + "/" + VERSION, kind="Gadget")
        doc = {"apiVersion": GROUP + "/" + VERSION, "kind": "Gadget", "metadata": {"name": "g-applied"},
               "spec": {"color": "teal", "size": 1}}
        got = dyn.server_side_apply(gadgets, body=json.dumps(doc), name="g-applied", namespace=NS,
                                    field_manager="py-a").to_dict()
        equal(got["spec"], {"color": "teal", "size": 1}, "applied gadget spec")
        listed = gadgets.get(namespace=NS).to_dict()
        equal([i["metadata"]["name"] for i in listed["items"]], ["g-applied"], "gadgets listed dynamically")
        gadgets.delete(name="g-applied", namespace=NS)

    def step_delete_namespace(self):
        self.v1.create_namespaced_config_map(NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="content")))
        self.v1.delete_namespace(NS)
        wait_gone(lambda: self.v1.read_namespace(NS), "namespace " + NS)
        for ns in ("py-pages", "py-scratch"):
            wait_gone(lambda: self.v1.read_namespace(ns), "namespace " + ns)
        equal(self.v1.list_namespaced_config_map(NS).items, [], "configmaps left in the deleted namespace")


STEPS = ["tutorial", "namespaces", "configmaps", "secrets", "leases", "rbac", "custom_resources", "patch",
         "watch", "paging", "errors", "server_side_apply", "delete_namespace"]


def on_alarm(signum, frame):
    raise Failure("the suite did not finish within %ds" % TOTAL_SECONDS)


def main(argv):
    if len(argv) != 3:
        print("usage: suite.py KUBECONFIG WORKDIR", file=sys.stderr)
        return 2
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(TOTAL_SECONDS)
    config.load_kube_config(config_file=argv[1])
    suite = Suite(argv[2])
    for name in STEPS:
        start = time.monotonic()
        try:
            getattr(suite, "step_" + name)()
        except Exception as e:
            print("FAIL %s: %s" % (name, e if isinstance(e, Failure) else repr(e)))
            traceback.print_exc(file=sys.stdout)
            return 1
        print("ok   %-18s %.2fs" % (name, time.monotonic() - start))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
