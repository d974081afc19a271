package etcd3

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.etcd.io/etcd/api/v3/mvccpb"

	"github.com/apictl/apictl/pkg/storage"
	"github.com/apictl/apictl/pkg/storage/encryption"
)

// BenchmarkListEncrypted lists 1000 Secrets of benchValue's size with each provider, against the same
// list without any --encryption-provider-config ("off") and with one that leaves Secrets out
// ("unlisted", kube's identity check on each value).
func BenchmarkListEncrypted(b *testing.B) {
	providers := benchProviders()
	errShort := errors.New("the list is not 1000 items long")
	for _, p := range providers {
		b.Run(p.name, func(b *testing.B) {
			s := newStore(b, nil, Config{Transformers: benchTransformers(b, p.resource, p.provider)})
			ctx := context.Background()
			for i := range 1000 {
				if _, err := s.Create(ctx, fmt.Sprintf("secrets/default/s%04d", i), benchValue, 0); err != nil {
					b.Fatal(err)
				}
			}
			runParallel(b, stateless(func() error {
				list, err := s.List(ctx, "secrets/default/", storage.ListOptions{})
				if err == nil && len(list.Items) != 1000 {
					err = errShort
				}
				return err
			}))
		})
	}
}

// benchProviders are the configurations the benchmarks compare.
func benchProviders() []struct{ name, resource, provider string } {
	key32 := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	return []struct{ name, resource, provider string }{
		{"off", "", ""},
		{"unlisted", "configmaps", "aescbc: {keys: [{name: k, secret: " + key32 + "}]}"},
		{"aescbc", "secrets", "aescbc: {keys: [{name: k, secret: " + key32 + "}]}"},
		{"aesgcm", "secrets", "aesgcm: {keys: [{name: k, secret: " + key32 + "}]}"},
		{"secretbox", "secrets", "secretbox: {keys: [{name: k, secret: " + key32 + "}]}"},
	}
}

// benchTransformers loads a configuration with one provider for resource; nil when provider is "".
func benchTransformers(b *testing.B, resource, provider string) Transformers {
	if provider == "" {
		return nil
	}
	path := filepath.Join(b.TempDir(), "encryption.yaml")
	content := "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n" +
		"- resources: [" + resource + "]\n  providers: [{" + provider + "}]\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		b.Fatal(err)
	}
	loaded, err := encryption.Load(path)
	if err != nil {
		b.Fatal(err)
	}
	return encryption.NewTransformers(loaded, servedForTest)
}

// BenchmarkListItems1000 is the store's own share of a list of 1000 Secrets, without etcd: the
// per-item work of the list loop (keyValue, and decryption when configured) on values already read.
func BenchmarkListItems1000(b *testing.B) {
	for _, p := range benchProviders() {
		b.Run(p.name, func(b *testing.B) {
			s := &Store{prefix: "/registry/", codec: codec{prefix: "/registry/"}}
			if t := benchTransformers(b, p.resource, p.provider); t != nil {
				s.codec.transformers = t
			}
			ctx := context.Background()
			kvs := make([]*mvccpb.KeyValue, 1000)
			for i := range kvs {
				key := fmt.Sprintf("secrets/default/s%04d", i)
				stored, err := s.codec.toStorage(ctx, s.codec.transformer(key), key, benchValue)
				if err != nil {
					b.Fatal(err)
				}
				kvs[i] = &mvccpb.KeyValue{Key: []byte(key), Value: stored, ModRevision: int64(i + 1)}
			}
			items := make([]storage.KeyValue, 0, len(kvs))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				items = items[:0]
				t := s.codec.transformer("secrets/default/")
				var dc *keyContext
				for _, kv := range kvs {
					var item storage.KeyValue
					if needsDecode(t, kv.Value) {
						if dc == nil {
							dc = &keyContext{prefix: s.prefix}
						}
						var err error
						if item, err = s.codec.decodeListItem(ctx, t, kv, dc); err != nil {
							b.Fatal(err)
						}
					} else {
						item = keyValue(kv)
					}
					items = append(items, item)
				}
			}
		})
	}
}
