package patch

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The corpus (testdata/corpus) is objects as kube-apiserver v1.37.2 serves them, managedFields and
// all (kubectl get --show-managed-fields -o json): what kubectl create made of the objects a
// cluster's users write, what the server itself wrote (the default namespace, bootstrap RBAC, its
// identity Lease, an APIService), and objects with a second manager or kubectl's last-applied
// annotation, which the fast path must leave to the library. corpusObjects names each one's target and
// whether its one entry lets the fast path answer an update by that entry's manager. Of those, only
// the RoleBinding and the webhook configuration have no value whose change it answers: theirs are in
// lists or in an atomic struct (roleRef), which go to the library whole (noChange).
var corpusObjects = []struct {
	file     string
	target   string
	fast     bool
	noChange bool
}{
	{"apiservice.json", "apiregistration.k8s.io/v1 apiservices", true, false},
	{"clusterrole-bootstrap.json", "rbac.authorization.k8s.io/v1 clusterroles", true, false},
	{"clusterrolebinding-bootstrap.json", "rbac.authorization.k8s.io/v1 clusterrolebindings", true, false},
	{"configmap.json", "v1 configmaps", true, false},
	{"customresourcedefinition.json", "apiextensions.k8s.io/v1 customresourcedefinitions", false, false},
	{"event.json", "v1 events", true, false},
	{"lease-apiserver-identity.json", "coordination.k8s.io/v1 leases", true, false},
	{"lease.json", "coordination.k8s.io/v1 leases", true, false},
	{"namespace-default.json", "v1 namespaces", true, false},
	{"namespace.json", "v1 namespaces", true, false},
	{"role.json", "rbac.authorization.k8s.io/v1 roles", true, false},
	{"rolebinding.json", "rbac.authorization.k8s.io/v1 rolebindings", true, true},
	{"secret.json", "v1 secrets", true, false},
	{"serviceaccount.json", "v1 serviceaccounts", true, false},
	{"validatingadmissionpolicy.json", "admissionregistration.k8s.io/v1 validatingadmissionpolicies", true, false},
	{"validatingadmissionpolicybinding.json", "admissionregistration.k8s.io/v1 validatingadmissionpolicybindings", true, false},
	{"validatingwebhookconfiguration.json", "admissionregistration.k8s.io/v1 validatingwebhookconfigurations", true, true},
	{"widget.json", "example.com/v1 widgets", true, false},
}

// corpusCase is one corpus object ready for updates: the live object in its target's type, its JSON
// form to mutate, and the paths of its values.
type corpusCase struct {
	name    string
	target  Target
	own     *ownership
	live    runtime.Object
	doc     map[string]any
	manager string
	leaves  [][]any // paths (map keys and list indexes) of every scalar outside the stripped metadata
}

func loadCorpus(t testing.TB, p *Patcher) []corpusCase {
	t.Helper()
	var out []corpusCase
	for _, c := range corpusObjects {
		js, err := os.ReadFile(filepath.Join("testdata", "corpus", c.file))
		if err != nil {
			t.Fatal(err)
		}
		tg := parseTarget(t, c.target)
		cc := corpusCase{name: strings.TrimSuffix(c.file, ".json"), target: tg, own: ownershipOfTarget(t, p, tg),
			live: decode(t, p, tg, string(js))}
		if err := json.Unmarshal(js, &cc.doc); err != nil {
			t.Fatal(err)
		}
		entries, _, _ := unstructured.NestedSlice(cc.doc, "metadata", "managedFields")
		cc.manager = entries[len(entries)-1].(map[string]any)["manager"].(string)
		unstructured.RemoveNestedField(cc.doc, "metadata", "managedFields")
		cc.leaves = walkValues(cc.doc, nil, nil)
		out = append(out, cc)
	}
	return out
}

