package certs

import (
	"fmt"
	"strings"
	"time"
)

// renewNotes says, for each renewed certificate, who else holds the old one and what they must do.
// An old certificate that had already expired at now holds nobody up any more: copies of it fail.
func renewNotes(dir string, done []*renewed, now time.Time) []string {
	var notes []string
	for _, rn := range done {
		until := FormatTime(rn.old.NotAfter)
		if !now.Before(rn.old.NotAfter) {
			note := fmt.Sprintf("the old %s certificate had already expired on %s: whatever still holds a copy of it fails until it gets the renewed %s.",
				rn.name, until, rn.path)
			if rn.name == NameEtcdCA {
				note += " etcd reads its trusted CA file only when it starts: restart each etcd member after replacing the file."
			}
			notes = append(notes, note)
			continue
		}
		switch {
		case rn.isCA:
			note := fmt.Sprintf("%s was renewed with its old key and subject, so every certificate it signed verifies against the old and the new copy alike. "+
				"Programs holding a copy of the old one (kubeconfigs made elsewhere, load balancers, etcd --trusted-ca-file) keep working until it expires on %s: replace those copies before then.",
				rn.path, until)
			if rn.name == NameEtcdCA {
				note += " etcd reads its trusted CA file only when it starts: restart each etcd member after replacing the file."
			}
			notes = append(notes, note)
		case rn.name == NameEtcdServer || rn.name == NameEtcdPeer:
			notes = append(notes, fmt.Sprintf("etcd reads its certificate and key files again for every new connection: a running member that uses %s "+
				"presents the renewed certificate from its next connection on, without a restart; open connections keep the old one, valid until %s.", rn.path, until))
		case rn.name == NameAPIServerEtcdClient:
			notes = append(notes, fmt.Sprintf("apictl serve presents %s when it connects to etcd; connections it already holds keep the old certificate, which stays valid until %s.",
				rn.path, until))
		case rn.name == NameFrontProxyClient:
			notes = append(notes, fmt.Sprintf("the front proxy presents %s to API servers that trust %s for request-header authentication; "+
				"copies of the old certificate elsewhere keep working until %s.", rn.path, CertPath(dir, NameFrontProxyCA), until))
		case len(rn.kubeconfigs) > 0:
			notes = append(notes, fmt.Sprintf("%s now embeds the renewed %s certificate; copies of it made before embed the old one, which stays valid until %s: replace them before then.",
				strings.Join(rn.kubeconfigs, ", "), rn.name, until))
		case rn.name != NameAPIServer:
			notes = append(notes, fmt.Sprintf("copies of the old %s certificate (in kubeconfigs written elsewhere, such as with --kubeconfig-out) keep working until %s: "+
				"write them again, for example with apictl certs client %s --kubeconfig-out FILE, before then.", rn.name, until, rn.name))
		}
	}
	return append(notes, fmt.Sprintf("A running apictl serve picks up the renewed files in %s without a restart.", dir))
}
