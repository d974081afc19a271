// Uses @kubernetes/client-node against an apictl server the way a user of the client would, and
// asserts every step. Run by test/clients/javascript_test.go:
//
//	node suite.mjs <kubeconfig>
//
// The server must serve the Gadget custom resource of gadgets.yaml. Each step runs on its own and the
// run goes on after a failing step, so that one failure does not hide the others. Exit codes: 0 every
// step passed, 1 a step failed, the run overran its deadline or node did not exit after the last
// step, 2 usage.
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';

// Every wait is bounded: a step by STEP_MS, an expected notification by WAIT_MS, the run by RUN_MS.
const RUN_MS = 120_000;
const STEP_MS = 20_000;
const WAIT_MS = 10_000;

const kubeconfig = process.argv[2];
if (process.argv.length !== 3) {
    console.error('usage: node suite.mjs <kubeconfig>');
    process.exit(2);
}
setTimeout(() => {
    console.error(`FAIL the run did not finish within ${RUN_MS / 1000}s`);
    process.exit(1);
}, RUN_MS).unref();

const kc = new k8s.KubeConfig();
kc.loadFromFile(kubeconfig);
const core = kc.makeApiClient(k8s.CoreV1Api);
const coordination = kc.makeApiClient(k8s.CoordinationV1Api);
const rbac = kc.makeApiClient(k8s.RbacAuthorizationV1Api);
const custom = kc.makeApiClient(k8s.CustomObjectsApi);
const objects = k8s.KubernetesObjectApi.makeApiClient(kc);

// The typed patch calls of 1.x send application/json-patch+json unless a middleware sets another
// content type; setHeaderOptions with a PatchStrategy is the documented way.
const strategicPatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch);
const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
const jsonPatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch);

// Namespaces of the steps other than the tutorial's, created by the first step.
const NS = 'js-objects';
const WATCH_NS = 'js-watch';
const INFORMER_NS = 'js-informer';
const PAGE_NS = 'js-page';
const GADGETS = { group: 'example.com', version: 'v1', plural: 'gadgets' };

const steps = [];
const step = (name, fn) => steps.push({ name, fn });

// ---------------------------------------------------------------------------------------------------
// helpers

function names(list) {
    return list.items.map((o) => o.metadata.name).sort();
}

function b64(s) {
    return Buffer.from(s).toString('base64');
}

function unb64(s) {
    return Buffer.from(s, 'base64').toString();
}

