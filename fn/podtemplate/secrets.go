package podtemplate

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const (
	suffixAuthSigning = "-auth-signing"
	suffixEngineTLS   = "-engine-tls"
)

// ProtectedSecretRefs reports every place tpl reaches a Secret for which
// protected returns true: env secretKeyRef and envFrom secretRef on every
// container and init container, and every volume source that names a Secret
// (secret, projected secret sources, and the storage-driver secret refs of
// csi, azureFile, cephfs, cinder, flexVolume, iscsi, rbd, scaleIO,
// storageos). A template author controls sidecar images and commands, so any
// such reference would expose credentials the operator mounts for itself.
// Every hit is an error: nothing is silently dropped. A nil template or nil
// predicate reports nothing.
func ProtectedSecretRefs(tpl *corev1.PodTemplateSpec, protected func(name string) bool, path *field.Path) field.ErrorList {
	if tpl == nil || protected == nil {
		return nil
	}
	var errs field.ErrorList
	check := func(p *field.Path, name string) {
		if name != "" && protected(name) {
			errs = append(errs, field.Forbidden(p, fmt.Sprintf("Secret %q is operator-protected and may not be referenced", name)))
		}
	}

	spec := path.Child("spec")
	vp := spec.Child("volumes")
	for i := range tpl.Spec.Volumes {
		v := &tpl.Spec.Volumes[i]
		volumeSecretRefs(v, entry(vp, v.Name, i), check)
	}
	for _, l := range []struct {
		name string
		list []corev1.Container
	}{{"containers", tpl.Spec.Containers}, {"initContainers", tpl.Spec.InitContainers}} {
		lp := spec.Child(l.name)
		for i := range l.list {
			containerSecretRefs(&l.list[i], entry(lp, l.list[i].Name, i), check)
		}
	}
	return errs
}

func containerSecretRefs(c *corev1.Container, p *field.Path, check func(*field.Path, string)) {
	for i := range c.Env {
		e := &c.Env[i]
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			check(entry(p.Child("env"), e.Name, i).Child("valueFrom", "secretKeyRef", "name"), e.ValueFrom.SecretKeyRef.Name)
		}
	}
	for i := range c.EnvFrom {
		if ref := c.EnvFrom[i].SecretRef; ref != nil {
			check(p.Child("envFrom").Index(i).Child("secretRef", "name"), ref.Name)
		}
	}
}

func volumeSecretRefs(v *corev1.Volume, p *field.Path, check func(*field.Path, string)) {
	if v.Secret != nil {
		check(p.Child("secret", "secretName"), v.Secret.SecretName)
	}
	if v.Projected != nil {
		for i := range v.Projected.Sources {
			if s := v.Projected.Sources[i].Secret; s != nil {
				check(p.Child("projected", "sources").Index(i).Child("secret", "name"), s.Name)
			}
		}
	}
	if v.CSI != nil && v.CSI.NodePublishSecretRef != nil {
		check(p.Child("csi", "nodePublishSecretRef", "name"), v.CSI.NodePublishSecretRef.Name)
	}
	if v.AzureFile != nil {
		check(p.Child("azureFile", "secretName"), v.AzureFile.SecretName)
	}
	if v.CephFS != nil && v.CephFS.SecretRef != nil {
		check(p.Child("cephfs", "secretRef", "name"), v.CephFS.SecretRef.Name)
	}
	if v.Cinder != nil && v.Cinder.SecretRef != nil {
		check(p.Child("cinder", "secretRef", "name"), v.Cinder.SecretRef.Name)
	}
	if v.FlexVolume != nil && v.FlexVolume.SecretRef != nil {
		check(p.Child("flexVolume", "secretRef", "name"), v.FlexVolume.SecretRef.Name)
	}
	if v.ISCSI != nil && v.ISCSI.SecretRef != nil {
		check(p.Child("iscsi", "secretRef", "name"), v.ISCSI.SecretRef.Name)
	}
	if v.RBD != nil && v.RBD.SecretRef != nil {
		check(p.Child("rbd", "secretRef", "name"), v.RBD.SecretRef.Name)
	}
	if v.ScaleIO != nil && v.ScaleIO.SecretRef != nil {
		check(p.Child("scaleIO", "secretRef", "name"), v.ScaleIO.SecretRef.Name)
	}
	if v.StorageOS != nil && v.StorageOS.SecretRef != nil {
		check(p.Child("storageos", "secretRef", "name"), v.StorageOS.SecretRef.Name)
	}
}

// Protected returns the predicate ProtectedSecretRefs needs: the given exact
// names (empty ones ignored; e.g. "<instance>-metadata-postgres-creds", the
// admin password Secret, external PostgreSQL credentials) plus every name
// shaped like a signing key or a per-generation engine TLS Secret. The shapes
// are matched for any instance or engine, because a sibling's key is worth as
// much as one's own and future names cannot be enumerated.
func Protected(exact ...string) func(name string) bool {
	set := make(map[string]bool, len(exact))
	for _, n := range exact {
		if n != "" {
			set[n] = true
		}
	}
	return func(name string) bool {
		if name == "" {
			return false
		}
		return set[name] || IsSigningKeySecretName(name) || IsEngineTLSSecretName(name)
	}
}

// IsSigningKeySecretName reports whether name has the shape of a JWT signing
// key Secret: "<x>-auth-signing" or "<x>-auth-signing-<kid>", x non-empty.
func IsSigningKeySecretName(name string) bool {
	for i := 1; i < len(name); i++ {
		if !strings.HasPrefix(name[i:], suffixAuthSigning) {
			continue
		}
		rest := name[i+len(suffixAuthSigning):]
		if rest == "" || strings.HasPrefix(rest, "-") {
			return true
		}
	}
	return false
}

// IsEngineTLSSecretName reports whether name has the shape of a
// per-generation engine serving-certificate Secret: "<x>-g<N>-engine-tls",
// x non-empty, N decimal digits. The instance-wide "<i>-engine-tls" anchor
// does not match; callers name it exactly.
func IsEngineTLSSecretName(name string) bool {
	base, ok := strings.CutSuffix(name, suffixEngineTLS)
	if !ok {
		return false
	}
	digits := len(base)
	for digits > 0 && base[digits-1] >= '0' && base[digits-1] <= '9' {
		digits--
	}
	if digits == len(base) {
		return false
	}
	base = base[:digits]
	x, ok := strings.CutSuffix(base, "-g")
	return ok && x != ""
}
