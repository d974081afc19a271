package extensionauth

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"slices"
	"time"

	"k8s.io/client-go/util/cert"
)

// The ConfigMap's keys, as kube names them.
const (
	KeyClientCA                 = "client-ca-file"
	KeyRequestHeaderClientCA    = "requestheader-client-ca-file"
	KeyRequestHeaderAllowed     = "requestheader-allowed-names"
	KeyRequestHeaderUsername    = "requestheader-username-headers"
	KeyRequestHeaderUID         = "requestheader-uid-headers"
	KeyRequestHeaderGroup       = "requestheader-group-headers"
	KeyRequestHeaderExtraPrefix = "requestheader-extra-headers-prefix"
)

// Info is what the server trusts: the client CA bundle (PEM), the request-header CA bundle (PEM)
// and the request-header settings. Empty bundles publish nothing.
type Info struct {
	ClientCA            []byte
	RequestHeaderCA     []byte
	UsernameHeaders     []string
	UIDHeaders          []string
	GroupHeaders        []string
	ExtraHeaderPrefixes []string
	AllowedNames        []string
}

// Data is the ConfigMap's data for info, as kube's cluster-authentication-trust controller writes
// it: client-ca-file when there is a client CA; the requestheader keys (lists as JSON arrays) only
// when there is a request-header CA; requestheader-uid-headers only when there are UID headers and
// withUID (the RemoteRequestHeaderUID feature) is on.
func Data(info Info, withUID bool) (map[string]string, error) {
	data := map[string]string{}
	if len(info.ClientCA) > 0 {
		data[KeyClientCA] = string(info.ClientCA)
	}
	if len(info.RequestHeaderCA) == 0 {
		return data, nil
	}
	lists := []struct {
		key    string
		values []string
	}{
		{KeyRequestHeaderUsername, info.UsernameHeaders},
		{KeyRequestHeaderGroup, info.GroupHeaders},
		{KeyRequestHeaderExtraPrefix, info.ExtraHeaderPrefixes},
		{KeyRequestHeaderAllowed, info.AllowedNames},
	}
	if withUID && len(info.UIDHeaders) > 0 {
		lists = append(lists, struct {
			key    string
			values []string
		}{KeyRequestHeaderUID, info.UIDHeaders})
	}
	for _, l := range lists {
		out, err := json.Marshal(l.values)
		if err != nil {
			return nil, fmt.Errorf("encoding %s: %w", l.key, err)
		}
		data[l.key] = string(out)
	}
	data[KeyRequestHeaderClientCA] = string(info.RequestHeaderCA)
	return data, nil
}

// Parse reads what a ConfigMap's data says, as kube does before merging: lists from JSON arrays,
// bundles as they are. UID headers are read only when withUID is on.
func Parse(data map[string]string, withUID bool) (Info, error) {
	var info Info
	lists := []struct {
		key string
		to  *[]string
	}{
		{KeyRequestHeaderGroup, &info.GroupHeaders},
		{KeyRequestHeaderExtraPrefix, &info.ExtraHeaderPrefixes},
		{KeyRequestHeaderAllowed, &info.AllowedNames},
		{KeyRequestHeaderUsername, &info.UsernameHeaders},
	}
	if withUID {
		lists = append(lists, struct {
			key string
			to  *[]string
		}{KeyRequestHeaderUID, &info.UIDHeaders})
	}
	for _, l := range lists {
		v := data[l.key]
		if v == "" {
			continue
		}
		out := []string{}
		if err := json.Unmarshal([]byte(v), &out); err != nil {
			return Info{}, fmt.Errorf("decoding %s: %w", l.key, err)
		}
		*l.to = out
	}
	info.RequestHeaderCA = []byte(data[KeyRequestHeaderClientCA])
	info.ClientCA = []byte(data[KeyClientCA])
	return info, nil
}

// Merge combines what is published (existing) with what this server trusts (required), as kube
// does so that servers of one cluster with different trust all stay trusted: every list keeps
// existing's entries first and adds required's new ones; each bundle is the certificates of both,
// once each, without those expired more than five minutes ago.
func Merge(existing, required Info, now time.Time) (Info, error) {
	out := Info{
		UsernameHeaders:     union(existing.UsernameHeaders, required.UsernameHeaders),
		UIDHeaders:          union(existing.UIDHeaders, required.UIDHeaders),
		GroupHeaders:        union(existing.GroupHeaders, required.GroupHeaders),
		ExtraHeaderPrefixes: union(existing.ExtraHeaderPrefixes, required.ExtraHeaderPrefixes),
		AllowedNames:        union(existing.AllowedNames, required.AllowedNames),
	}
	var err error
	if out.ClientCA, err = mergeBundles(existing.ClientCA, required.ClientCA, now); err != nil {
		return Info{}, fmt.Errorf("merging %s: %w", KeyClientCA, err)
	}
	if out.RequestHeaderCA, err = mergeBundles(existing.RequestHeaderCA, required.RequestHeaderCA, now); err != nil {
		return Info{}, fmt.Errorf("merging %s: %w", KeyRequestHeaderClientCA, err)
	}
	return out, nil
}

// union is a then the entries of b not in a; never nil, so that it encodes as [].
func union(a, b []string) []string {
	out := []string{}
	for _, v := range slices.Concat(a, b) {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

func mergeBundles(a, b []byte, now time.Time) ([]byte, error) {
	var all []*x509.Certificate
	for _, bundle := range [][]byte{a, b} {
		if len(bundle) == 0 {
			continue
		}
		certs, err := cert.ParseCertsPEM(bundle)
		if err != nil {
			return nil, err
		}
		all = append(all, certs...)
	}
	var buf bytes.Buffer
	var kept []*x509.Certificate
	for _, c := range all {
		if !c.NotAfter.After(now.Add(-5*time.Minute)) || slices.ContainsFunc(kept, c.Equal) {
			continue
		}
		kept = append(kept, c)
		if err := pem.Encode(&buf, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw}); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}
