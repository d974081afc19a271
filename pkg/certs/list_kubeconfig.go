package certs

import (
	"crypto"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"k8s.io/client-go/tools/clientcmd"
)

// kubeconfigRows checks the client certificates a kubeconfig embeds or points at.
func kubeconfigRows(opts ListOptions, path string, cas map[string]*x509.Certificate) ([]CertStatus, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, unwrapPath(err)
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return nil, fmt.Errorf("is not a kubeconfig: %w", err)
	}
	users := make([]string, 0, len(cfg.AuthInfos))
	for user := range cfg.AuthInfos {
		users = append(users, user)
	}
	sort.Strings(users)
	var rows []CertStatus
	for _, user := range users {
		auth := cfg.AuthInfos[user]
		certPEM, err := kubeconfigBytes(path, auth.ClientCertificateData, auth.ClientCertificate)
		if err != nil {
			return nil, fmt.Errorf("user %q: %w", user, err)
		}
		if certPEM == nil {
			continue // token or exec credentials: nothing that expires here
		}
		parsed, err := parseCertsPEM(certPEM)
		if err != nil {
			return nil, fmt.Errorf("user %q: client certificate %w", user, err)
		}
		var key crypto.Signer
		keyProblem := ""
		if keyPEM, err := kubeconfigBytes(path, auth.ClientKeyData, auth.ClientKey); err != nil {
			keyProblem = err.Error()
		} else if keyPEM != nil {
			if key, err = parseKeyPEM(keyPEM); err != nil {
				keyProblem = "client key " + err.Error()
			}
		}
		name := filepath.Base(path)
		if len(users) > 1 {
			name += " (" + user + ")"
		}
		c := judge(name, path, parsed[0], cas, opts, key, keyProblem)
		if problem := usageProblem(parsed[0], usageClient); problem != "" {
			c.Problems = append(c.Problems, problem+", which a kubeconfig user needs")
			if c.Status == StatusOK || c.Status == StatusExpiring {
				c.Status = StatusWrongUsage
			}
		}
		c.row = rowConfig
		rows = append(rows, c)
	}
	return rows, nil
}

// kubeconfigBytes returns embedded data, or the file it names (relative to the kubeconfig), or nil.
func kubeconfigBytes(kubeconfig string, data []byte, file string) ([]byte, error) {
	if len(data) > 0 || file == "" {
		return data, nil
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(filepath.Dir(kubeconfig), file)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, unwrapPath(err))
	}
	return b, nil
}
