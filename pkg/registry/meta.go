package registry

import (
	"crypto/rand"
	"fmt"
	"math/big"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
)

// The server owns these metadata fields: on create it sets them, on update it keeps the stored values
// whatever the client sent (apart from resourceVersion, which the handlers compare, and uid, which
// must match if given).

// prepareMetaForCreate fills in the fields a create sets: uid, creation time, and clears what clients
// cannot set. Name generation happens in the handlers, which retry on collisions.
func prepareMetaForCreate(m metav1.Object, now time.Time) {
	m.SetUID(uuid.NewUUID())
	m.SetCreationTimestamp(metav1.NewTime(now.UTC().Truncate(time.Second)))
	m.SetResourceVersion("")
	m.SetDeletionTimestamp(nil)
	m.SetDeletionGracePeriodSeconds(nil)
	m.SetSelfLink("")
	m.SetGeneration(0)
}

// prepareMetaForUpdate keeps the fields only the server changes. An update that names no
// resourceVersion (an unconditional one, where the kind allows it) takes the stored one, as kube's
// store does before validating.
func prepareMetaForUpdate(m, old metav1.Object) {
	if m.GetResourceVersion() == "" {
		m.SetResourceVersion(old.GetResourceVersion())
	}
	m.SetUID(old.GetUID())
	m.SetCreationTimestamp(old.GetCreationTimestamp())
	m.SetDeletionTimestamp(old.GetDeletionTimestamp())
	m.SetDeletionGracePeriodSeconds(old.GetDeletionGracePeriodSeconds())
	m.SetGeneration(old.GetGeneration())
	m.SetSelfLink("")
}

// generateNameChars are the characters kube appends to a generateName prefix: no vowels (no words)
// and no confusable digits.
const generateNameChars = "bcdfghjklmnpqrstvwxz2456789"

// maxGeneratedPrefix keeps a generated name within 63 characters: prefix + 5 random characters.
const maxGeneratedPrefix = 58

// GenerateName returns prefix, truncated to 58 characters, followed by 5 random characters, as kube's
// SimpleNameGenerator does.
func GenerateName(prefix string) string {
	if len(prefix) > maxGeneratedPrefix {
		prefix = prefix[:maxGeneratedPrefix]
	}
	b := make([]byte, 5)
	n := big.NewInt(int64(len(generateNameChars)))
	for i := range b {
		v, err := rand.Int(rand.Reader, n)
		if err != nil {
			// crypto/rand does not fail on supported platforms; fall back to the clock rather than panic.
			v = big.NewInt(time.Now().UnixNano() % int64(len(generateNameChars)))
		}
		b[i] = generateNameChars[v.Int64()]
	}
	return prefix + string(b)
}

// uidPrecondition reports a mismatch between the uid a client sent and the stored one, with kube's
// message.
func uidPrecondition(sent, stored types.UID) error {
	if sent == "" || sent == stored {
		return nil
	}
	//lint:ignore ST1005 kube's message, which clients match
	return fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", sent, stored)
}
