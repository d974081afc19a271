package encryption

import (
	"crypto/sha256"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	apiserverv1 "k8s.io/apiserver/pkg/apis/apiserver/v1"
	"k8s.io/apiserver/pkg/storage/value"
)

// Config is a loaded and checked EncryptionConfiguration: the transformer of each resource the file
// names, wildcards included.
type Config struct {
	// overrides maps what the file names ({"", "secrets"}, {"apps", "*"}, {"*", "*"}) to the
	// transformer of its list: the first provider writes, all read.
	overrides map[schema.GroupResource]value.Transformer
	// hash identifies the file's content, so that a reload skips an unchanged file.
	hash string
}

// Load reads, decodes, validates and builds the configuration in path, failing with kube's messages
// (`error while parsing file: resources[0].providers[0].aescbc.keys[0].secret: Invalid value: ...`).
// It is what `serve` and `apictl flags validate` both run.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("error while parsing file: error while loading file: error reading encryption provider configuration file %q: %w", path, err)
	}
	return Parse(path, data)
}

// Parse is Load for content already read; path names the file in messages.
func Parse(path string, data []byte) (*Config, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("error while parsing file: error while loading file: encryption provider configuration file %q is empty", path)
	}
	cfg, err := decode(path, data)
	if err != nil {
		return nil, fmt.Errorf("error while parsing file: %w", err)
	}
	if err := Validate(cfg).ToAggregate(); err != nil {
		return nil, fmt.Errorf("error while parsing file: %w", err)
	}
	overrides, err := build(cfg)
	if err != nil {
		return nil, fmt.Errorf("error while building transformers: %w", err)
	}
	return &Config{overrides: overrides, hash: contentHash(data)}, nil
}

// decode reads the file strictly (unknown and duplicate fields are errors) as kube does. It accepts
// apiserver.config.k8s.io/v1 EncryptionConfiguration and, like kube, the v1 EncryptionConfig of an
// old documentation bug.
func decode(path string, data []byte) (*apiserverv1.EncryptionConfiguration, error) {
	scheme := runtime.NewScheme()
	if err := apiserverv1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("registering the configuration types: %w", err)
	}
	obj, gvk, err := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer().Decode(data, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("error decoding encryption provider configuration file %q: %w", path, err)
	}
	cfg, ok := obj.(*apiserverv1.EncryptionConfiguration)
	if !ok {
		return nil, fmt.Errorf("got unexpected config type: %v", gvk)
	}
	return cfg, nil
}

// contentHash is kube's EncryptionFileContentHash.
func contentHash(data []byte) string {
	return fmt.Sprintf("sha256:%x", sha256.Sum256(data))
}
