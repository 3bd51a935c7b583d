package main

import (
	"sort"
	"strings"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// PatchTemplates fixes every embedded pod template in root, as the original
// operator's post-controller-gen scripts do, and adds the operator-owned
// path rules of each site:
//
//   - template.metadata keeps unknown fields, or structural pruning would
//     drop labels and annotations; the ObjectMeta fields a template may not
//     set are declared so that CEL can see them.
//   - template.spec does not require containers: templates are fragments
//     merged over the rendered pod. Containers and init containers are
//     capped at v1alpha1.MaxTemplateContainers, their ports at
//     MaxTemplateContainerPorts and pod sysctls at MaxTemplateSysctls (names
//     at MaxSysctlNameLength), to bound CEL costs.
//   - upstream descriptions below the template are dropped; they are most
//     of the schema's size and say nothing about this API.
//
// Every pod template in root must be listed in sites, so that a new template
// field cannot escape the rules.
func PatchTemplates(root *extv1.JSONSchemaProps, sites []v1alpha1.TemplateSite) error {
	if err := checkSites(root, sites); err != nil {
		return err
	}
	for _, s := range sites {
		path := strings.Split(s.Path, ".")
		if s.Whole && len(path) > 1 {
			// The workload around a whole template is the user's too: its
			// upstream descriptions are dropped for size, and the metadata
			// of its volume claim templates must survive pruning.
			if err := update(root, path[:len(path)-1], func(w *extv1.JSONSchemaProps) error {
				stripDescriptions(w)
				preserveEmbeddedMetadata(w)
				return nil
			}); err != nil {
				return errors.Wrapf(err, "cannot patch the workload around %s", s.Path)
			}
		}
		if err := update(root, path, func(t *extv1.JSONSchemaProps) error { return patchTemplate(t, s) }); err != nil {
			return errors.Wrapf(err, "cannot patch %s", s.Path)
		}
	}
	return nil
}

// checkSites returns an error unless sites lists exactly the pod templates in
// root.
func checkSites(root *extv1.JSONSchemaProps, sites []v1alpha1.TemplateSite) error {
	found := map[string]bool{}
	findTemplates(root, "", found)
	for _, s := range sites {
		if !found[s.Path] {
			return errors.Errorf("no pod template at %s", s.Path)
		}
		delete(found, s.Path)
	}
	if len(found) > 0 {
		paths := make([]string, 0, len(found))
		for p := range found {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		return errors.Errorf("pod templates without operator-owned path rules in v1alpha1.TemplateSites: %s", strings.Join(paths, ", "))
	}
	return nil
}

// patchTemplate applies every change PatchTemplates lists to the pod
// template t found at site s.
func patchTemplate(t *extv1.JSONSchemaProps, s v1alpha1.TemplateSite) error {
	for name, p := range t.Properties {
		stripDescriptions(&p)
		t.Properties[name] = p
	}
	spec := t.Properties["spec"]
	if s.Whole {
		t.Properties["metadata"] = wholeTemplateMetadata()
	} else {
		t.Properties["metadata"] = templateMetadata()
		spec.Required = without(spec.Required, "containers")
	}
	boundSpec(&spec)
	t.Properties["spec"] = spec
	preserveEmbeddedMetadata(t)

	for _, r := range s.Rules() {
		err := update(t, strings.Split(r.At, "."), func(n *extv1.JSONSchemaProps) error {
			n.XValidations = append(n.XValidations, extv1.ValidationRule{Rule: r.Rule, Message: r.Message})
			return nil
		})
		if err != nil {
			return errors.Wrapf(err, "cannot add rule %q", r.Rule)
		}
	}
	return nil
}

// boundSpec caps the pod spec's container, port and sysctl lists and sysctl
// names, to bound CEL costs.
func boundSpec(spec *extv1.JSONSchemaProps) {
	for _, l := range []string{"containers", "initContainers"} {
		p := spec.Properties[l]
		p.MaxItems = ptr.To(int64(v1alpha1.MaxTemplateContainers))
		if p.Items != nil && p.Items.Schema != nil {
			capList(p.Items.Schema, "ports", v1alpha1.MaxTemplateContainerPorts)
		}
		spec.Properties[l] = p
	}
	sc, ok := spec.Properties["securityContext"]
	if !ok {
		return
	}
	if capList(&sc, "sysctls", v1alpha1.MaxTemplateSysctls) {
		sysctls := sc.Properties["sysctls"]
		if sysctls.Items != nil && sysctls.Items.Schema != nil {
			if name, ok := sysctls.Items.Schema.Properties["name"]; ok {
				name.MaxLength = ptr.To(int64(v1alpha1.MaxSysctlNameLength))
				sysctls.Items.Schema.Properties["name"] = name
			}
		}
	}
	spec.Properties["securityContext"] = sc
}

// capList sets maxItems on the list property name of s, when s has one.
func capList(s *extv1.JSONSchemaProps, name string, n int) bool {
	p, ok := s.Properties[name]
	if !ok {
		return false
	}
	p.MaxItems = ptr.To(int64(n))
	s.Properties[name] = p
	return true
}

// isPodTemplate recognises a corev1.PodTemplateSpec by its shape.
func isPodTemplate(s *extv1.JSONSchemaProps) bool {
	spec, ok := s.Properties["spec"]
	if !ok {
		return false
	}
	_, meta := s.Properties["metadata"]
	_, containers := spec.Properties["containers"]
	return meta && containers
}

func findTemplates(s *extv1.JSONSchemaProps, path string, found map[string]bool) {
	if isPodTemplate(s) {
		found[path] = true
		return
	}
	for name, p := range s.Properties {
		sub := name
		if path != "" {
			sub = path + "." + name
		}
		findTemplates(&p, sub, found)
	}
	if s.Items != nil && s.Items.Schema != nil {
		findTemplates(s.Items.Schema, path+"[]", found)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		findTemplates(s.AdditionalProperties.Schema, path+"{}", found)
	}
}

// update applies fn to the node at path, following object properties.
// Properties holds values, not pointers, so each level is copied, changed
// and stored back.
func update(s *extv1.JSONSchemaProps, path []string, fn func(*extv1.JSONSchemaProps) error) error {
	if len(path) == 0 {
		return fn(s)
	}
	p, ok := s.Properties[path[0]]
	if !ok {
		return errors.Errorf("no property %s", path[0])
	}
	if err := update(&p, path[1:], fn); err != nil {
		return err
	}
	s.Properties[path[0]] = p
	return nil
}

// stripDescriptions drops every description in s's subtree.
func stripDescriptions(s *extv1.JSONSchemaProps) {
	s.Description = ""
	for name, p := range s.Properties {
		stripDescriptions(&p)
		s.Properties[name] = p
	}
	if s.Items != nil && s.Items.Schema != nil {
		stripDescriptions(s.Items.Schema)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		stripDescriptions(s.AdditionalProperties.Schema)
	}
}

// preserveEmbeddedMetadata keeps unknown fields in every embedded
// ObjectMeta below s (e.g. an ephemeral volume's volumeClaimTemplate), which
// controller-gen renders as a bare object that pruning would empty.
func preserveEmbeddedMetadata(s *extv1.JSONSchemaProps) {
	for name, p := range s.Properties {
		if name == "metadata" && p.Type == "object" && len(p.Properties) == 0 && p.AdditionalProperties == nil {
			p.XPreserveUnknownFields = ptr.To(true)
		}
		preserveEmbeddedMetadata(&p)
		s.Properties[name] = p
	}
	if s.Items != nil && s.Items.Schema != nil {
		preserveEmbeddedMetadata(s.Items.Schema)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		preserveEmbeddedMetadata(s.AdditionalProperties.Schema)
	}
}

// wholeTemplateMetadata is the schema of a whole pod template's metadata:
// labels and annotations, unknown fields kept as the StatefulSet's own
// schema does.
func wholeTemplateMetadata() extv1.JSONSchemaProps {
	str := extv1.JSONSchemaProps{Type: "string"}
	strMap := extv1.JSONSchemaProps{Type: "object", AdditionalProperties: &extv1.JSONSchemaPropsOrBool{Allows: true, Schema: &str}}
	return extv1.JSONSchemaProps{
		Type:                   "object",
		Description:            "Labels and annotations for the pods.",
		XPreserveUnknownFields: ptr.To(true),
		Properties:             map[string]extv1.JSONSchemaProps{"labels": strMap, "annotations": strMap},
	}
}

// templateMetadata is the schema of a template's metadata: unknown fields
// are kept, labels and annotations are string maps, and the ObjectMeta
// fields the operator owns are declared so that CEL rules can reject them.
func templateMetadata() extv1.JSONSchemaProps {
	str := extv1.JSONSchemaProps{Type: "string"}
	strMap := extv1.JSONSchemaProps{Type: "object", AdditionalProperties: &extv1.JSONSchemaPropsOrBool{Allows: true, Schema: &str}}
	anyObj := extv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}
	types := map[string]extv1.JSONSchemaProps{
		"labels":                     strMap,
		"annotations":                strMap,
		"generation":                 {Type: "integer", Format: "int64"},
		"deletionGracePeriodSeconds": {Type: "integer", Format: "int64"},
		"ownerReferences":            {Type: "array", Items: &extv1.JSONSchemaPropsOrArray{Schema: &anyObj}},
		"managedFields":              {Type: "array", Items: &extv1.JSONSchemaPropsOrArray{Schema: &anyObj}},
		"finalizers":                 {Type: "array", Items: &extv1.JSONSchemaPropsOrArray{Schema: &str}},
	}
	m := extv1.JSONSchemaProps{
		Type:                   "object",
		Description:            "Labels and annotations for the pods; the other ObjectMeta fields are operator-owned.",
		XPreserveUnknownFields: ptr.To(true),
		Properties:             map[string]extv1.JSONSchemaProps{"labels": strMap, "annotations": strMap},
	}
	for _, f := range v1alpha1.ForbiddenTemplateMetadataFields {
		t, ok := types[f]
		if !ok {
			t = str
		}
		m.Properties[f] = t
	}
	return m
}
