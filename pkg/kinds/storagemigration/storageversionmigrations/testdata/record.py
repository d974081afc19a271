#!/usr/bin/env python3
"""Records testdata/cases from a kube-apiserver v1.37.2 (the reference server, ../shared/reference).

Usage: REF_SERVER=... REF_CA=... REF_TOKEN=... python3 testdata/record.py

Each case is one request against a migration of a resource that is never served (so that the
controller only marks it Running, for a minute): the stored object before it ("old", none for a
create), the request, and kube's answer ("want"). The migrations are deleted afterwards.
"""
import json
import os
import subprocess
import sys

SERVER, CA, TOKEN = os.environ["REF_SERVER"], os.environ["REF_CA"], os.environ["REF_TOKEN"]
BASE = "/apis/storagemigration.k8s.io/v1/storageversionmigrations"
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")


def call(method, path, body=None):
    args = ["curl", "-s", "--cacert", CA, "-H", "Authorization: Bearer " + TOKEN, "-X", method,
            "-H", "Content-Type: application/json", SERVER + path]
    if body is not None:
        args += ["--data-binary", json.dumps(body)]
    return json.loads(subprocess.run(args, check=True, capture_output=True).stdout)


def svm(name, group, resource, status=None):
    o = {"apiVersion": "storagemigration.k8s.io/v1", "kind": "StorageVersionMigration",
         "metadata": {"name": name}, "spec": {"resource": {"group": group, "resource": resource}}}
    if status is not None:
        o["status"] = status
    return o


def cond(type_, status="True", reason="Test", message="test"):
    return {"type": type_, "status": status, "reason": reason, "message": message,
            "lastTransitionTime": "2026-01-01T00:00:00Z"}


def save(name, old, subresource, request, want):
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, name + ".json"), "w") as f:
        json.dump({"old": old, "subresource": subresource, "request": request, "want": want}, f, indent=1, sort_keys=True)
        f.write("\n")


def create(name, body):
    got = call("POST", BASE, body)
    save(name, None, "", body, got)
    if got.get("kind") != "Status":
        call("DELETE", BASE + "/" + body["metadata"]["name"])


def update(name, subresource, change, status=None):
    """Creates a fresh migration (with status written first when given), lets change edit what
    was stored, PUTs it (to /status when subresource is set) and records the answer."""
    obj = call("POST", BASE, svm("h-svm-rec", "hsvm.example.com", "nothing"))
    old = call("GET", BASE + "/h-svm-rec")  # the controller may have marked it Running
    if status is not None:
        old["status"] = status
        old = call("PUT", BASE + "/h-svm-rec/status", old)
    req = change(json.loads(json.dumps(old)))
    got = call("PUT", BASE + "/h-svm-rec" + ("/status" if subresource else ""), req)
    save(name, old, subresource, req, got)
    call("DELETE", BASE + "/h-svm-rec")
    return obj


def main():
    create("create-valid", svm("h-svm-valid", "", "configmaps", status={"conditions": [cond("Succeeded")]}))
    create("create-no-resource", svm("h-svm-nores", "apps", ""))
    create("create-bad-names", svm("h-svm-bad", "Bad_Group", "Config_Maps"))
    create("create-long-resource", svm("h-svm-long", "a." * 130 + "io", "r" * 64))

    def spec_change(o):
        o["spec"]["resource"]["resource"] = "other"
        return o
    update("update-spec-immutable", "", spec_change)

    def status_on_main(o):
        o["status"] = {"resourceVersion": "12", "conditions": [cond("Failed")]}
        o["metadata"]["labels"] = {"a": "b"}
        return o
    update("update-main-keeps-status", "", status_on_main)

    def both(o):
        o["status"] = {"conditions": [cond("Succeeded"), cond("Failed")]}
        return o
    update("status-both-true", "status", both)

    def bad_rv(o):
        o["status"]["resourceVersion"] = "abc"
        return o
    update("status-bad-resourceversion", "status", bad_rv)

    def bad_conditions(o):
        o["status"]["conditions"] = [{"type": "bad type!", "status": "Maybe", "reason": "no spaces allowed", "message": "m",
                                      "lastTransitionTime": "2026-01-01T00:00:00Z"},
                                     {"type": "Other", "status": "True", "reason": "", "message": "m"}]
        return o
    update("status-bad-conditions", "status", bad_conditions)

    def ok(o):
        o["status"] = {"resourceVersion": "10", "conditions": [cond("Succeeded")]}
        o["spec"]["resource"]["resource"] = "ignored"
        o["metadata"]["labels"] = {"ignored": "true"}
        return o
    update("status-ok-keeps-spec", "status", ok)

    def undo_success(o):
        o["status"] = {"resourceVersion": "11", "conditions": [cond("Succeeded", status="False")]}
        return o
    update("status-success-stays", "status", undo_success, status={"resourceVersion": "10", "conditions": [cond("Succeeded")]})

    def undo_failure(o):
        o["status"] = {"resourceVersion": "10", "conditions": [cond("Running")]}
        return o
    update("status-failure-stays", "status", undo_failure, status={"resourceVersion": "10", "conditions": [cond("Failed")]})


if __name__ == "__main__":
    sys.exit(main())
