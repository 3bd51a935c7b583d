package v1alpha1

import "fmt"

// The operator owns parts of every embedded pod template (the original's
// operatorauthority.go). The same rules apply at four places with different
// paths and primary containers, and they sit inside corev1 types that carry
// no markers, so they live here as data: hack/xrdgen compiles them into CEL
// x-kubernetes-validations on each template, and the function can check the
// same lists when it merges templates.

// TemplateSite is an embedded pod template whose operator-owned paths are
// rejected.
// +kubebuilder:object:generate=false
type TemplateSite struct {
	// Path of the template from the object root, dot-separated, e.g.
	// "spec.gateway.template".
	Path string

	// Primary is the name of the container the operator renders.
	Primary string

	// Restricted primaries allow only the fields in
	// RestrictedPrimaryContainerFields; the others allow everything but
	// ForbiddenPrimaryContainerFields.
	Restricted bool

	// ReservedContainers are names the operator uses for its own
	// containers; no container or init container may take them.
	ReservedContainers []string

	// Whole templates are the user's entire pod template (a
	// PhasedStatefulSet's StatefulSet), not a fragment merged over a
	// rendered pod: nothing in them is operator-owned and containers stay
	// required, but the pod still runs with the function's authority, so
	// the host-sharing and privilege rules apply as everywhere.
	Whole bool
}

// TemplateSites lists the embedded pod templates of each composite kind.
var TemplateSites = map[string][]TemplateSite{
	XFireboltEngineKind: {
		{Path: "spec.template", Primary: "engine", ReservedContainers: []string{"engine-web"}},
	},
	XFireboltEngineClassKind: {
		{Path: "spec.template", Primary: "engine", ReservedContainers: []string{"engine-web"}},
	},
	XFireboltInstanceKind: {
		{Path: "spec.metadata.template", Primary: "metadata", Restricted: true},
		{Path: "spec.gateway.template", Primary: "envoy", Restricted: true, ReservedContainers: []string{"wake-agent"}},
	},
	XPhasedStatefulSetKind: {
		{Path: "spec.statefulSet.spec.template", Whole: true},
	},
}

// ForbiddenTemplateMetadataFields are the ObjectMeta fields a template may
// not set: only labels and annotations are the user's.
var ForbiddenTemplateMetadataFields = []string{
	"name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
	"creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
	"ownerReferences", "finalizers", "managedFields",
}

// MaxTemplateContainers caps containers and initContainers in a template.
// Kubernetes sets no cap, but CEL costs are estimated from a list's maximum
// size, and without one the container rules of two templates exceed the API
// server's budget for a CRD. Templates are merged with the operator's own
// containers, so the cap is generous.
const MaxTemplateContainers = 64

// MaxTemplateContainerPorts, MaxTemplateSysctls and MaxSysctlNameLength cap
// the lists the privilege rules walk (hostPorts, sysctls), for the same
// reason: Kubernetes sets no cap, and CEL estimates cost from one.
const (
	MaxTemplateContainerPorts = 64
	MaxTemplateSysctls        = 64
	MaxSysctlNameLength       = 253
)

// OperatorLabelPrefix is the label and annotation key prefix the operator
// reserves on templates.
const OperatorLabelPrefix = "firebolt.io/"

// Kinds of field, which decide what counts as "set": the original checks
// Go values, where a zero string, false or an empty list is unset.
type fieldKind int

const (
	fieldPointer fieldKind = iota // set when present
	fieldString                   // set when non-empty
	fieldBool                     // set when true
	fieldList                     // set when non-empty
)

// ForbiddenPodSpecFields are the pod-level fields the operator owns.
var ForbiddenPodSpecFields = []string{
	"terminationGracePeriodSeconds", "subdomain", "hostname", "restartPolicy",
	"activeDeadlineSeconds", "hostNetwork", "hostPID", "hostIPC",
	"shareProcessNamespace", "hostUsers",
}

// ForbiddenPrimaryContainerFields are the primary container's fields the
// operator always owns.
var ForbiddenPrimaryContainerFields = []string{
	"command", "args", "ports", "readinessProbe", "livenessProbe", "startupProbe",
	"restartPolicy", "stdin", "stdinOnce", "tty",
}

// RestrictedPrimaryContainerFields are the only fields a restricted primary
// container (metadata, envoy) may set.
var RestrictedPrimaryContainerFields = []string{"name", "image", "imagePullPolicy", "resources"}

// containerFields are corev1.Container's JSON fields in declaration order
// (so that generated rules are stable), with how a set value is recognised.
// A test keeps the list in step with k8s.io/api.
var containerFields = []struct {
	name string
	kind fieldKind
}{
	{"name", fieldString}, {"image", fieldString}, {"command", fieldList}, {"args", fieldList},
	{"workingDir", fieldString}, {"ports", fieldList}, {"envFrom", fieldList}, {"env", fieldList},
	{"resources", fieldPointer}, {"resizePolicy", fieldList}, {"restartPolicy", fieldPointer},
	{"restartPolicyRules", fieldList}, {"volumeMounts", fieldList}, {"volumeDevices", fieldList},
	{"livenessProbe", fieldPointer}, {"readinessProbe", fieldPointer}, {"startupProbe", fieldPointer},
	{"lifecycle", fieldPointer}, {"terminationMessagePath", fieldString},
	{"terminationMessagePolicy", fieldString}, {"imagePullPolicy", fieldString},
	{"securityContext", fieldPointer}, {"stdin", fieldBool}, {"stdinOnce", fieldBool}, {"tty", fieldBool},
}

func containerFieldKind(f string) fieldKind {
	for _, c := range containerFields {
		if c.name == f {
			return c.kind
		}
	}
	return fieldPointer
}

