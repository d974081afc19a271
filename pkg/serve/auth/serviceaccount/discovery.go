package serviceaccount

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"

	jose "github.com/go-jose/go-jose/v4"
)

// The paths of kube's service-account issuer discovery.
const (
	OpenIDConfigPath = "/.well-known/openid-configuration"
	JWKSPath         = "/openid/v1/jwks"
	// DiscoveryMaxAge is the Cache-Control max-age of both documents, in seconds: kube's for static
	// keys.
	DiscoveryMaxAge = 3600
)

// Discovery holds the two OIDC documents, computed once: the keys do not change while the server
// runs.
type Discovery struct {
	ConfigJSON []byte
	KeysetJSON []byte
}

// openIDMetadata is kube's discovery document, in its field order.
type openIDMetadata struct {
	Issuer        string   `json:"issuer"`
	JWKSURI       string   `json:"jwks_uri"`
	ResponseTypes []string `json:"response_types_supported"`
	SubjectTypes  []string `json:"subject_types_supported"`
	SigningAlgs   []string `json:"id_token_signing_alg_values_supported"`
}

// NewDiscovery builds the documents for issuer, as kube does: jwksURI, or else
// https://<externalAddress>/openid/v1/jwks. The issuer must be an https URL without query or
// fragment; otherwise kube serves no discovery and neither does this (the error says why).
func NewDiscovery(issuer, jwksURI, externalAddress string, keys []PublicKey) (*Discovery, error) {
	iss, err := url.Parse(issuer)
	switch {
	case err != nil:
		return nil, err
	case iss.Scheme != "https":
		return nil, fmt.Errorf("issuer URL must use https scheme, got: %s", issuer)
	case iss.RawQuery != "":
		return nil, fmt.Errorf("issuer URL may not include a query, got: %s", issuer)
	case iss.Fragment != "":
		return nil, fmt.Errorf("issuer URL may not include a fragment, got: %s", issuer)
	}
	if jwksURI == "" {
		if externalAddress == "" {
			return nil, errors.New("either the JWKS URI or the default external address, or both, must be set")
		}
		jwksURI = (&url.URL{Scheme: "https", Host: externalAddress, Path: JWKSPath}).String()
	}
	if len(keys) == 0 {
		return nil, errors.New("no keys provided for validating keyset")
	}
	var set jose.JSONWebKeySet
	var algs []string
	for i, k := range keys {
		alg, err := Algorithm(k.Key)
		if err != nil {
			return nil, fmt.Errorf("error constructing JWK for key #%d: %w", i, err)
		}
		set.Keys = append(set.Keys, jose.JSONWebKey{Algorithm: string(alg), Key: k.Key, KeyID: k.KeyID, Use: "sig"})
		if !slices.Contains(algs, string(alg)) {
			algs = append(algs, string(alg))
		}
	}
	slices.Sort(algs)
	configJSON, err := json.Marshal(openIDMetadata{
		Issuer: issuer, JWKSURI: jwksURI,
		ResponseTypes: []string{"id_token"}, SubjectTypes: []string{"public"}, SigningAlgs: algs,
	})
	if err != nil {
		return nil, fmt.Errorf("could not marshal issuer discovery JSON, error: %w", err)
	}
	keysetJSON, err := json.Marshal(set)
	if err != nil {
		return nil, fmt.Errorf("could not marshal issuer keys JSON, error: %w", err)
	}
	return &Discovery{ConfigJSON: configJSON, KeysetJSON: keysetJSON}, nil
}
