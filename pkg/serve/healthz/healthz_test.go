package healthz

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestHandler(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	bad := NamedCheck("etcd", func(*http.Request) error { return errors.New("connection refused") })
	tests := []struct {
		name   string
		checks []Checker
		url    string
		code   int
		body   string
	}{
		{name: "ok", checks: []Checker{Ping}, url: "/readyz", code: 200, body: "ok"},
		{name: "verbose", checks: []Checker{Ping, NamedCheck("log", func(*http.Request) error { return nil })}, url: "/readyz?verbose",
			code: 200, body: "[+]ping ok\n[+]log ok\nreadyz check passed\n"},
		{name: "detail", checks: []Checker{Ping, detailed{NamedCheck("leaderElection", func(*http.Request) error { return nil }), "runs: x"}},
			url: "/readyz?verbose", code: 200, body: "[+]ping ok\n[+]leaderElection ok (runs: x)\nreadyz check passed\n"},
		{name: "failure is always verbose and withholds the reason", checks: []Checker{Ping, bad}, url: "/readyz", code: 500,
			body: "[+]ping ok\n[-]etcd failed: reason withheld\nreadyz check failed\n"},
		{name: "exclude", checks: []Checker{Ping, bad}, url: "/readyz?verbose&exclude=etcd&exclude=nope&exclude=zap", code: 200,
			body: "[+]ping ok\n[+]etcd excluded: ok\nwarn: some health checks cannot be excluded: no matches for \"nope\",\"zap\"\nreadyz check passed\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			Handler("readyz", tt.checks, log).ServeHTTP(w, httptest.NewRequest("GET", tt.url, nil))
			if w.Code != tt.code || w.Body.String() != tt.body {
				t.Errorf("got %d %q, want %d %q", w.Code, w.Body.String(), tt.code, tt.body)
			}
			if ct := w.Header().Get("Content-Type"); ct != "text/plain; charset=utf-8" {
				t.Errorf("Content-Type = %q", ct)
			}
		})
	}
}

func TestCheckHandler(t *testing.T) {
	w := httptest.NewRecorder()
	CheckHandler(NamedCheck("etcd", func(*http.Request) error { return errors.New("connection refused") })).
		ServeHTTP(w, httptest.NewRequest("GET", "/readyz/etcd", nil))
	if w.Code != 500 || w.Body.String() != "internal server error: connection refused\n" {
		t.Errorf("got %d %q", w.Code, w.Body.String())
	}
}

func TestDelayed(t *testing.T) {
	now := time.Unix(0, 0)
	clock := func() time.Time { return now }
	c := Delayed(NewGate("poststarthook/x", errors.New("not finished")), time.Minute, clock)
	if err := c.Check(nil); err != nil {
		t.Errorf("inside the grace period: %v", err)
	}
	now = now.Add(2 * time.Minute)
	if err := c.Check(nil); err == nil {
		t.Errorf("after the grace period the check must report")
	}
}

// detailed is a check with a Detail.
type detailed struct {
	Checker
	detail string
}

func (d detailed) Detail() string { return d.detail }
