package etcd3

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/apictl/apictl/pkg/storage"
)

// interpret turns an error from the etcd client into the store's: Unavailable when etcd cannot be
// reached, is leaderless or overloaded, or the deadline passed (so the handlers answer 503 or 504); the
// caller's own cancellation wrapped as it is; anything else wrapped with what was being done.
func (s *Store) interpret(op, key string, err error) error {
	switch {
	case err == nil:
		return nil
	case storage.CodeOf(err) != 0:
		return err
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("%s %q: %w", op, key, err)
	case errors.Is(err, context.DeadlineExceeded):
		return &storage.StorageError{Code: storage.Unavailable, Op: op, Key: key,
			Err: fmt.Errorf("etcd at %s did not answer before the deadline: %w", s.endpoints, err)}
	case unavailable(err):
		return &storage.StorageError{Code: storage.Unavailable, Op: op, Key: key,
			Err: fmt.Errorf("etcd at %s is unavailable: %w", s.endpoints, err)}
	case errors.Is(err, rpctypes.ErrNoSpace):
		// etcd's own message, which kube-apiserver passes on as it is.
		return &storage.StorageError{Code: storage.NoSpace, Op: op, Key: key, Err: err}
	case tooLarge(err):
		return &storage.StorageError{Code: storage.RequestTooLarge, Op: op, Key: key,
			Err: fmt.Errorf("%s %q: the value is larger than etcd accepts: %w", op, key, err)}
	}
	return fmt.Errorf("etcd %s %q: %w", op, key, err)
}

// unavailable reports whether err means etcd cannot serve right now but may soon: no connection, no
// leader, a server-side timeout, too many requests, or a client closing down.
func unavailable(err error) bool {
	if errors.Is(err, rpctypes.ErrTooManyRequests) {
		return true
	}
	var code codes.Code
	var etcdErr rpctypes.EtcdError
	if errors.As(err, &etcdErr) {
		code = etcdErr.Code()
	} else if st, ok := status.FromError(err); ok {
		code = st.Code()
	} else {
		return false
	}
	return code == codes.Unavailable || code == codes.DeadlineExceeded || code == codes.Canceled
}

// tooLarge reports whether etcd (or the client, before sending) refused a request for its size.
func tooLarge(err error) bool {
	if errors.Is(err, rpctypes.ErrRequestTooLarge) {
		return true
	}
	st, ok := status.FromError(err)
	return ok && st.Code() == codes.ResourceExhausted && strings.Contains(st.Message(), "larger than max")
}

func isCompacted(err error) bool { return errors.Is(err, rpctypes.ErrCompacted) }
func isFutureRev(err error) bool { return errors.Is(err, rpctypes.ErrFutureRev) }
func isLeaseGone(err error) bool { return errors.Is(err, rpctypes.ErrLeaseNotFound) }
func invalid(format string, args ...any) error {
	return &storage.StorageError{Code: storage.Invalid, Err: fmt.Errorf(format, args...)}
}

// diagnose adds to a connection failure what a plain dial to each endpoint says: the etcd client only
// reports that its deadline passed, while "connection refused", "no such host" or "certificate signed
// by unknown authority" tells an operator what to fix.
func (s *Store) diagnose(ctx context.Context, err error) error {
	// The caller's deadline has passed; the dials get a second of their own.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	var reasons []string
	for _, ep := range s.client.Endpoints() {
		host, secure := ep, false
		if u, perr := url.Parse(ep); perr == nil && u.Host != "" {
			host, secure = u.Host, u.Scheme == "https"
		}
		var dialer interface {
			DialContext(ctx context.Context, network, addr string) (net.Conn, error)
		} = &net.Dialer{}
		if secure && s.tlsConfig != nil {
			dialer = &tls.Dialer{Config: s.tlsConfig}
		}
		conn, derr := dialer.DialContext(ctx, "tcp", host)
		if derr != nil {
			reasons = append(reasons, derr.Error())
			continue
		}
		// With TLS 1.3 the server judges the client's certificate after the client's side of the
		// handshake is done: a refusal arrives as an alert on the first read.
		conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		var one [1]byte
		_, rerr := conn.Read(one[:])
		var netErr net.Error
		if rerr != nil && !errors.Is(rerr, io.EOF) && !(errors.As(rerr, &netErr) && netErr.Timeout()) {
			reasons = append(reasons, rerr.Error())
		}
		conn.Close()
	}
	if len(reasons) == 0 {
		return err
	}
	return fmt.Errorf("%w (%s)", err, strings.Join(reasons, "; "))
}
