package audit

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/google/uuid"
)

// Auditor writes the audit log of one server. A nil *Auditor audits nothing and adds nothing to
// the chain.
type Auditor struct {
	policy *Policy
	sink   *sink
	out    io.Closer
	// maxBody bounds the request and response bodies kept for an event.
	maxBody int
	newID   func() string
	now     func() time.Time
	// protobuf turns protobuf request bodies into the JSON objects of the events.
	protobuf *protobufToJSON
}

// Options configure an Auditor.
type Options struct {
	// Policy decides what is written; required.
	Policy *Policy
	// Out receives the events, one JSON line each; Close closes it.
	Out io.WriteCloser
	// Logger receives the errors of writing the log.
	Logger *slog.Logger
	// MaxBodyBytes bounds the request and response objects recorded in an event (0: 3 MiB, kube's
	// request body limit); a larger object is left out of the event.
	MaxBodyBytes int64
}

// defaultMaxBody is kube's --max-request-bytes default.
const defaultMaxBody = 3 << 20

// New returns an Auditor writing to o.Out what o.Policy asks for.
func New(o Options) (*Auditor, error) {
	limit := int(o.MaxBodyBytes)
	if o.MaxBodyBytes <= 0 || int64(limit) != o.MaxBodyBytes {
		limit = defaultMaxBody
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	pb, err := newProtobufToJSON()
	if err != nil {
		return nil, err
	}
	return &Auditor{
		policy:   o.Policy,
		sink:     &sink{out: o.Out, log: log},
		out:      o.Out,
		maxBody:  limit,
		newID:    uuid.NewString,
		now:      time.Now,
		protobuf: pb,
	}, nil
}

// Close closes the log; events of requests still running are lost. The server calls it after the
// drain, as kube shuts its audit backend down once in-flight requests are done.
func (a *Auditor) Close(context.Context) error {
	if a == nil {
		return nil
	}
	a.sink.mu.Lock()
	defer a.sink.mu.Unlock()
	return a.out.Close()
}

// state is what the audit filters share about one request.
type state struct {
	id       string
	received time.Time
	// ev is the request's event, set by WithAudit when the policy logs the request at all.
	ev *event
}

type stateKey struct{}

func stateFrom(ctx context.Context) *state {
	st, _ := ctx.Value(stateKey{}).(*state)
	return st
}
