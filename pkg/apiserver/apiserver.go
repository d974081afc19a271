// Package apiserver assembles `apictl serve` from its parts: checked options become a serve.Config,
// the server is created and prepared. The command and the test server both build through here, so
// tests run exactly what users run.
package apiserver

import (
	"context"
	"fmt"
	"io"

	"github.com/apictl/apictl/pkg/flags"
	"github.com/apictl/apictl/pkg/serve"
)

// New builds a prepared server from completed and validated options, logging to logOut. adjust, when
// not nil, may change the configuration before the server is created (tests hand in pre-bound
// listeners this way).
func New(ctx context.Context, o *flags.ServerOptions, logOut io.Writer, adjust func(*serve.Config)) (*serve.PreparedServer, error) {
	cfg, err := o.Config(ctx, logOut)
	if err != nil {
		return nil, err
	}
	if adjust != nil {
		adjust(cfg)
	}
	s, err := cfg.Complete().New()
	if err != nil {
		return nil, fmt.Errorf("creating the server: %w", err)
	}
	return s.PrepareRun(), nil
}