function withTimeout(promise, ms, what) {
    let timer;
    const timeout = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: not within ${ms}ms`)), ms);
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// waitFor polls cond until it returns true, for at most WAIT_MS.
async function waitFor(what, cond) {
    const end = Date.now() + WAIT_MS;
    for (;;) {
        if (await cond()) {
            return;
        }
        if (Date.now() > end) {
            throw new Error(`waiting for ${what}: not within ${WAIT_MS}ms`);
        }
        await new Promise((r) => setTimeout(r, 25));
    }
}

// expectStatus runs call, which must fail with an API error of the given HTTP code and Status reason,
// and returns the Status the server sent.
async function expectStatus(code, reason, call) {
    let err;
    try {
        await call();
    } catch (e) {
        err = e;
    }
    assert.ok(err, `expected HTTP ${code} ${reason}, the call succeeded`);
    if (!(err instanceof k8s.ApiException)) {
        throw err;
    }
    const status = typeof err.body === 'string' ? JSON.parse(err.body) : err.body;
    assert.equal(err.code, code, `HTTP code; body ${JSON.stringify(status)}`);
    assert.equal(status.kind, 'Status', `error body ${JSON.stringify(status)}`);
    assert.equal(status.apiVersion, 'v1');
    assert.equal(status.status, 'Failure');
    assert.equal(status.reason, reason, `error body ${JSON.stringify(status)}`);
    assert.equal(status.code, code);
    return status;
}

function describe(err) {
    if (err instanceof k8s.ApiException) {
        return `HTTP ${err.code}: ${typeof err.body === 'string' ? err.body : JSON.stringify(err.body)}`;
    }
    const where = (err?.stack ?? '').split('\n').find((l) => l.includes('suite.mjs'));
    return `${err?.message ?? err}${where ? `\n    ${where.trim()}` : ''}`;
}

// EventLog records what a watch or an informer reports, for waiting on.
class EventLog {
    constructor() {
        this.events = [];
    }
    add(e) {
        this.events.push(e);
    }
    async waitFor(what, pred) {
        await waitFor(what, () => this.events.some(pred));
        return this.events.find(pred);
    }
}

// ownerRef refers to a Gadget that exists: the server's garbage collector deletes an object whose
// owners are all gone, as kube-controller-manager's does.
function ownerRef(gadget) {
    return {
        apiVersion: 'example.com/v1',
        kind: 'Gadget',
        name: gadget.metadata.name,
        uid: gadget.metadata.uid,
    };
}

// ---------------------------------------------------------------------------------------------------
// steps

step('setup: namespaces for the other steps', async () => {
    for (const name of [NS, WATCH_NS, INFORMER_NS, PAGE_NS]) {
        await core.createNamespace({ body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
    }
});

step('tutorial: createNamespace and a configmap without apiVersion/kind', async () => {
    // The README's "Create a new namespace", in the 1.x object-parameter API.
    const namespace = {
        metadata: {
            name: 'js',
        },
    };
    const ns = await core.createNamespace({ body: namespace });
    assert.equal(ns.metadata.name, 'js');
    assert.ok(ns.metadata.uid, 'the created namespace has a uid');
    assert.equal(ns.status?.phase, 'Active');
    const read = await core.readNamespace({ name: namespace.metadata.name });
    assert.equal(read.metadata.uid, ns.metadata.uid);
    assert.equal(read.kind, 'Namespace');
    assert.equal(read.apiVersion, 'v1');

    const cm = await core.createNamespacedConfigMap({
        namespace: 'js',
        body: { metadata: { name: 'tutorial' }, data: { greeting: 'hello' } },
    });
    assert.equal(cm.metadata.namespace, 'js');
    assert.deepEqual(cm.data, { greeting: 'hello' });
    const got = await core.readNamespacedConfigMap({ name: 'tutorial', namespace: 'js' });
    assert.equal(got.kind, 'ConfigMap');
    assert.equal(got.apiVersion, 'v1');
    assert.deepEqual(got.data, { greeting: 'hello' });
});

step('namespaces: create, read, list, replace, delete', async () => {
    const name = 'js-ns';
    const created = await core.createNamespace({
        body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { step: 'namespaces' } } },
    });
    assert.deepEqual(created.spec?.finalizers, ['kubernetes']);
    const read = await core.readNamespace({ name });
    assert.equal(read.metadata.resourceVersion, created.metadata.resourceVersion);

    assert.deepEqual(names(await core.listNamespace({ labelSelector: 'step=namespaces' })), [name]);
    const all = names(await core.listNamespace());
    for (const n of ['default', 'kube-system', 'kube-public', name, NS]) {
        assert.ok(all.includes(n), `namespace ${n} in the list ${all}`);
    }

    read.metadata.labels.color = 'blue';
    const replaced = await core.replaceNamespace({ name, body: read });
    assert.equal(replaced.metadata.labels.color, 'blue');
    assert.notEqual(replaced.metadata.resourceVersion, read.metadata.resourceVersion);

    await core.deleteNamespace({ name });
    // The namespace is finalized by the server's namespace controller, then gone.
    await waitFor(`namespace ${name} to go`, async () => {
        try {
            const ns = await core.readNamespace({ name });
            assert.equal(ns.status.phase, 'Terminating');
            return false;
        } catch (err) {
            if (err instanceof k8s.ApiException && err.code === 404) {
                return true;
            }
            throw err;
        }
    });
});

step('configmaps: create, read, list, replace, conflict, delete, not found', async () => {
    const name = 'settings';
    const created = await core.createNamespacedConfigMap({
        namespace: NS,
        body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { app: 'js' } }, data: { a: '1' } },
    });
    assert.ok(created.metadata.creationTimestamp instanceof Date, 'creationTimestamp parses as a Date');

    const read = await core.readNamespacedConfigMap({ name, namespace: NS });
    assert.equal(read.metadata.uid, created.metadata.uid);
    assert.deepEqual(read.data, { a: '1' });

    const list = await core.listNamespacedConfigMap({ namespace: NS, labelSelector: 'app=js' });
    assert.deepEqual(names(list), [name]);
    assert.ok(list.metadata.resourceVersion, 'the list has a resourceVersion');

    read.data.b = '2';
    const replaced = await core.replaceNamespacedConfigMap({ name, namespace: NS, body: read });
    assert.deepEqual(replaced.data, { a: '1', b: '2' });
    assert.notEqual(replaced.metadata.resourceVersion, created.metadata.resourceVersion);

    // Replacing from a stale copy conflicts.
    created.data.c = '3';
    const conflict = await expectStatus(409, 'Conflict', () =>
        core.replaceNamespacedConfigMap({ name, namespace: NS, body: created }),
    );
    assert.equal(conflict.details?.name, name);
    await expectStatus(409, 'AlreadyExists', () =>
        core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name } } }),
    );

    const deleted = await core.deleteNamespacedConfigMap({ name, namespace: NS });
    assert.equal(deleted.status, 'Success');
    assert.equal(deleted.details?.name, name);
    assert.equal(deleted.details?.uid, created.metadata.uid);
    const missing = await expectStatus(404, 'NotFound', () => core.readNamespacedConfigMap({ name, namespace: NS }));
    assert.equal(missing.message, `configmaps "${name}" not found`);
    assert.deepEqual(missing.details, { name, kind: 'configmaps' });
});

step('secrets: stringData, read, list, replace, delete', async () => {
    const name = 'credentials';
    const created = await core.createNamespacedSecret({
        namespace: NS,
        body: {
            apiVersion: 'v1',
            kind: 'Secret',
            metadata: { name, labels: { app: 'js' } },
            stringData: { username: 'admin', password: 'hunter2' },
        },
    });
    assert.equal(created.type, 'Opaque');
    assert.equal(created.stringData, undefined, 'stringData is not stored');
    assert.equal(unb64(created.data.password), 'hunter2');
    assert.equal(unb64(created.data.username), 'admin');

    const read = await core.readNamespacedSecret({ name, namespace: NS });
    assert.deepEqual(read.data, created.data);
    assert.deepEqual(names(await core.listNamespacedSecret({ namespace: NS, labelSelector: 'app=js' })), [name]);

    read.data = { password: b64('correct horse') };
    read.stringData = { token: 'abc' };
    const replaced = await core.replaceNamespacedSecret({ name, namespace: NS, body: read });
    assert.deepEqual(Object.keys(replaced.data).sort(), ['password', 'token']);
    assert.equal(unb64(replaced.data.password), 'correct horse');
    assert.equal(unb64(replaced.data.token), 'abc');

    await core.deleteNamespacedSecret({ name, namespace: NS });
    await expectStatus(404, 'NotFound', () => core.readNamespacedSecret({ name, namespace: NS }));
});

step('leases: create, read, list, replace, delete', async () => {
    const name = 'leader';
    const acquired = new k8s.V1MicroTime();
    const created = await coordination.createNamespacedLease({
        namespace: NS,
        body: {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name },
            spec: {
                holderIdentity: 'js-a',
                leaseDurationSeconds: 15,
                acquireTime: acquired,
                renewTime: acquired,
                leaseTransitions: 0,
            },
        },
    });
    assert.equal(created.spec.holderIdentity, 'js-a');
    assert.equal(created.spec.leaseDurationSeconds, 15);
    assert.equal(new Date(created.spec.acquireTime).getTime(), acquired.getTime());
    assert.match(String(created.spec.renewTime), /\.\d{6}Z$/, 'renewTime is a MicroTime');

    const read = await coordination.readNamespacedLease({ name, namespace: NS });
    assert.equal(read.metadata.uid, created.metadata.uid);
    assert.deepEqual(names(await coordination.listNamespacedLease({ namespace: NS })), [name]);

    read.spec.holderIdentity = 'js-b';
    read.spec.leaseTransitions = 1;
    read.spec.renewTime = new k8s.V1MicroTime();
    const replaced = await coordination.replaceNamespacedLease({ name, namespace: NS, body: read });
    assert.equal(replaced.spec.holderIdentity, 'js-b');
    assert.equal(replaced.spec.leaseTransitions, 1);

    await coordination.deleteNamespacedLease({ name, namespace: NS });
    await expectStatus(404, 'NotFound', () => coordination.readNamespacedLease({ name, namespace: NS }));
});

step('rbac: roles, role bindings, cluster roles, cluster role bindings', async () => {
    const rules = [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }];
    const subjects = [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' }];
    const group = 'rbac.authorization.k8s.io';

    const role = await rbac.createNamespacedRole({
        namespace: NS,
        body: { apiVersion: `${group}/v1`, kind: 'Role', metadata: { name: 'reader' }, rules },
    });
    assert.deepEqual(role.rules.map((r) => r.verbs), [['get', 'list']]);
    const binding = await rbac.createNamespacedRoleBinding({
        namespace: NS,
        body: {
            apiVersion: `${group}/v1`,
            kind: 'RoleBinding',
            metadata: { name: 'reader' },
            roleRef: { apiGroup: group, kind: 'Role', name: 'reader' },
            subjects,
        },
    });
    assert.equal(binding.roleRef.name, 'reader');
    const clusterRole = await rbac.createClusterRole({
        body: { apiVersion: `${group}/v1`, kind: 'ClusterRole', metadata: { name: 'js-reader' }, rules },
    });
    assert.equal(clusterRole.metadata.namespace, undefined);
    await rbac.createClusterRoleBinding({
        body: {
            apiVersion: `${group}/v1`,
            kind: 'ClusterRoleBinding',
            metadata: { name: 'js-reader' },
            roleRef: { apiGroup: group, kind: 'ClusterRole', name: 'js-reader' },
            subjects,
        },
    });

    assert.deepEqual(names(await rbac.listNamespacedRole({ namespace: NS })), ['reader']);
    assert.deepEqual(names(await rbac.listNamespacedRoleBinding({ namespace: NS })), ['reader']);
    assert.ok(names(await rbac.listClusterRole()).includes('js-reader'));
    assert.ok(names(await rbac.listClusterRoleBinding()).includes('js-reader'));

    const readRole = await rbac.readNamespacedRole({ name: 'reader', namespace: NS });
    readRole.rules.push({ apiGroups: [''], resources: ['secrets'], verbs: ['get'] });
    const replacedRole = await rbac.replaceNamespacedRole({ name: 'reader', namespace: NS, body: readRole });
    assert.deepEqual(replacedRole.rules.map((r) => r.resources), [['configmaps'], ['secrets']]);

    const readBinding = await rbac.readNamespacedRoleBinding({ name: 'reader', namespace: NS });
    readBinding.subjects.push({ kind: 'ServiceAccount', name: 'default', namespace: NS });
    const replacedBinding = await rbac.replaceNamespacedRoleBinding({ name: 'reader', namespace: NS, body: readBinding });
    assert.deepEqual(replacedBinding.subjects.map((s) => s.name), ['alice', 'default']);
    // A binding's roleRef cannot change.
    replacedBinding.roleRef = { apiGroup: group, kind: 'ClusterRole', name: 'js-reader' };
    await expectStatus(422, 'Invalid', () =>
        rbac.replaceNamespacedRoleBinding({ name: 'reader', namespace: NS, body: replacedBinding }),
    );

    const readClusterRole = await rbac.readClusterRole({ name: 'js-reader' });
    readClusterRole.metadata.labels = { replaced: 'yes' };
    const replacedClusterRole = await rbac.replaceClusterRole({ name: 'js-reader', body: readClusterRole });
    assert.equal(replacedClusterRole.metadata.labels.replaced, 'yes');
    const readClusterBinding = await rbac.readClusterRoleBinding({ name: 'js-reader' });
    readClusterBinding.subjects = [{ kind: 'Group', apiGroup: group, name: 'readers' }];
    const replacedClusterBinding = await rbac.replaceClusterRoleBinding({ name: 'js-reader', body: readClusterBinding });
    assert.equal(replacedClusterBinding.subjects[0].name, 'readers');

    await rbac.deleteNamespacedRoleBinding({ name: 'reader', namespace: NS });
    await rbac.deleteNamespacedRole({ name: 'reader', namespace: NS });
    await rbac.deleteClusterRoleBinding({ name: 'js-reader' });
    await rbac.deleteClusterRole({ name: 'js-reader' });
    await expectStatus(404, 'NotFound', () => rbac.readNamespacedRole({ name: 'reader', namespace: NS }));
    await expectStatus(404, 'NotFound', () => rbac.readNamespacedRoleBinding({ name: 'reader', namespace: NS }));
    await expectStatus(404, 'NotFound', () => rbac.readClusterRole({ name: 'js-reader' }));
    await expectStatus(404, 'NotFound', () => rbac.readClusterRoleBinding({ name: 'js-reader' }));
});

step('custom resources: CustomObjectsApi create, get, list, replace, patch, status, delete', async () => {
    const name = 'g1';
    const created = await custom.createNamespacedCustomObject({
        ...GADGETS,
        namespace: NS,
        body: {
            apiVersion: 'example.com/v1',
            kind: 'Gadget',
            metadata: { name, labels: { app: 'js' } },
            spec: { color: 'red', size: 1, tags: ['a'] },
        },
    });
    assert.equal(created.kind, 'Gadget');
    assert.ok(created.metadata.uid);

    const got = await custom.getNamespacedCustomObject({ ...GADGETS, namespace: NS, name });
    assert.deepEqual(got.spec, { color: 'red', size: 1, tags: ['a'] });
    const list = await custom.listNamespacedCustomObject({ ...GADGETS, namespace: NS, labelSelector: 'app=js' });
    assert.equal(list.kind, 'GadgetList');
    assert.equal(list.apiVersion, 'example.com/v1');
    assert.deepEqual(names(list), [name]);

    got.spec.size = 2;
    got.status = { phase: 'ignored' };
    const replaced = await custom.replaceNamespacedCustomObject({ ...GADGETS, namespace: NS, name, body: got });
    assert.equal(replaced.spec.size, 2);
    assert.equal(replaced.status, undefined, 'an update of the main resource ignores status');

    const merged = await custom.patchNamespacedCustomObject(
        { ...GADGETS, namespace: NS, name, body: { spec: { color: 'blue' } } },
        mergePatch,
    );
    assert.deepEqual(merged.spec, { color: 'blue', size: 2, tags: ['a'] });
    const patched = await custom.patchNamespacedCustomObject(
        { ...GADGETS, namespace: NS, name, body: [{ op: 'add', path: '/spec/tags/-', value: 'b' }] },
        jsonPatch,
    );
    assert.deepEqual(patched.spec.tags, ['a', 'b']);
    // Custom resources have no strategic merge patch.
    await expectStatus(415, 'UnsupportedMediaType', () =>
        custom.patchNamespacedCustomObject(
            { ...GADGETS, namespace: NS, name, body: { spec: { color: 'green' } } },
            strategicPatch,
        ),
    );

    const withStatus = await custom.patchNamespacedCustomObjectStatus(
        { ...GADGETS, namespace: NS, name, body: { status: { phase: 'Ready' }, spec: { color: 'ignored' } } },
        mergePatch,
    );
    assert.equal(withStatus.status.phase, 'Ready');
    assert.equal(withStatus.spec.color, 'blue', 'a status update ignores spec');
    const statusRead = await custom.getNamespacedCustomObjectStatus({ ...GADGETS, namespace: NS, name });
    assert.equal(statusRead.status.phase, 'Ready');

    await custom.deleteNamespacedCustomObject({ ...GADGETS, namespace: NS, name });
    await expectStatus(404, 'NotFound', () => custom.getNamespacedCustomObject({ ...GADGETS, namespace: NS, name }));
});

step('patch: strategic merge, merge, JSON patch on a configmap', async () => {
    const name = 'patched';
    const cm = { name, namespace: NS };
    const owners = {};
    for (const owner of ['a', 'bb', 'ccc']) {
        owners[owner] = await custom.createNamespacedCustomObject({
            ...GADGETS,
            namespace: NS,
            body: { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: owner }, spec: { color: 'red', size: 1 } },
        });
    }
    await core.createNamespacedConfigMap({
        namespace: NS,
        body: {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name, ownerReferences: [ownerRef(owners.a)] },
            data: { a: '1', b: '2' },
        },
    });

    // Strategic merge: ownerReferences merge on uid (kube puts the patch's new items first), null
    // deletes a key.
    const strategic = await core.patchNamespacedConfigMap(
        { ...cm, body: { metadata: { ownerReferences: [ownerRef(owners.bb)] }, data: { b: null, c: '3' } } },
        strategicPatch,
    );
    assert.deepEqual(strategic.metadata.ownerReferences.map((r) => r.name), ['bb', 'a']);
    assert.deepEqual(strategic.data, { a: '1', c: '3' });

    // Merge patch: lists are replaced.
    const merged = await core.patchNamespacedConfigMap(
        { ...cm, body: { metadata: { ownerReferences: [ownerRef(owners.ccc)] }, data: { a: '10' } } },
        mergePatch,
    );
    assert.deepEqual(merged.metadata.ownerReferences.map((r) => r.name), ['ccc']);
    assert.deepEqual(merged.data, { a: '10', c: '3' });

    const ops = [
        { op: 'test', path: '/data/a', value: '10' },
        { op: 'replace', path: '/data/a', value: '11' },
        { op: 'remove', path: '/data/c' },
        { op: 'add', path: '/data/d', value: '4' },
    ];
    const patched = await core.patchNamespacedConfigMap({ ...cm, body: ops }, jsonPatch);
    assert.deepEqual(patched.data, { a: '11', d: '4' });
    // Without options the client sends a JSON patch.
    const byDefault = await core.patchNamespacedConfigMap({
        ...cm,
        body: [{ op: 'add', path: '/metadata/labels', value: { patched: 'json' } }],
    });
    assert.deepEqual(byDefault.metadata.labels, { patched: 'json' });

    await core.deleteNamespacedConfigMap(cm);
    for (const owner of Object.keys(owners)) {
        await custom.deleteNamespacedCustomObject({ ...GADGETS, namespace: NS, name: owner });
    }
});

step('watch: ADDED, MODIFIED, DELETED, then resume from a resourceVersion', async () => {
    const watch = new k8s.Watch(kc);
    const path = `/api/v1/namespaces/${WATCH_NS}/configmaps`;
    const start = await core.listNamespacedConfigMap({ namespace: WATCH_NS });

    const watchFrom = async (resourceVersion, log) => {
        const controller = await watch.watch(
            path,
            { resourceVersion },
            (type, obj) => log.add({ type, name: obj?.metadata?.name, rv: obj?.metadata?.resourceVersion, obj }),
            (err) => log.add({ type: 'done', err }),
        );
        return controller;
    };

    const first = new EventLog();
    const controller = await watchFrom(start.metadata.resourceVersion, first);
    let added;
    try {
        const created = await core.createNamespacedConfigMap({
            namespace: WATCH_NS,
            body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w' }, data: { v: '1' } },
        });
        added = await first.waitFor('ADDED', (e) => e.type === 'ADDED');
        assert.equal(added.rv, created.metadata.resourceVersion);
        const updated = await core.patchNamespacedConfigMap(
            { name: 'w', namespace: WATCH_NS, body: { data: { v: '2' } } },
            mergePatch,
        );
        const modified = await first.waitFor('MODIFIED', (e) => e.type === 'MODIFIED');
        assert.equal(modified.rv, updated.metadata.resourceVersion);
        assert.deepEqual(modified.obj.data, { v: '2' });
        await core.deleteNamespacedConfigMap({ name: 'w', namespace: WATCH_NS });
        await first.waitFor('DELETED', (e) => e.type === 'DELETED');
    } finally {
        controller.abort();
    }
    const seen = first.events.filter((e) => e.type !== 'done');
    assert.deepEqual(seen.map((e) => `${e.type} ${e.name}`), ['ADDED w', 'MODIFIED w', 'DELETED w']);

    // A watch from the ADDED event's resourceVersion replays what came after it.
    const resumed = new EventLog();
    const again = await watchFrom(added.rv, resumed);
    try {
        await resumed.waitFor('DELETED on the resumed watch', (e) => e.type === 'DELETED');
    } finally {
        again.abort();
    }
    assert.deepEqual(
        resumed.events.filter((e) => e.type !== 'done').map((e) => `${e.type} ${e.name} ${e.rv}`),
        seen.slice(1).map((e) => `${e.type} ${e.name} ${e.rv}`),
    );
});

step('informer: makeInformer sees add, update, delete', async () => {
    const path = `/api/v1/namespaces/${INFORMER_NS}/configmaps`;
    const cm = (name, v) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v } });
    await core.createNamespacedConfigMap({ namespace: INFORMER_NS, body: cm('before', '1') });

    const informer = k8s.makeInformer(kc, path, () => core.listNamespacedConfigMap({ namespace: INFORMER_NS }));
    const log = new EventLog();
    const errors = [];
    // The server's root-CA publisher adds kube-root-ca.crt to every namespace, as kube's does: the
    // informer sees it too, at a moment of its own; the checks are about the test's objects.
    const ours = (o) => o.metadata.name !== 'kube-root-ca.crt';
    informer.on('add', (o) => ours(o) && log.add(`add ${o.metadata.name} ${o.data?.v}`));
    informer.on('update', (o) => ours(o) && log.add(`update ${o.metadata.name} ${o.data?.v}`));
    informer.on('delete', (o) => ours(o) && log.add(`delete ${o.metadata.name}`));
    informer.on('error', (err) => errors.push(err));
    let stopped = false;
    try {
        await informer.start();
        await log.waitFor('the listed object', (e) => e === 'add before 1');

        await core.createNamespacedConfigMap({ namespace: INFORMER_NS, body: cm('after', '1') });
        await log.waitFor('add', (e) => e === 'add after 1');
        await core.patchNamespacedConfigMap(
            { name: 'after', namespace: INFORMER_NS, body: { data: { v: '2' } } },
            strategicPatch,
        );
        await log.waitFor('update', (e) => e === 'update after 2');
        await core.deleteNamespacedConfigMap({ name: 'before', namespace: INFORMER_NS });
        await log.waitFor('delete', (e) => e === 'delete before');

        assert.deepEqual(informer.list(INFORMER_NS).filter(ours).map((o) => o.metadata.name), ['after']);
        assert.equal(informer.get('after', INFORMER_NS)?.data?.v, '2');
        assert.deepEqual(errors.map(describe), [], 'informer errors');
        await informer.stop();
        stopped = true;
    } finally {
        if (!stopped) {
            await informer.stop();
        }
    }
    assert.deepEqual(log.events, ['add before 1', 'add after 1', 'update after 2', 'delete before']);
});

step('KubernetesObjectApi: server-side apply, create, read, list, replace, patch, delete', async () => {
    const applied = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'applied', namespace: NS },
        data: { a: '1' },
    };
    const ssa = k8s.PatchStrategy.ServerSideApply;
    const first = await objects.patch(applied, undefined, undefined, 'js-suite', true, ssa);
    assert.deepEqual(first.data, { a: '1' });
    const managers = first.metadata.managedFields.map((f) => `${f.manager} ${f.operation}`);
    assert.deepEqual(managers, ['js-suite Apply']);

    applied.data.b = '2';
    const second = await objects.patch(applied, undefined, undefined, 'js-suite', true, ssa);
    assert.deepEqual(second.data, { a: '1', b: '2' });
    // Another manager changing an owned field conflicts unless it forces.
    const rival = { ...applied, data: { a: '9' } };
    await expectStatus(409, 'Conflict', () => objects.patch(rival, undefined, undefined, 'js-rival', false, ssa));
    const forced = await objects.patch(rival, undefined, undefined, 'js-rival', true, ssa);
    assert.deepEqual(forced.data, { a: '9', b: '2' });

    // Apply a custom resource.
    const gadget = {
        apiVersion: 'example.com/v1',
        kind: 'Gadget',
        metadata: { name: 'applied', namespace: NS },
        spec: { color: 'green', size: 3 },
    };
    const appliedGadget = await objects.patch(gadget, undefined, undefined, 'js-suite', true, ssa);
    assert.deepEqual(appliedGadget.spec, { color: 'green', size: 3 });
    const readGadget = await objects.read({ apiVersion: 'example.com/v1', kind: 'Gadget', metadata: gadget.metadata });
    assert.equal(readGadget.metadata.uid, appliedGadget.metadata.uid);
    await objects.delete(gadget);

    // The generic verbs on a Secret.
    const secret = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'generic', namespace: NS, labels: { generic: 'yes' } },
        stringData: { k: 'v' },
    };
    const created = await objects.create(secret);
    assert.equal(unb64(created.data.k), 'v');
    const read = await objects.read({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'generic', namespace: NS } });
    assert.equal(read.metadata.uid, created.metadata.uid);
    const list = await objects.list('v1', 'Secret', NS, undefined, undefined, undefined, undefined, 'generic=yes');
    assert.deepEqual(names(list), ['generic']);
    read.data.k = b64('w');
    const replaced = await objects.replace(read);
    assert.equal(unb64(replaced.data.k), 'w');
    const patched = await objects.patch({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'generic', namespace: NS, labels: { patched: 'strategic' } },
    });
    assert.deepEqual(patched.metadata.labels, { generic: 'yes', patched: 'strategic' });
    await objects.delete(read);
    await objects.delete(applied);
    await expectStatus(404, 'NotFound', () => objects.read(read));
});

step('paging: limit and continue', async () => {
    for (let i = 0; i < 7; i++) {
        await core.createNamespacedConfigMap({
            namespace: PAGE_NS,
            body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `page-${i}` } },
        });
    }
    const all = await core.listNamespacedConfigMap({ namespace: PAGE_NS });
    const pages = [];
    let token;
    do {
        const page = await core.listNamespacedConfigMap({ namespace: PAGE_NS, limit: 3, _continue: token });
        pages.push(page);
        token = page.metadata._continue;
        assert.ok(pages.length <= 10, 'paging ends');
    } while (token);
    assert.deepEqual(
        pages.map((p) => p.items.length),
        [3, 3, all.items.length - 6],
    );
    assert.deepEqual(
        pages.flatMap((p) => p.items.map((o) => o.metadata.name)),
        all.items.map((o) => o.metadata.name),
    );
    assert.equal(pages[0].metadata.remainingItemCount, all.items.length - 3);
    // Every page is read at the first page's resourceVersion.
    assert.deepEqual(
        pages.map((p) => p.metadata.resourceVersion),
        pages.map(() => pages[0].metadata.resourceVersion),
    );
});

step('errors: 404 and 409 bodies', async () => {
    const missing = await expectStatus(404, 'NotFound', () =>
        core.readNamespacedConfigMap({ name: 'missing', namespace: NS }),
    );
    assert.equal(missing.message, 'configmaps "missing" not found');
    const noNamespace = await expectStatus(404, 'NotFound', () =>
        core.createNamespacedConfigMap({
            namespace: 'js-missing',
            body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } },
        }),
    );
    assert.equal(noNamespace.message, 'namespaces "js-missing" not found');
    const exists = await expectStatus(409, 'AlreadyExists', () =>
        core.createNamespace({ body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } }),
    );
    assert.equal(exists.message, `namespaces "${NS}" already exists`);
    assert.deepEqual(exists.details, { name: NS, kind: 'namespaces' });
});

// ---------------------------------------------------------------------------------------------------

let failed = 0;
for (const { name, fn } of steps) {
    const start = Date.now();
    try {
        await withTimeout(fn(), STEP_MS, name);
        console.log(`ok   ${name} (${Date.now() - start}ms)`);
    } catch (err) {
        failed++;
        console.log(`FAIL ${name} (${Date.now() - start}ms)\n    ${describe(err)}`);
    }
}
console.log(failed ? `FAIL ${failed} of ${steps.length} steps` : `PASS ${steps.length} steps`);
process.exitCode = failed ? 1 : 0;
// Node exits once nothing is left open; a watch or an informer left running would keep it alive.
setTimeout(() => {
    console.error('FAIL node did not exit within 5s of the last step: a watch or an informer is still open');
    process.exit(1);
}, 5_000).unref();
