package encryption

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	apiserverv1 "k8s.io/apiserver/pkg/apis/apiserver/v1"
	"k8s.io/apiserver/pkg/storage/value"
	aestransformer "k8s.io/apiserver/pkg/storage/value/encrypt/aes"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"
	"k8s.io/apiserver/pkg/storage/value/encrypt/secretbox"
)

// The prefixes of kube's on-disk format: k8s:enc:<provider>:v1:<key name>:<data>.
const (
	aesCBCPrefixV1    = "k8s:enc:aescbc:v1:"
	aesGCMPrefixV1    = "k8s:enc:aesgcm:v1:"
	secretboxPrefixV1 = "k8s:enc:secretbox:v1:"
)

// build makes one transformer per resource named in the file, as kube's loader does: a resource's
// providers, in order, become prefix transformers, so the first writes and each reads what it wrote.
// A resource named after a wildcard of an earlier list that covers it is an error (it would be
// masked).
func build(cfg *apiserverv1.EncryptionConfiguration) (map[schema.GroupResource]value.Transformer, error) {
	lists := map[schema.GroupResource][]value.PrefixTransformer{}
	for _, rc := range cfg.Resources {
		transformers, err := prefixTransformers(rc.Providers)
		if err != nil {
			return nil, err
		}
		for _, res := range rc.Resources {
			gr := schema.ParseGroupResource(res)
			anyInGroup := schema.GroupResource{Group: gr.Group, Resource: "*"}
			if _, masked := lists[anyInGroup]; masked {
				return nil, fmt.Errorf("resource %q is masked by earlier rule %q", grYAMLString(gr), grYAMLString(anyInGroup))
			}
			if _, masked := lists[anyGroupAnyResource]; masked {
				return nil, fmt.Errorf("resource %q is masked by earlier rule %q", grYAMLString(gr), grYAMLString(anyGroupAnyResource))
			}
			lists[gr] = append(lists[gr], transformers...)
		}
	}
	out := make(map[schema.GroupResource]value.Transformer, len(lists))
	for gr, list := range lists {
		out[gr] = value.NewPrefixTransformers(errors.New("no matching prefix found"), list...)
	}
	return out, nil
}

// prefixTransformers builds one list's providers.
func prefixTransformers(providers []apiserverv1.ProviderConfiguration) ([]value.PrefixTransformer, error) {
	out := make([]value.PrefixTransformer, 0, len(providers))
	for _, p := range providers {
		var t value.PrefixTransformer
		var err error
		switch {
		case p.AESGCM != nil:
			t, err = aesPrefixTransformer(p.AESGCM, aestransformer.NewGCMTransformer, aesGCMPrefixV1)
		case p.AESCBC != nil:
			t, err = aesPrefixTransformer(p.AESCBC, func(block cipher.Block) (value.Transformer, error) {
				return aestransformer.NewCBCTransformer(block), nil
			}, aesCBCPrefixV1)
		case p.Secretbox != nil:
			t, err = secretboxPrefixTransformer(p.Secretbox)
		case p.Identity != nil:
			// An empty prefix matches everything, but kube's encrypt check still refuses encrypted
			// data, so a later provider gets its chance.
			t = value.PrefixTransformer{Transformer: identity.NewEncryptCheckTransformer(), Prefix: []byte{}}
		case p.KMS != nil:
			err = errors.New(kmsUnsupportedErr)
		default:
			err = errors.New(noProviderErr)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// aesPrefixTransformer is one aescbc or aesgcm provider: a transformer per key, chosen on read by the
// "<key name>:" after the provider's prefix; the first key writes.
func aesPrefixTransformer(cfg *apiserverv1.AESConfiguration, newTransformer func(cipher.Block) (value.Transformer, error), prefix string) (value.PrefixTransformer, error) {
	if err := checkKeys(cfg.Keys, "aes"); err != nil {
		return value.PrefixTransformer{}, err
	}
	keys := make([]value.PrefixTransformer, 0, len(cfg.Keys))
	for _, k := range cfg.Keys {
		secret, err := base64.StdEncoding.DecodeString(k.Secret)
		if err != nil {
			return value.PrefixTransformer{}, fmt.Errorf("could not obtain secret for named key %s: %w", k.Name, err)
		}
		block, err := aes.NewCipher(secret)
		if err != nil {
			return value.PrefixTransformer{}, fmt.Errorf("error while creating cipher for named key %s: %w", k.Name, err)
		}
		t, err := newTransformer(block)
		if err != nil {
			return value.PrefixTransformer{}, fmt.Errorf("error while creating transformer for named key %s: %w", k.Name, err)
		}
		keys = append(keys, value.PrefixTransformer{Transformer: t, Prefix: []byte(k.Name + ":")})
	}
	return value.PrefixTransformer{
		Transformer: value.NewPrefixTransformers(errors.New("no matching key was found for the provided AES transformer"), keys...),
		Prefix:      []byte(prefix),
	}, nil
}

// secretboxPrefixTransformer is one secretbox provider (XSalsa20 and Poly1305, 32-byte keys).
func secretboxPrefixTransformer(cfg *apiserverv1.SecretboxConfiguration) (value.PrefixTransformer, error) {
	if err := checkKeys(cfg.Keys, "secretbox"); err != nil {
		return value.PrefixTransformer{}, err
	}
	keys := make([]value.PrefixTransformer, 0, len(cfg.Keys))
	for _, k := range cfg.Keys {
		secret, err := base64.StdEncoding.DecodeString(k.Secret)
		if err != nil {
			return value.PrefixTransformer{}, fmt.Errorf("could not obtain secret for named key %s: %w", k.Name, err)
		}
		if len(secret) != 32 {
			return value.PrefixTransformer{}, fmt.Errorf("expected key size 32 for secretbox provider, got %v", len(secret))
		}
		var key [32]byte
		copy(key[:], secret)
		keys = append(keys, value.PrefixTransformer{Transformer: secretbox.NewSecretboxTransformer(key), Prefix: []byte(k.Name + ":")})
	}
	return value.PrefixTransformer{
		Transformer: value.NewPrefixTransformers(errors.New("no matching key was found for the provided Secretbox transformer"), keys...),
		Prefix:      []byte(secretboxPrefixV1),
	}, nil
}

// checkKeys repeats the checks kube's builder makes even after validation.
func checkKeys(keys []apiserverv1.Key, provider string) error {
	if len(keys) == 0 {
		return fmt.Errorf("%s provider has no valid keys", provider)
	}
	for _, k := range keys {
		if k.Name == "" {
			return errors.New("key with invalid name provided")
		}
		if k.Secret == "" {
			return fmt.Errorf("key %v has no provided secret", k.Name)
		}
	}
	return nil
}

// grYAMLString spells a group resource as the file does ("*." for every core resource).
func grYAMLString(gr schema.GroupResource) string {
	if gr.Group == "" && gr.Resource == "*" {
		return "*."
	}
	return gr.String()
}