var podSpecFieldKinds = map[string]fieldKind{
	"terminationGracePeriodSeconds": fieldPointer, "subdomain": fieldString, "hostname": fieldString,
	"restartPolicy": fieldString, "activeDeadlineSeconds": fieldPointer, "hostNetwork": fieldBool,
	"hostPID": fieldBool, "hostIPC": fieldBool, "shareProcessNamespace": fieldPointer,
	"hostUsers": fieldPointer,
}

// TemplateRule is one CEL rule on a node of an embedded pod template.
// +kubebuilder:object:generate=false
type TemplateRule struct {
	// At is the node the rule sits on, dot-separated, relative to the
	// template: "metadata", "spec", "spec.containers" or
	// "spec.initContainers".
	At string

	// Rule is the CEL expression; self is the node.
	Rule string

	// Message names the offending field from the object root.
	Message string
}

// Rules returns every CEL rule of the template at s: the operator-owned
// paths and the privileges no function input may allow.
func (s TemplateSite) Rules() []TemplateRule {
	if s.Whole {
		return append(s.HostSharingRules(), s.PrivilegeRules()...)
	}
	return append(s.OwnedRules(), s.PrivilegeRules()...)
}

// HostSharingPodSpecFields share a node's namespaces with the pod: no
// template a claim writes may set them (for other templates they are among
// ForbiddenPodSpecFields).
var HostSharingPodSpecFields = []string{"hostNetwork", "hostPID", "hostIPC", "shareProcessNamespace", "hostUsers"}

// HostSharingRules returns the CEL rules that refuse HostSharingPodSpecFields
// in a whole template.
func (s TemplateSite) HostSharingRules() []TemplateRule {
	rs := make([]TemplateRule, 0, len(HostSharingPodSpecFields))
	for _, f := range HostSharingPodSpecFields {
		rs = append(rs, TemplateRule{
			At:      "spec",
			Rule:    "!(" + isSet("self", f, podSpecFieldKinds[f]) + ")",
			Message: fmt.Sprintf("%s.spec.%s must not be set: it shares the node's namespaces with the pod; %s", s.Path, f, DetailPSSBaseline),
		})
	}
	return rs
}

// OwnedRules returns the CEL rules that reject the operator-owned paths of
// the template at s. Rules that would iterate a list inside a list (env
// names, volume mounts of the primary) are left to the function: their
// estimated CEL cost exceeds the API server's budget.
func (s TemplateSite) OwnedRules() []TemplateRule {
	var rs []TemplateRule
	owned := func(at, field, rule string) {
		rs = append(rs, TemplateRule{At: at, Rule: rule, Message: fmt.Sprintf("%s.%s is operator-owned and must not be set", s.Path, field)})
	}

	for _, f := range ForbiddenTemplateMetadataFields {
		owned("metadata", "metadata."+f, "!has(self."+f+")")
	}
	for _, m := range []string{"labels", "annotations"} {
		rs = append(rs, TemplateRule{
			At:      "metadata",
			Rule:    fmt.Sprintf("!has(self.%s) || self.%s.all(k, !k.startsWith('%s'))", m, m, OperatorLabelPrefix),
			Message: fmt.Sprintf("%s.metadata.%s: keys with prefix %s are operator-owned and must not be set", s.Path, m, OperatorLabelPrefix),
		})
	}

	for _, f := range ForbiddenPodSpecFields {
		owned("spec", "spec."+f, "!("+isSet("self", f, podSpecFieldKinds[f])+")")
	}

	primary := fmt.Sprintf("spec.containers[%s]", s.Primary)
	forbidden := ForbiddenPrimaryContainerFields
	if s.Restricted {
		forbidden = restrictedForbidden()
	}
	for _, f := range forbidden {
		owned("spec.containers", primary+"."+f,
			fmt.Sprintf("self.all(c, c.name != '%s' || !(%s))", s.Primary, isSet("c", f, containerFieldKind(f))))
	}
	rs = append(rs, TemplateRule{
		At:      "spec.containers",
		Rule:    fmt.Sprintf("self.filter(c, c.name == '%s').size() <= 1", s.Primary),
		Message: fmt.Sprintf("%s.spec.containers: container %s may appear only once", s.Path, s.Primary),
	}, TemplateRule{
		At:      "spec.initContainers",
		Rule:    fmt.Sprintf("self.all(c, c.name != '%s')", s.Primary),
		Message: fmt.Sprintf("%s.spec.initContainers: name %s is the primary container's and must not be used", s.Path, s.Primary),
	})
	for _, n := range s.ReservedContainers {
		for _, list := range []string{"containers", "initContainers"} {
			rs = append(rs, TemplateRule{
				At:      "spec." + list,
				Rule:    fmt.Sprintf("self.all(c, c.name != '%s')", n),
				Message: fmt.Sprintf("%s.spec.%s: name %s is reserved for the operator's container", s.Path, list, n),
			})
		}
	}
	return rs
}

// restrictedForbidden is every container field a restricted primary may not
// set.
func restrictedForbidden() []string {
	allowed := map[string]bool{}
	for _, f := range RestrictedPrimaryContainerFields {
		allowed[f] = true
	}
	var out []string
	for _, c := range containerFields {
		if !allowed[c.name] {
			out = append(out, c.name)
		}
	}
	return out
}

// isSet is a CEL expression that is true when field f of v holds a value
// the original would see as set.
func isSet(v, f string, kind fieldKind) string {
	x := v + "." + f
	switch kind {
	case fieldString:
		return fmt.Sprintf("has(%s) && %s != ''", x, x)
	case fieldBool:
		return fmt.Sprintf("has(%s) && %s", x, x)
	case fieldList:
		return fmt.Sprintf("has(%s) && size(%s) > 0", x, x)
	default:
		return "has(" + x + ")"
	}
}
