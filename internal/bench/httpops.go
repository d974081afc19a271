package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// The namespaces the harness works in: the listed objects (and the one read by GET) live alone in
// listNamespace, so that LIST returns exactly them; writes go to writeNamespace; the memory
// measurement fills memoryNamespace.
const (
	listNamespace   = "bench-list"
	writeNamespace  = "bench-write"
	memoryNamespace = "bench-memory"
	// getName is the object GET reads: the first listed one.
	getName = "list-00000"
)

// listNamePrefix starts the names of the listed objects.
const listNamePrefix = "list-"

func listName(i int) string   { return fmt.Sprintf(listNamePrefix+"%05d", i) }
func updateName(w int) string { return "update-" + strconv.Itoa(w) }

func configMapsPath(namespace string) string {
	return "/api/v1/namespaces/" + namespace + "/configmaps"
}

// appendObjectHead appends an object's JSON up to the end of its metadata: typeMeta is its quoted
// apiVersion and kind as JSON (`"v1","kind":"ConfigMap"`), rv, when not empty, its
// metadata.resourceVersion (an update's precondition), app the value of its label app.
func appendObjectHead(b []byte, typeMeta, namespace, name, rv, app string) []byte {
	b = append(b, `{"apiVersion":`...)
	b = append(b, typeMeta...)
	b = append(b, `,"metadata":{"name":"`...)
	b = append(b, name...)
	b = append(b, `","namespace":"`...)
	b = append(b, namespace...)
	b = append(b, '"')
	if rv != "" {
		b = append(b, `,"resourceVersion":"`...)
		b = append(b, rv...)
		b = append(b, '"')
	}
	b = append(b, `,"labels":{"app":"`...)
	b = append(b, app...)
	return append(b, `"}}`...)
}

// configMap is the JSON of a small ConfigMap: a few short data keys, as applications keep. rv, when
// not empty, is sent as metadata.resourceVersion (an update's precondition).
func configMap(namespace, name, rv string, revision int) []byte {
	b := appendObjectHead(make([]byte, 0, 256), `"v1","kind":"ConfigMap"`, namespace, name, rv, "bench")
	b = append(b, `,"data":{"mode":"fast","region":"eu-west-1","revision":"`...)
	b = strconv.AppendInt(b, int64(revision), 10)
	return append(b, `"}}`...)
}

// objectKind is what the operations need to know of the kind of object they read and write.
type objectKind struct {
	// collection is the path of a namespace's objects.
	collection func(namespace string) string
	// object is an object's JSON; rv, when not empty, is its metadata.resourceVersion (an update's
	// precondition), and revision varies its content.
	object func(namespace, name, rv string, revision int) []byte
}

// configMapKind is the kind the comparison with etcd works on: small ConfigMaps.
func configMapKind() objectKind { return objectKind{collection: configMapsPath, object: configMap} }

// httpTarget sends requests to one port of the server with one client.
type httpTarget struct {
	client *http.Client
	base   string
	// protoMajor is the HTTP major version every response must have: 1 on the insecure port, 2 on
	// the secure one, so that a silent fallback cannot pass for HTTP/2.
	protoMajor int
}

// do sends one request and checks its status. The response body is discarded unless into is given,
// in which case it is read into it (reset first).
func (h httpTarget) do(ctx context.Context, method, path string, body []byte, want int, into *bytes.Buffer) error {
	_, err := h.send(ctx, method, path, body, want, into, false)
	return err
}

// getGzip GETs path as client-go does, asking for gzip, and returns the answer's Content-Encoding.
// It reads the body as it comes, compressed or not (a server before issue 17 never compresses),
// into into when given: decompressing is the client's own cost, the same whichever server
// compressed, and the measured client leaves it out.
func (h httpTarget) getGzip(ctx context.Context, path string, into *bytes.Buffer) (string, error) {
	return h.send(ctx, http.MethodGet, path, nil, http.StatusOK, into, true)
}

