package engine

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/firebolt-db/firebolt-crossplane/apis/input/v1beta1"
	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
	"github.com/firebolt-db/firebolt-crossplane/fn/podtemplate"
)

// rejection is a validation failure the schema cannot express: the
// condition reason and the field errors, one message.
type rejection struct {
	Reason  string
	Message string
}

// validate checks the limits, then the templates; nil when all pass.
func validate(in Inputs) *rejection {
	if r := validateLimits(in); r != nil {
		return r
	}
	return validateTemplates(in)
}

// maxReplicas is v1alpha1.MaxEngineReplicas; a variable only so that the
// size benchmark can render past it to find where rendering breaks.
var maxReplicas int32 = v1alpha1.MaxEngineReplicas

// validateLimits refuses what the schema refuses on the claim, for a
// composite that came another way: an engine name some composed name could
// not carry, and a replica count outside what can be rendered. It runs
// before anything is rendered, because rendering allocates per replica.
func validateLimits(in Inputs) *rejection {
	var errs field.ErrorList
	name := field.NewPath("metadata", "name")
	if l := v1alpha1.ClaimNameLimits[v1alpha1.XFireboltEngineKind]; len(in.Engine) > l.MaxLength {
		errs = append(errs, field.Invalid(name, in.Engine, l.Message()))
	}
	for _, msg := range validation.IsDNS1035Label(in.Engine) {
		errs = append(errs, field.Invalid(name, in.Engine, msg))
	}
	replicas := field.NewPath("spec", "replicas")
	switch r := in.Spec.Replicas; {
	case r < 0:
		errs = append(errs, field.Invalid(replicas, r, "must be greater than or equal to 0"))
	case r > maxReplicas:
		errs = append(errs, field.Invalid(replicas, r, fmt.Sprintf("must be less than or equal to %d: every node is listed in the engine's ConfigMap", maxReplicas)))
	}
	if len(errs) == 0 {
		return nil
	}
	return &rejection{Reason: ReasonLimitExceeded, Message: errs.ToAggregate().Error()}
}

// validateTemplates checks what the original's webhook and controller
// fallback checked (§7.2, §7.4): operator-owned template paths and reserved
// names on the engine's and the class's templates, names the engine reuses
// from the class, references to protected Secrets, and the function input's
// resource bounds on the effective engine container; and the function
// input's pod-security allow-list on both templates and on the effective
// storage. Nil when all pass.
func validateTemplates(in Inputs) *rejection {
	class := in.classSpec()
	engine := in.Spec.Template
	var classTpl *corev1.PodTemplateSpec
	if class != nil {
		classTpl = &class.Template
	}

	protected := podtemplate.Protected(protectedSecrets(in)...)
	tplPath := field.NewPath("spec", "template")

	ps := in.Config.PodSecurity
	errs := podtemplate.Validate(engine, podtemplate.EngineRules, tplPath)
	errs = append(errs, podtemplate.ValidateLayers(classTpl, engine, podtemplate.EngineRules, tplPath)...)
	errs = append(errs, podtemplate.ProtectedSecretRefs(engine, protected, tplPath)...)
	errs = append(errs, podtemplate.CheckPodSecurity(engine, ps, tplPath)...)
	classErrs := podtemplate.Validate(classTpl, podtemplate.EngineRules, tplPath)
	classErrs = append(classErrs, podtemplate.ProtectedSecretRefs(classTpl, protected, tplPath)...)
	classErrs = append(classErrs, podtemplate.CheckPodSecurity(classTpl, ps, tplPath)...)
	engineOwn, classOwn := podSecurityOfPod(in.Spec, class, ps)
	errs = append(errs, engineOwn...)
	classErrs = append(classErrs, classOwn...)
	if len(errs)+len(classErrs) > 0 {
		msg := ""
		if len(errs) > 0 {
			msg = errs.ToAggregate().Error()
		}
		if len(classErrs) > 0 {
			if msg != "" {
				msg += "; "
			}
			msg += fmt.Sprintf("FireboltEngineClass %s: %s", in.Class.Name, classErrs.ToAggregate().Error())
		}
		return &rejection{Reason: ReasonTemplateRejected, Message: msg}
	}

	if len(in.Config.EngineResourceBounds) == 0 {
		return nil
	}
	effective, from := corev1.ResourceRequirements{}, ""
	if c := podtemplate.PrimaryContainer(engine, podtemplate.EngineContainer); c != nil && podtemplate.HasResources(c.Resources) {
		effective = c.Resources
	} else if c := podtemplate.PrimaryContainer(classTpl, podtemplate.EngineContainer); c != nil && podtemplate.HasResources(c.Resources) {
		effective, from = c.Resources, in.Class.Name
	}
	path := tplPath.Child("spec", "containers").Key(podtemplate.EngineContainer).Child("resources")
	if errs := podtemplate.ResourceBounds(effective, in.Config.EngineResourceBounds, path); len(errs) > 0 {
		msg := errs.ToAggregate().Error()
		if from != "" {
			msg += fmt.Sprintf(" (inherited from FireboltEngineClass %s)", from)
		}
		return &rejection{Reason: ReasonResourceBoundsExceeded, Message: msg}
	}
	return nil
}