// walkValues appends the paths of v's scalars to leaves, in a fixed order, leaving out the metadata
// the field manager strips (which no update is judged on).
func walkValues(v any, path []any, leaves [][]any) [][]any {
	at := func(k any) []any { return append(append([]any(nil), path...), k) }
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if len(path) == 1 && path[0] == "metadata" && strippedMeta[k] {
				continue
			}
			leaves = walkValues(x[k], at(k), leaves)
		}
	case []any:
		for i, e := range x {
			leaves = walkValues(e, at(i), leaves)
		}
	default:
		leaves = append(leaves, path)
	}
	return leaves
}

// mutation is one change to a corpus object's JSON form.
type mutation int

const (
	changeValue mutation = iota // a new value of the same JSON type
	removeValue                 // the value gone from its map or list
	retypeValue                 // a value of another JSON type
	addSibling                  // a new key beside it, or a copy of it appended to its list
	mutationCount
)

func (m mutation) String() string {
	return [...]string{"change", "remove", "retype", "add beside"}[m]
}

// mutate applies m to the value at path in doc, in place.
func mutate(doc map[string]any, path []any, m mutation) {
	parent := jsonAt(doc, path[:len(path)-1])
	last := path[len(path)-1]
	old := child(parent, last)
	switch m {
	case changeValue:
		setChild(parent, last, changed(old))
	case retypeValue:
		if _, isString := old.(string); isString {
			setChild(parent, last, int64(7))
		} else {
			setChild(parent, last, "seven")
		}
	case removeValue:
		if mp, ok := parent.(map[string]any); ok {
			delete(mp, last.(string))
			return
		}
		// A list shrinks in place: its parent must see the shorter slice.
		l := parent.([]any)
		i := last.(int)
		shorter := append(append([]any(nil), l[:i]...), l[i+1:]...)
		replace(doc, path[:len(path)-1], shorter)
	case addSibling:
		if mp, ok := parent.(map[string]any); ok {
			mp["zz-added"] = changed(old)
			return
		}
		replace(doc, path[:len(path)-1], append(append([]any(nil), parent.([]any)...), runtime.DeepCopyJSONValue(old)))
	}
}

// jsonAt is the value at path in v.
func jsonAt(v any, path []any) any {
	for _, k := range path {
		v = child(v, k)
	}
	return v
}

func child(v any, k any) any {
	if i, ok := k.(int); ok {
		return v.([]any)[i]
	}
	return v.(map[string]any)[k.(string)]
}

func setChild(v any, k any, val any) {
	if i, ok := k.(int); ok {
		v.([]any)[i] = val
		return
	}
	v.(map[string]any)[k.(string)] = val
}

// replace sets the value at path (never the object itself) to val.
func replace(doc map[string]any, path []any, val any) {
	setChild(jsonAt(doc, path[:len(path)-1]), path[len(path)-1], val)
}

// changed is another value of v's JSON type that its Go type still decodes: a time a second later, a
// base64 string's next content, a string with a suffix, a number plus one, the other bool.
func changed(v any) any {
	switch x := v.(type) {
	case string:
		// Microseconds first: a MicroTime decodes only with all six digits, and the looser layouts
		// would parse the value and then write it without them.
		for _, layout := range []string{"2006-01-02T15:04:05.000000Z07:00", time.RFC3339} {
			if ts, err := time.Parse(layout, x); err == nil {
				return ts.Add(time.Second).Format(layout)
			}
		}
		if b, err := base64.StdEncoding.DecodeString(x); err == nil && len(x) >= 4 {
			return base64.StdEncoding.EncodeToString(append(b, '!'))
		}
		return x + "-x"
	case int64:
		return x + 1
	case float64:
		return x + 1
	case bool:
		return !x
	case nil:
		return "set"
	}
	panic(fmt.Sprintf("not a scalar: %#v", v))
}

// updateFrom decodes doc as an update of c's target sends it, or reports false when its type refuses
// doc (a retyped field of a built-in kind).
func (c *corpusCase) updateFrom(t testing.TB, p *Patcher, doc map[string]any) (runtime.Object, bool) {
	t.Helper()
	tg, err := p.target(c.target)
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	obj := tg.newObject()
	// From nothing, as the server decodes a body: a kind or version the document lacks stays unset.
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	if err := json.Unmarshal(js, obj); err != nil {
		return nil, false
	}
	return obj, true
}