// send is do, asking for gzip when gzip is set; it returns the answer's Content-Encoding.
func (h httpTarget) send(ctx context.Context, method, path string, body []byte, want int, into *bytes.Buffer, gzip bool) (string, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, h.base+path, rd)
	if err != nil {
		return "", err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if gzip {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != want {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return "", &statusError{Method: method, Path: path, Code: resp.StatusCode, Want: want, Body: string(bytes.TrimSpace(msg))}
	}
	if resp.ProtoMajor != h.protoMajor {
		return "", fmt.Errorf("%s %s: answered over %s, want HTTP/%d", method, path, resp.Proto, h.protoMajor)
	}
	enc := resp.Header.Get("Content-Encoding")
	if into != nil {
		into.Reset()
		_, err = into.ReadFrom(resp.Body)
	} else {
		_, err = io.Copy(io.Discard, resp.Body)
	}
	if err != nil {
		return enc, fmt.Errorf("%s %s: reading the response: %w", method, path, err)
	}
	return enc, nil
}

// statusError is an answer with an unexpected status code.
type statusError struct {
	Method, Path string
	Code, Want   int
	// Body is the start of the answer, usually a kube Status saying what went wrong.
	Body string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%s %s: %d %s, want %d: %s", e.Method, e.Path, e.Code, http.StatusText(e.Code), e.Want, e.Body)
}

// objectMeta is the part of an object the harness reads back.
type objectMeta struct {
	Metadata struct {
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
}

// listCount is the part of a list the harness checks.
type listCount struct {
	Items []struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	} `json:"items"`
}

func resourceVersionOf(body []byte) (string, error) {
	var m objectMeta
	if err := json.Unmarshal(body, &m); err != nil {
		return "", fmt.Errorf("reading the resourceVersion of the response: %w", err)
	}
	if m.Metadata.ResourceVersion == "" {
		return "", fmt.Errorf("the response has no metadata.resourceVersion: %.200s", body)
	}
	return m.Metadata.ResourceVersion, nil
}

// serverWorkers returns, for each server operation on objects of kind, how a worker of a
// measurement labelled label (unique per measurement: names of created objects derive from it)
// prepares.
func serverWorkers(h httpTarget, kind objectKind, label string) map[Operation]newWorker {
	getPath := kind.collection(listNamespace) + "/" + getName
	listPath := kind.collection(listNamespace)
	writePath := kind.collection(writeNamespace)
	stateless := func(path string) newWorker {
		return func(context.Context, int) (op, error) {
			return func(ctx context.Context) error {
				return h.do(ctx, http.MethodGet, path, nil, http.StatusOK, nil)
			}, nil
		}
	}
	gzipped := func(path string) newWorker {
		return func(context.Context, int) (op, error) {
			return func(ctx context.Context) error {
				_, err := h.getGzip(ctx, path, nil)
				return err
			}, nil
		}
	}
	return map[Operation]newWorker{
		OpGet:        stateless(getPath),
		OpList:       stateless(listPath),
		OpListRV:     stateless(listPath + "?resourceVersion=0"),
		OpListGzip:   gzipped(listPath),
		OpListRVGzip: gzipped(listPath + "?resourceVersion=0"),
		OpCreate: func(_ context.Context, w int) (op, error) {
			prefix := label + "-w" + strconv.Itoa(w) + "-"
			n := 0
			return func(ctx context.Context) error {
				n++
				return h.do(ctx, http.MethodPost, writePath, kind.object(writeNamespace, prefix+strconv.Itoa(n), "", n), http.StatusCreated, nil)
			}, nil
		},
		OpUpdate: func(ctx context.Context, w int) (op, error) {
			// Each worker updates its own object, so no update conflicts with another's; it carries
			// the resourceVersion of its last response forward, as a controller does.
			name := updateName(w)
			path := writePath + "/" + name
			var buf bytes.Buffer
			if err := h.do(ctx, http.MethodGet, path, nil, http.StatusOK, &buf); err != nil {
				return nil, err
			}
			rv, err := resourceVersionOf(buf.Bytes())
			if err != nil {
				return nil, err
			}
			n := 0
			return func(ctx context.Context) error {
				n++
				if err := h.do(ctx, http.MethodPut, path, kind.object(writeNamespace, name, rv, n), http.StatusOK, &buf); err != nil {
					return err
				}
				next, err := resourceVersionOf(buf.Bytes())
				if err != nil {
					return err
				}
				rv = next
				return nil
			}, nil
		},
	}
}
