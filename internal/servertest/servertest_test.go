package servertest

import (
	"io"
	"net/http"
	"testing"
)

func TestStart(t *testing.T) {
	s := Start(t)
	resp, err := http.Get(s.InsecureURL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "ok" {
		t.Errorf("insecure /healthz: %d %q", resp.StatusCode, body)
	}
	c, err := s.HTTPClient()
	if err != nil {
		t.Fatal(err)
	}
	resp, err = c.Get(s.SecureURL + "/readyz?verbose")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("admin /readyz over TLS: %d", resp.StatusCode)
	}
	if err := s.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	if _, err := http.Get(s.InsecureURL + "/healthz"); err == nil {
		t.Errorf("still serving after Stop")
	}
}

func TestStartWithoutInsecurePort(t *testing.T) {
	s := Start(t, "--insecure-port", "0")
	if s.AdminConfig == nil {
		t.Fatal("no admin config")
	}
}
