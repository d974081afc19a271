package differential

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// userAgent is a client-like agent: kube pretty-prints JSON for curl, Wget and browsers only.
const userAgent = "apictl-differential/1.0"

// capturedHeaders are the response headers clients read; others (Audit-Id, Date, priority and
// fairness ids, Content-Length) differ by design or from run to run.
var capturedHeaders = []string{"Content-Type", "Warning", "Location", "Retry-After"}

// target is one server the corpus runs against.
type target struct {
	base   string // scheme://host:port
	token  string // bearer token, "" for none
	client *http.Client
}

func newTarget(base, token, caFile string) (*target, error) {
	tr := &http.Transport{DisableCompression: true}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s holds no PEM certificate", caFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &target{base: strings.TrimRight(base, "/"), token: token, client: &http.Client{Transport: tr}}, nil
}

// Response is what the goldens hold for one step, normalised.
type Response struct {
	// Step is "<file>/<id>"; Request is "METHOD path" after templating, for people.
	Step    string `json:"step"`
	Request string `json:"request"`
	Status  int    `json:"status"`
	// Headers are the captured headers, each with all its values in order.
	Headers map[string][]string `json:"headers,omitempty"`
	// Layout says how the body was written: "compact" (one line ending in a newline, as kube
	// writes JSON), "compact-no-newline", "indented", "text", "watch" or "empty".
	Layout string `json:"layout"`
	// Body is a normalised JSON body; Text a body that is not JSON; Events a watch stream's
	// events, BOOKMARKs left out.
	Body   json.RawMessage   `json:"body,omitempty"`
	Text   string            `json:"text,omitempty"`
	Events []json.RawMessage `json:"events,omitempty"`
}

// run sends one step and returns its normalised response, storing captures in vars.
func (tg *target) run(ctx context.Context, file string, s Step, vars map[string]string, z *normalizer) (*Response, error) {
	path, err := expand(s.Path, vars)
	if err != nil {
		return nil, err
	}
	var body []byte
	switch {
	case s.RawBody != nil:
		body = []byte(*s.RawBody)
	case s.Body != nil:
		body = s.Body
	}
	if body != nil {
		b, err := expand(string(body), vars)
		if err != nil {
			return nil, err
		}
		body = []byte(b)
	}
	timeout := 15 * time.Second
	if s.Watch != nil {
		// A server that sends fewer events than the reference did is cut off here.
		timeout = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, s.Method, tg.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range s.Headers {
		v, err := expand(v, vars)
		if err != nil {
			return nil, err
		}
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	if tg.token != "" {
		req.Header.Set("Authorization", "Bearer "+tg.token)
	}
	resp, err := tg.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()

	// Request keeps the ${name} placeholders, so the goldens do not change from one recording to the next.
	r := &Response{Step: file + "/" + s.ID, Request: s.Method + " " + s.Path, Status: resp.StatusCode}
	for _, h := range capturedHeaders {
		if v := resp.Header.Values(h); len(v) > 0 {
			if r.Headers == nil {
				r.Headers = map[string][]string{}
			}
			r.Headers[h] = z.texts(v)
		}
	}
	if s.Watch != nil && resp.StatusCode == http.StatusOK {
		r.Layout = "watch"
		r.Events, err = readWatch(resp.Body, s.Watch.Events, z, s.Ignore)
		if err != nil && ctx.Err() == nil {
			return r, fmt.Errorf("reading the watch of %s: %w", r.Step, err)
		}
		return r, nil
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if len(s.Capture) > 0 {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var v any
		_ = dec.Decode(&v)
		for name, p := range s.Capture {
			val, ok := lookup(v, p)
			if !ok {
				val = "<missing " + p + ">"
			}
			vars[name] = val
		}
	}
	r.Layout, r.Body, r.Text = normalizeBody(data, z, s.Ignore)
	return r, nil
}

// texts normalises header values (a Warning may quote a generated name).
func (z *normalizer) texts(vs []string) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = z.text(v)
	}
	return out
}

func normalizeBody(data []byte, z *normalizer, ignore []string) (layout string, body json.RawMessage, text string) {
	if len(data) == 0 {
		return "empty", nil, ""
	}
	norm, err := z.normalizeJSON(data, ignore)
	if err != nil {
		return "text", nil, z.text(string(data))
	}
	var compact bytes.Buffer
	if json.Compact(&compact, data) == nil {
		switch {
		case bytes.Equal(data, append(compact.Bytes(), '\n')):
			layout = "compact"
		case bytes.Equal(data, compact.Bytes()):
			layout = "compact-no-newline"
		default:
			layout = "indented"
		}
	}
	return layout, norm, ""
}

// readWatch reads newline-delimited watch events until n of them (BOOKMARKs not counted) or the
// end of the stream.
func readWatch(body io.Reader, n int, z *normalizer, ignore []string) ([]json.RawMessage, error) {
	dec := json.NewDecoder(body)
	var events []json.RawMessage
	for n == 0 || len(events) < n {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if err == io.EOF {
				return events, nil
			}
			return events, err
		}
		var head struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(raw, &head) == nil && head.Type == "BOOKMARK" {
			continue
		}
		norm, err := z.normalizeJSON(raw, ignore)
		if err != nil {
			return events, err
		}
		events = append(events, norm)
	}
	return events, nil
}
