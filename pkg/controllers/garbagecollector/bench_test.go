package garbagecollector

import (
	"fmt"
	"runtime"
	"testing"

	"k8s.io/apimachinery/pkg/util/uuid"
)

type nopQueue struct{}

func (nopQueue) Add(*node)            {}
func (nopQueue) AddRateLimited(*node) {}

// storedConfigMap is a ConfigMap as the server stores it, with an owner reference when owner is set.
func storedConfigMap(i int, owner string) []byte {
	refs := ""
	if owner != "" {
		refs = fmt.Sprintf(`,"ownerReferences":[{"apiVersion":"example.com/v1","kind":"Widget","name":"owner-%d","uid":%q,"controller":true,"blockOwnerDeletion":true}]`, i%1000, owner)
	}
	return fmt.Appendf(nil, `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"configmap-%06d","namespace":"ns-%d","uid":%q,"resourceVersion":"%d","creationTimestamp":"2026-11-26T10:00:00Z"%s,"managedFields":[{"manager":"kubectl","operation":"Update","apiVersion":"v1","time":"2026-11-26T10:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:key":{}}}}]},"data":{"key":"value-%d"}}`,
		i, i%10, uuid.NewUUID(), 100+i, refs, i)
}

// BenchmarkGraphMemory measures the dependency graph's memory per object: 100,000 stored ConfigMaps
// decoded and observed as a monitor does, half of them dependents of 1,000 owners. The heap is
// measured after a collection, with the graph alive and the decoded JSON gone.
//
//	go test ./pkg/controllers/garbagecollector -run '^$' -bench GraphMemory -benchtime 1x
func BenchmarkGraphMemory(b *testing.B) {
	const objects = 100_000
	owners := make([]string, 1000)
	for i := range owners {
		owners[i] = string(uuid.NewUUID())
	}
	values := make([][]byte, objects)
	for i := range values {
		owner := ""
		if i%2 == 0 {
			owner = owners[i%1000]
		}
		values[i] = storedConfigMap(i, owner)
	}
	b.ResetTimer()
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		g := newGraph(nopQueue{}, nopQueue{}, newAbsentCache(), nil, nil)
		src := &source{kind: g.kind("v1", "ConfigMap")}
		for _, v := range values {
			m, err := decodeMeta(v)
			if err != nil {
				b.Fatal(err)
			}
			g.observe(src, m)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		nodes := len(g.nodes)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(nodes), "bytes/node")
		b.ReportMetric(float64(nodes), "nodes")
		runtime.KeepAlive(g)
	}
}

// BenchmarkObserve measures the cost of one change through the graph: decode and apply.
func BenchmarkObserve(b *testing.B) {
	g := newGraph(nopQueue{}, nopQueue{}, newAbsentCache(), nil, nil)
	src := &source{kind: g.kind("v1", "ConfigMap")}
	v := storedConfigMap(1, string(uuid.NewUUID()))
	b.ReportAllocs()
	for b.Loop() {
		m, err := decodeMeta(v)
		if err != nil {
			b.Fatal(err)
		}
		g.observe(src, m)
	}
}
