package certs

import (
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// refreshKubeconfigs rewrites the kubeconfigs of the cert dir that embed a renewed certificate (and
// its key) or a renewed CA, keeping everything else in them. It returns notes on files it could not
// read, which it leaves alone.
func (r *run) refreshKubeconfigs(done []*renewed) []string {
	_, configFiles, err := scanDir(r.dir)
	if err != nil {
		return []string{fmt.Sprintf("kubeconfigs in %s were not updated: %v", r.dir, err)}
	}
	var notes []string
	for _, path := range configFiles {
		data, err := os.ReadFile(path)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s was left alone: %v", path, unwrapPath(err)))
			continue
		}
		cfg, err := clientcmd.Load(data)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s was left alone: it is not a kubeconfig: %v", path, err))
			continue
		}
		var why []string
		for _, rn := range done {
			if rn.isCA {
				for _, cluster := range cfg.Clusters {
					if bundle, ok := replaceInBundle(cluster.CertificateAuthorityData, rn.old, rn.kp.Cert); ok {
						cluster.CertificateAuthorityData = bundle
						why = appendReason(why, "embeds the renewed CA "+rn.name)
					}
				}
				continue
			}
			for _, auth := range cfg.AuthInfos {
				if certs, err := parseCertsPEM(auth.ClientCertificateData); err != nil || !certs[0].Equal(rn.old) {
					continue
				}
				auth.ClientCertificateData = rn.kp.CertPEM()
				if rn.newKey {
					keyPEM, err := rn.kp.KeyPEM()
					if err != nil {
						return append(notes, fmt.Sprintf("%s was left alone: %v", path, err))
					}
					auth.ClientKeyData = keyPEM
				}
				why = appendReason(why, "embeds the renewed "+rn.name+" certificate")
				rn.kubeconfigs = append(rn.kubeconfigs, path)
			}
		}
		if len(why) == 0 {
			continue
		}
		out, err := clientcmd.Write(*cfg)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s was left alone: %v", path, err))
			continue
		}
		r.files.add(path, out, modeKubeconfig)
		r.record(filepath.Base(path), path, KindKubeconfig, ActionUpdated, strings.Join(why, "; "), clientNotAfter(cfg))
	}
	return notes
}

// clientNotAfter is when the client certificate of a kubeconfig's current context expires, or nil.
func clientNotAfter(cfg *clientcmdapi.Config) *time.Time {
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		return nil
	}
	auth, ok := cfg.AuthInfos[ctx.AuthInfo]
	if !ok {
		return nil
	}
	certs, err := parseCertsPEM(auth.ClientCertificateData)
	if err != nil {
		return nil
	}
	return &certs[0].NotAfter
}

func appendReason(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// replaceInBundle swaps old for renewed in a PEM bundle of CA certificates.
func replaceInBundle(bundle []byte, old, renewed *x509.Certificate) ([]byte, bool) {
	certs, err := parseCertsPEM(bundle)
	if err != nil {
		return nil, false
	}
	var out []byte
	found := false
	for _, c := range certs {
		if c.Equal(old) {
			c, found = renewed, true
		}
		out = append(out, encodeCert(c)...)
	}
	return out, found
}