// TestFastUpdateCorpus holds the fast path to structured-merge-diff on every corpus object, for
// every one of its values changed, removed, retyped and given a sibling, as an update by the
// object's manager and by another: wherever the fast path answers, its object must be the library's
// byte for byte, and it must answer an object's unchanged update and the change of a value its manager
// owns, or the comparison would prove nothing.
func TestFastUpdateCorpus(t *testing.T) {
	p := testPatcher(t)
	for i, cc := range loadCorpus(t, p) {
		t.Run(cc.name, func(t *testing.T) {
			same, ok := cc.updateFrom(t, p, cc.doc)
			if !ok {
				t.Fatal("the corpus object does not decode as its target")
			}
			if got := compareObjects(t, cc.own, cc.live, same, cc.manager); got != corpusObjects[i].fast {
				t.Fatalf("unchanged update by %s: fast path answered %v, want %v", cc.manager, got, corpusObjects[i].fast)
			}
			unchanged := string(mustJSON(t, same))
			// answered counts the updates the fast path answered that change the object: an update
			// its type decodes to the unchanged object (an unknown field dropped) proves nothing new.
			answered, refused := 0, 0
			for _, path := range cc.leaves {
				for m := mutation(0); m < mutationCount; m++ {
					doc := runtime.DeepCopyJSON(cc.doc)
					if m == changeValue && jsonAt(doc, path) == nil {
						continue // a null has no other value of its type
					}
					mutate(doc, path, m)
					obj, ok := cc.updateFrom(t, p, doc)
					if !ok {
						if m == changeValue {
							t.Fatalf("%s %v: the type refuses a value changed within its type", m, path)
						}
						refused++
						continue
					}
					for _, manager := range []string{cc.manager, "other-manager"} {
						if compareObjects(t, cc.own, cc.live, obj, manager) {
							if manager != cc.manager {
								t.Fatalf("%s %v: the fast path answered for a manager that owns nothing", m, path)
							}
							if string(mustJSON(t, obj)) != unchanged {
								answered++
							}
						}
					}
					if t.Failed() {
						t.Fatalf("at %s of %v", m, path)
					}
				}
			}
			if corpusObjects[i].fast && !corpusObjects[i].noChange && answered == 0 {
				t.Errorf("the fast path answered %d of the mutated updates: the comparison proves too little", answered)
			}
			if !corpusObjects[i].fast && answered > 0 {
				t.Errorf("the fast path answered %d updates of an object it must leave to the library", answered)
			}
			t.Logf("%d values, %d changing updates answered by the fast path, %d the type refuses", len(cc.leaves), answered, refused)
		})
	}
}

// FuzzFastUpdateCorpus applies sequences of mutations to corpus objects, as the input says, and holds
// every update the fast path answers to the library's answer.
func FuzzFastUpdateCorpus(f *testing.F) {
	for _, seed := range []string{"\x00", "\x03\x10", "\x06\x00\x04", "\x0b\x21\x42", "\x11\x08\x09\x0a", "\x07\xff\x01", "\x0c\x14\x24\x34"} {
		f.Add([]byte(seed))
	}
	p := testPatcher(f)
	corpus := loadCorpus(f, p)
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) == 0 {
			return
		}
		cc := corpus[int(ops[0])%len(corpus)]
		doc := runtime.DeepCopyJSON(cc.doc)
		for _, b := range ops[1:] {
			// Paths are taken afresh after each change: a removal or retyping moves the ones after it.
			leaves := walkValues(doc, nil, nil)
			if len(leaves) == 0 {
				break
			}
			mutate(doc, leaves[int(b>>2)%len(leaves)], mutation(b&3))
		}
		obj, ok := cc.updateFrom(t, p, doc)
		if !ok {
			return
		}
		compareObjects(t, cc.own, cc.live, obj, cc.manager)
	})
}
