package garbagecollector

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/apictl/apictl/pkg/jsonscan"
)

// The finalizers of the two propagation policies that wait for the collector.
const (
	finalizerOrphanDependents = metav1.FinalizerOrphanDependents
	finalizerDeleteDependents = metav1.FinalizerDeleteDependents
)

// objectMeta is the part of a stored object the graph needs. Stored objects are JSON; everything
// outside these fields is skipped by the decoder and never held.
type objectMeta struct {
	UID               types.UID               `json:"uid"`
	Name              string                  `json:"name"`
	Namespace         string                  `json:"namespace"`
	OwnerReferences   []metav1.OwnerReference `json:"ownerReferences"`
	Finalizers        []string                `json:"finalizers"`
	DeletionTimestamp json.RawMessage         `json:"deletionTimestamp"`
}

func (m *objectMeta) beingDeleted() bool {
	return len(m.DeletionTimestamp) > 0 && string(m.DeletionTimestamp) != "null"
}

func (m *objectMeta) hasFinalizer(f string) bool { return slices.Contains(m.Finalizers, f) }

// decodeMeta reads an object's metadata from its stored JSON. Only the members the graph needs are
// decoded: the scan stops at the end of metadata, which comes early in what the server stores, so
// what follows it (data, spec, status: most of an object) is not even read, and managedFields
// inside it are skipped unparsed. Input the quick scan does not understand is decoded whole.
func decodeMeta(value []byte) (*objectMeta, error) {
	m, err := quickMeta(value)
	if err != nil {
		var obj struct {
			Metadata objectMeta `json:"metadata"`
		}
		if err := json.Unmarshal(value, &obj); err != nil {
			return nil, fmt.Errorf("decoding the metadata of a stored object: %w", err)
		}
		m = &obj.Metadata
	}
	if m.UID == "" {
		return nil, fmt.Errorf("stored object %s/%s has no uid", m.Namespace, m.Name)
	}
	return m, nil
}

var errQuickScan = errors.New("not understood by the quick scan")

func quickMeta(value []byte) (*objectMeta, error) {
	var raw []byte
	jsonscan.WalkObject(value, func(key, val []byte) bool {
		if string(key) == "metadata" {
			raw = val
			return false // what follows is not read
		}
		return true
	})
	if raw == nil {
		return nil, errQuickScan
	}
	m := &objectMeta{}
	var err error
	ok := jsonscan.WalkObject(raw, func(key, val []byte) bool {
		switch string(key) {
		case "uid":
			var uid string
			uid, err = jsonString(val)
			m.UID = types.UID(uid)
		case "name":
			m.Name, err = jsonString(val)
		case "namespace":
			m.Namespace, err = jsonString(val)
		case "ownerReferences":
			err = json.Unmarshal(val, &m.OwnerReferences)
		case "finalizers":
			err = json.Unmarshal(val, &m.Finalizers)
		case "deletionTimestamp":
			m.DeletionTimestamp = val
		}
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errQuickScan
	}
	return m, nil
}

// jsonString decodes a JSON string, without the decoder when it has no escapes.
func jsonString(val []byte) (string, error) {
	if len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"' && !bytes.ContainsAny(val[1:len(val)-1], "\\\"") {
		return string(val[1 : len(val)-1]), nil
	}
	var s string
	err := json.Unmarshal(val, &s)
	return s, err
}
