package encryption

import (
	"context"
	"log/slog"
	"os"
	"time"
)

// DefaultReloadInterval is how often Reload looks at the file. kube-apiserver looks once a minute;
// reading a small file every few seconds costs nothing and spares the operator the wait.
const DefaultReloadInterval = 5 * time.Second

// Reload reads path every interval until ctx ends and, when its content changed and is valid, makes it
// the configuration in force (--encryption-provider-config-automatic-reload). A file that is missing,
// empty or invalid is logged once per content and the configuration in force stays, as in kube: the
// server keeps reading and writing with the keys it has.
func (t *Transformers) Reload(ctx context.Context, path string, interval time.Duration, log *slog.Logger) {
	if interval <= 0 {
		interval = DefaultReloadInterval
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	// rejected is the content (or read error) last logged as bad, so a bad file is reported once.
	rejected := ""
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		data, err := os.ReadFile(path)
		seen := contentHash(data)
		if err != nil {
			seen = err.Error()
		}
		if seen == t.Config().Hash() || seen == rejected {
			continue
		}
		cfg, perr := Parse(path, data)
		if err == nil {
			err = perr
		}
		if err != nil {
			rejected = seen
			log.Error("the encryption provider config file could not be reloaded; the configuration in force stays",
				"file", path, "err", err)
			continue
		}
		rejected = ""
		t.SetConfig(cfg)
		log.Info("reloaded the encryption provider config", "file", path, "hash", cfg.Hash())
	}
}
