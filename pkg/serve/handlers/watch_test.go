package handlers_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// watchEvent is one line of a watch stream.
type watchEvent struct {
	Type   string
	Object struct {
		Kind     string
		Metadata struct {
			Name, ResourceVersion string
			Annotations           map[string]string
		}
		Message string
		Code    int
	}
}

// watch opens a watch and returns a function that reads the next event, failing after 10 seconds.
func (a *api) watch(ctx context.Context, query string) func() watchEvent {
	a.t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", a.InsecureURL+cmPath+"?watch=true&"+query, nil)
	if err != nil {
		a.t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		a.t.Fatalf("watch: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	a.t.Cleanup(func() { resp.Body.Close() })
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return func() watchEvent {
		a.t.Helper()
		select {
		case line, ok := <-lines:
			if !ok {
				return watchEvent{Type: "CLOSED"}
			}
			var ev watchEvent
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				a.t.Fatalf("event %q: %v", line, err)
			}
			return ev
		case <-time.After(10 * time.Second):
			a.t.Fatal("no watch event within 10s")
			return watchEvent{}
		}
	}
}

func TestWatch(t *testing.T) {
	a := start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The server publishes kube-root-ca.crt in every namespace, as kube-controller-manager does: let
	// it arrive first, so that every later event is the test's own.
	for deadline := time.Now().Add(10 * time.Second); a.do("GET", cmPath+"/kube-root-ca.crt", "").code != 200; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no kube-root-ca.crt in the default namespace within 10s")
		}
	}
	a.do("POST", cmPath, configMap("before", `{}`)).expect(t, 201)
	list := a.do("GET", cmPath, "")
	rv := field(t, list.body, "metadata", "resourceVersion")

	fromList := a.watch(ctx, "resourceVersion="+rv)
	initial := a.watch(ctx, "") // unset: the current state first
	for _, name := range []string{"before", "kube-root-ca.crt"} {
		if ev := initial(); ev.Type != "ADDED" || ev.Object.Metadata.Name != name {
			t.Errorf("initial event = %+v, want ADDED %s", ev, name)
		}
	}
	a.do("POST", cmPath, configMap("w", `{}`)).expect(t, 201)
	a.do("PUT", cmPath+"/w", configMap("w", `{"a":"1"}`)).expect(t, 200)
	a.do("DELETE", cmPath+"/w", "").expect(t, 200)
	var got []string
	for range 3 {
		ev := fromList()
		got = append(got, ev.Type+" "+ev.Object.Metadata.Name)
		if ev.Object.Metadata.ResourceVersion == "" {
			t.Errorf("event without resourceVersion: %+v", ev)
		}
	}
	if strings.Join(got, ",") != "ADDED w,MODIFIED w,DELETED w" {
		t.Errorf("events after the list = %v", got)
	}
	if ev := initial(); ev.Type != "ADDED" || ev.Object.Metadata.Name != "w" {
		t.Errorf("live event after the initial state = %+v", ev)
	}

	selected := a.watch(ctx, "resourceVersion="+rv+"&fieldSelector=metadata.name%3Dw")
	if ev := selected(); ev.Type != "ADDED" || ev.Object.Metadata.Name != "w" {
		t.Errorf("field-selected watch = %+v", ev)
	}

	initialEnd := a.watch(ctx, "sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&resourceVersion=")
	for _, name := range []string{"before", "kube-root-ca.crt"} {
		if ev := initialEnd(); ev.Type != "ADDED" || ev.Object.Metadata.Name != name {
			t.Errorf("sendInitialEvents event = %+v, want ADDED %s", ev, name)
		}
	}
	if ev := initialEnd(); ev.Type != "BOOKMARK" || ev.Object.Metadata.Annotations["k8s.io/initial-events-end"] != "true" || ev.Object.Kind != "ConfigMap" {
		t.Errorf("end of initial events = %+v", ev)
	}

	short := a.watch(ctx, "resourceVersion="+rv+"&timeoutSeconds=1")
	for ev := short(); ev.Type != "CLOSED"; ev = short() {
	}
}

func TestWatchExpired(t *testing.T) {
	etcd := startEtcd(t)
	// Revision 1 must predate the watch caches' first lists, or a cache holds every change since it
	// and rightly serves a watch from it: a write outside the server's keys makes sure.
	if _, err := etcd.client.Put(context.Background(), "/unrelated", "x"); err != nil {
		t.Fatal(err)
	}
	a := start(t, "--etcd-servers", etcd.endpoint, "--etcd-compaction-interval", "0")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := range 3 {
		a.do("POST", cmPath, configMap("c"+string(rune('a'+i)), `{}`)).expect(t, 201)
	}
	etcd.compact(t)
	next := a.watch(ctx, "resourceVersion=1")
	ev := next()
	if ev.Type != "ERROR" || ev.Object.Code != 410 || !strings.Contains(ev.Object.Message, "too old") {
		t.Errorf("watch from a compacted revision = %+v", ev)
	}
}
