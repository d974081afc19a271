package join

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Join asks the member at joinURL (https://HOST:PORT, its secure port) to add this server's member
// as req describes. It first fetches the member's serving CA without verification and checks it
// against the token's hash, then talks to the member trusting that CA only. A member that is busy
// with another join, or not reachable yet, is retried until ctx ends; a refused token is not.
func Join(ctx context.Context, joinURL string, token Token, req Request, log *slog.Logger) (*Response, error) {
	base, err := CheckURL(joinURL)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var last error
	for {
		resp, retry, err := try(ctx, base, token, body)
		if err == nil {
			return resp, nil
		}
		if !retry {
			return nil, err
		}
		if !errors.Is(err, last) && (last == nil || err.Error() != last.Error()) {
			log.Info("joining the cluster: retrying", "member", joinURL, "err", err)
		}
		last = err
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("joining the cluster through %s: %w (last: %v)", joinURL, context.Cause(ctx), last)
		case <-time.After(time.Second):
		}
	}
}

// CheckURL checks a --join URL and returns its https://HOST:PORT.
func CheckURL(joinURL string) (string, error) {
	u, err := url.Parse(joinURL)
	if err != nil || u.Scheme != "https" || u.Hostname() == "" || u.Port() == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return "", fmt.Errorf("--join %q: want https://HOST:PORT, the secure port of a member", joinURL)
	}
	return "https://" + u.Host, nil
}

// try makes one attempt; retry says whether another may succeed.
func try(ctx context.Context, base string, token Token, body []byte) (_ *Response, retry bool, _ error) {
	// The first request trusts nothing: what it fetches is checked against the token.
	insecure := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	defer insecure.CloseIdleConnections()
	caPEM, code, err := call(ctx, insecure, http.MethodGet, base+PathCA, "", nil)
	if err != nil || code != http.StatusOK {
		return nil, true, fmt.Errorf("fetching the member's CA: %w", orStatus(err, code, caPEM))
	}
	hash, err := CAHash(caPEM)
	if err != nil {
		return nil, false, fmt.Errorf("the member's CA: %w", err)
	}
	if hash != token.CAHash {
		return nil, false, fmt.Errorf("the member's serving CA (sha256 %s) is not the one the join token names (%s): is --join the right server, and the token from its data dir?", hash, token.CAHash)
	}
	client := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{TLSClientConfig: pinned(caPEM)}}
	defer client.CloseIdleConnections()
	out, code, err := call(ctx, client, http.MethodPost, base+PathJoin, token.Secret, body)
	if err != nil {
		return nil, true, fmt.Errorf("asking to join: %w", err)
	}
	switch code {
	case http.StatusOK:
	case http.StatusUnauthorized, http.StatusForbidden:
		return nil, false, fmt.Errorf("the member refused the join token: %w", orStatus(nil, code, out))
	case http.StatusServiceUnavailable, http.StatusTooManyRequests, http.StatusGatewayTimeout:
		return nil, true, orStatus(nil, code, out)
	default:
		return nil, false, fmt.Errorf("the member refused the join: %w", orStatus(nil, code, out))
	}
	var resp Response
	if err := json.Unmarshal(out, &resp); err != nil {
		return nil, false, fmt.Errorf("reading the member's answer: %w", err)
	}
	if resp.InitialCluster == "" {
		return nil, false, errors.New("the member's answer names no initial cluster")
	}
	return &resp, false, nil
}

// pinned trusts the member's CA only, whatever name its serving certificate carries: the token's
// hash, not a host name, is what identifies the cluster (--join may be an IP the certificate does
// not list).
func pinned(caPEM []byte) *tls.Config {
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	return &tls.Config{
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("the member presented no certificate")
			}
			inter := x509.NewCertPool()
			for _, c := range cs.PeerCertificates[1:] {
				inter.AddCert(c)
			}
			_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
			return err
		},
	}
}

func call(ctx context.Context, c *http.Client, method, u, bearer string, body []byte) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	return out, resp.StatusCode, err
}

// orStatus is err, else the Status message of a failed answer.
func orStatus(err error, code int, body []byte) error {
	if err != nil {
		return err
	}
	var st metav1.Status
	if json.Unmarshal(body, &st) == nil && st.Message != "" {
		return fmt.Errorf("%d %s", code, st.Message)
	}
	return fmt.Errorf("%d %s", code, strings.TrimSpace(string(body)))
}
