package crschema

import (
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

// embeddedNode is the part of a schema that leads to embedded resources (x-kubernetes-embedded-resource),
// computed once per schema so that the walks that coerce and validate embedded resources visit only
// those branches of an object, not all of it. A nil node has no embedded resource below it.
type embeddedNode struct {
	resource   bool // the value here is an embedded resource
	properties map[string]*embeddedNode
	// additional applies to the fields of an object without properties: structural schemas do not
	// have both.
	additional *embeddedNode
	items      *embeddedNode
}

// embeddedTree returns the embedded-resource branches of s, nil if s has none.
func embeddedTree(s *structuralschema.Structural) *embeddedNode {
	if s == nil {
		return nil
	}
	n := &embeddedNode{resource: s.XEmbeddedResource, items: embeddedTree(s.Items)}
	if s.AdditionalProperties != nil {
		n.additional = embeddedTree(s.AdditionalProperties.Structural)
	}
	for k, p := range s.Properties {
		if sub := embeddedTree(&p); sub != nil {
			if n.properties == nil {
				n.properties = map[string]*embeddedNode{}
			}
			n.properties[k] = sub
		}
	}
	if !n.resource && n.items == nil && n.additional == nil && n.properties == nil {
		return nil
	}
	return n
}

// child is the node of field k of an object at n.
func (n *embeddedNode) child(k string) *embeddedNode {
	if sub, ok := n.properties[k]; ok {
		return sub
	}
	return n.additional
}
