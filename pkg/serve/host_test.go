package serve

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestPlainPortChecksHost: the plain port refuses a request whose Host is not loopback, as a DNS
// rebinding page in a local browser would send it, and answers one for localhost.
func TestPlainPortChecksHost(t *testing.T) {
	ts := startTestServer(t, nil, fakeResources{}, nil)
	for host, want := range map[string]int{"evil.example": 403, "localhost": 200} {
		req, err := http.NewRequest("GET", ts.insecureURL+"/version", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want || (want == 403 && !strings.Contains(string(body), `not Host \"evil.example\"`)) {
			t.Errorf("Host %s: %d %s, want %d", host, resp.StatusCode, body, want)
		}
	}
}
