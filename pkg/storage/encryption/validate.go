package encryption

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/apis/apiserver"
	apiserverv1 "k8s.io/apiserver/pkg/apis/apiserver/v1"
)

// kube's messages (k8s.io/apiserver/pkg/apis/apiserver/validation/validation_encryption.go), which
// users search for. That package is not imported: it also validates authentication configuration and
// brings in CEL.
const (
	moreThanOneElementErr    = "more than one provider specified in a single element, should split into different list elements"
	noProviderErr            = "provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity"
	keyLenErrFmt             = "secret is not of the expected length, got %d, expected one of %v"
	atLeastOneRequiredErrFmt = "at least one %s is required"
	mandatoryFieldErrFmt     = "%s is a mandatory field for a %s"
	base64EncodingErr        = "secrets must be base64 encoded"
	eventsGroupErr           = "'*.events.k8s.io' objects are stored using the 'events' API group in etcd. Use 'events' instead in the config file"
	extensionsGroupErr       = "'extensions' group has been removed and cannot be used for encryption"
	starResourceErr          = "use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources"
	overlapErr               = "using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked"
	nonRESTAPIResourceErr    = "resources which do not have REST API/s cannot be encrypted"
	resourceNameErr          = "resource name should not contain capital letters"
	resourceAcrossGroupErr   = "encrypting the same resource across groups is not supported"
	duplicateResourceErr     = "the same resource cannot be specified multiple times"
	// kmsUnsupportedErr is apictl's own: it runs no KMS plugin client.
	kmsUnsupportedErr = "KMS providers are not supported by apictl: use aescbc, aesgcm or secretbox"
)

var (
	// aesKeySizes are AES-128, AES-192 and AES-256; secretbox takes 32-byte keys only.
	aesKeySizes         = []int{16, 24, 32}
	secretboxKeySizes   = []int{32}
	anyGroupAnyResource = schema.GroupResource{Group: "*", Resource: "*"}
)

// Validate checks a configuration as kube does, with kube's field paths and messages, and refuses
// KMS providers.
func Validate(c *apiserverv1.EncryptionConfiguration) field.ErrorList {
	root := field.NewPath("resources")
	var errs field.ErrorList
	if c == nil {
		return append(errs, field.Required(root, "EncryptionConfiguration can't be nil"))
	}
	if len(c.Resources) == 0 {
		return append(errs, field.Required(root, fmt.Sprintf(atLeastOneRequiredErrFmt, root)))
	}
	for i, conf := range c.Resources {
		r := root.Index(i).Child("resources")
		p := root.Index(i).Child("providers")
		if len(conf.Resources) == 0 {
			errs = append(errs, field.Required(r, fmt.Sprintf(atLeastOneRequiredErrFmt, r)))
		}
		errs = append(errs, validateResourceOverlap(conf.Resources, r)...)
		errs = append(errs, validateResourceNames(conf.Resources, r)...)
		if len(conf.Providers) == 0 {
			errs = append(errs, field.Required(p, fmt.Sprintf(atLeastOneRequiredErrFmt, p)))
		}
		for j, provider := range conf.Providers {
			path := p.Index(j)
			errs = append(errs, validateSingleProvider(provider, path)...)
			switch {
			case provider.KMS != nil:
				errs = append(errs, field.Forbidden(path.Child("kms"), kmsUnsupportedErr))
			case provider.AESGCM != nil:
				errs = append(errs, validateKeys(provider.AESGCM.Keys, path.Child("aesgcm").Child("keys"), aesKeySizes)...)
			case provider.AESCBC != nil:
				errs = append(errs, validateKeys(provider.AESCBC.Keys, path.Child("aescbc").Child("keys"), aesKeySizes)...)
			case provider.Secretbox != nil:
				errs = append(errs, validateKeys(provider.Secretbox.Keys, path.Child("secretbox").Child("keys"), secretboxKeySizes)...)
			}
		}
	}
	return errs
}

// validateResourceOverlap refuses a list that names a resource twice, or names one that a wildcard
// of the same list already covers.
func validateResourceOverlap(resources []string, path *field.Path) field.ErrorList {
	if len(resources) < 2 {
		return nil
	}
	grs := make([]schema.GroupResource, 0, len(resources))
	for _, res := range resources {
		grs = append(grs, schema.ParseGroupResource(res))
	}
	var hasOverlap, hasDuplicate bool
	for i, r1 := range grs {
		for j, r2 := range grs {
			switch {
			case i == j:
			case r1 == r2 && !hasDuplicate:
				hasDuplicate = true
			case hasOverlap:
			case r1 == anyGroupAnyResource:
				hasOverlap = true
			case r1.Group != r2.Group:
			case r1.Resource == "*" || r2.Resource == "*":
				hasOverlap = true
			}
		}
	}
	var errs field.ErrorList
	if hasDuplicate {
		errs = append(errs, field.Invalid(path, resources, duplicateResourceErr))
	}
	if hasOverlap {
		errs = append(errs, field.Invalid(path, resources, overlapErr))
	}
	return errs
}