// protectedSecrets are the Secrets of the engine's instance that no
// template may reach: the generated PostgreSQL credentials, with an
// external PostgreSQL its credentials, and with auth the admin password
// (the signing keys' Secrets are protected by their shape).
func protectedSecrets(in Inputs) []string {
	names := []string{contract.PostgresCredentials(in.Spec.InstanceRef)}
	if in.Instance.Found {
		if pg := in.Instance.Spec.Metadata.Postgres; pg != nil {
			names = append(names, pg.CredentialsSecretRef.Name)
		}
	}
	if pw, ok := adminPassword(in.Instance); ok {
		names = append(names, pw.Name)
	}
	return names
}

// podSecurityOfPod checks what the pod gets from both layers together
// against the allow-list: the effective spec.storage.hostPath, and the
// ServiceAccount token the pod mounts when a template asks for one
// (automountServiceAccountToken: true) without naming a ServiceAccount,
// which mounts the namespace's "default" one. Errors are split by the
// layer that set the value.
func podSecurityOfPod(spec v1alpha1.FireboltEngineSpec, class *v1alpha1.FireboltEngineClassSpec, ps v1beta1.PodSecurity) (engine, classErrs field.ErrorList) {
	storagePath := field.NewPath("spec", "storage", "hostPath", "path")
	switch {
	case hasBackend(spec.Storage):
		if h := spec.Storage.HostPath; h != nil {
			if err := podtemplate.CheckHostPath(h.Path, ps, storagePath); err != nil {
				engine = append(engine, err)
			}
		}
	case class != nil && class.Storage.HostPath != nil:
		if err := podtemplate.CheckHostPath(class.Storage.HostPath.Path, ps, storagePath); err != nil {
			classErrs = append(classErrs, err)
		}
	}

	var classTpl *corev1.PodTemplateSpec
	if class != nil {
		classTpl = &class.Template
	}
	automount, fromClass := false, false
	serviceAccount := ""
	for _, l := range []struct {
		tpl   *corev1.PodTemplateSpec
		class bool
	}{{classTpl, true}, {spec.Template, false}} {
		if l.tpl == nil {
			continue
		}
		if a := l.tpl.Spec.AutomountServiceAccountToken; a != nil {
			automount, fromClass = *a, l.class
		}
		if n := l.tpl.Spec.ServiceAccountName; n != "" {
			serviceAccount = n
		}
	}
	if !automount || serviceAccount != "" {
		// A named ServiceAccount is checked where it is named.
		return engine, classErrs
	}
	errs := podtemplate.CheckServiceAccount(defaultServiceAccount, ps, field.NewPath("spec", "template", "spec", "automountServiceAccountToken"))
	if fromClass {
		return engine, append(classErrs, errs...)
	}
	return append(engine, errs...), classErrs
}

// defaultServiceAccount is the ServiceAccount of a pod that names none.
const defaultServiceAccount = "default"