// validateResourceNames refuses names kube cannot (or no longer does) encrypt.
func validateResourceNames(resources []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for j, res := range resources {
		jj := path.Index(j)
		gr := schema.ParseGroupResource(res)
		switch {
		case strings.ToLower(res) != res:
			errs = append(errs, field.Invalid(jj, res, resourceNameErr))
		case res == "*":
			errs = append(errs, field.Invalid(jj, res, starResourceErr))
		case res == "apiserveripinfo" || res == "serviceipallocations" || res == "servicenodeportallocations":
			errs = append(errs, field.Invalid(jj, res, nonRESTAPIResourceErr))
		case gr.Group == "events.k8s.io":
			errs = append(errs, field.Invalid(jj, res, eventsGroupErr))
		case gr.Group == "extensions":
			errs = append(errs, field.Invalid(jj, res, extensionsGroupErr))
		case gr.Group == "*" && gr.Resource != "*":
			errs = append(errs, field.Invalid(jj, res, resourceAcrossGroupErr))
		}
	}
	return errs
}

// validateSingleProvider requires exactly one provider per list element.
func validateSingleProvider(provider apiserverv1.ProviderConfiguration, path *field.Path) field.ErrorList {
	found := 0
	for _, set := range []bool{provider.KMS != nil, provider.AESGCM != nil, provider.AESCBC != nil,
		provider.Secretbox != nil, provider.Identity != nil} {
		if set {
			found++
		}
	}
	switch {
	case found == 0:
		return field.ErrorList{field.Invalid(path, redacted(provider), noProviderErr)}
	case found > 1:
		return field.ErrorList{field.Invalid(path, redacted(provider), moreThanOneElementErr)}
	}
	return nil
}

// redacted is the provider as kube prints it in a message (its internal type), except that kube also
// prints the keys' secrets, and this prints "REDACTED" for them: a message ends up in logs.
func redacted(p apiserverv1.ProviderConfiguration) *apiserver.ProviderConfiguration {
	var out apiserver.ProviderConfiguration
	// The conversion shares the keys' memory: convert a copy.
	if err := apiserverv1.Convert_v1_ProviderConfiguration_To_apiserver_ProviderConfiguration(p.DeepCopy(), &out, nil); err != nil {
		return &apiserver.ProviderConfiguration{}
	}
	for _, keys := range [][]apiserver.Key{keysOf(out.AESGCM), keysOf(out.AESCBC), secretboxKeys(out.Secretbox)} {
		for i := range keys {
			keys[i].Secret = "REDACTED"
		}
	}
	return &out
}

func keysOf(c *apiserver.AESConfiguration) []apiserver.Key {
	if c == nil {
		return nil
	}
	return c.Keys
}

func secretboxKeys(c *apiserver.SecretboxConfiguration) []apiserver.Key {
	if c == nil {
		return nil
	}
	return c.Keys
}

func validateKeys(keys []apiserverv1.Key, path *field.Path, sizes []int) field.ErrorList {
	if len(keys) == 0 {
		return field.ErrorList{field.Required(path, fmt.Sprintf(atLeastOneRequiredErrFmt, "keys"))}
	}
	var errs field.ErrorList
	for i, key := range keys {
		errs = append(errs, validateKey(key, path.Index(i), sizes)...)
	}
	return errs
}

// validateKey checks a key's name and secret; the secret never appears in a message.
func validateKey(key apiserverv1.Key, path *field.Path, sizes []int) field.ErrorList {
	var errs field.ErrorList
	if key.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), fmt.Sprintf(mandatoryFieldErrFmt, "name", "key")))
	}
	if key.Secret == "" {
		return append(errs, field.Required(path.Child("secret"), fmt.Sprintf(mandatoryFieldErrFmt, "secret", "key")))
	}
	secret, err := base64.StdEncoding.DecodeString(key.Secret)
	if err != nil {
		return append(errs, field.Invalid(path.Child("secret"), "REDACTED", base64EncodingErr))
	}
	if !slices.Contains(sizes, len(secret)) {
		errs = append(errs, field.Invalid(path.Child("secret"), "REDACTED", fmt.Sprintf(keyLenErrFmt, len(secret), sizes)))
	}
	return errs
}
