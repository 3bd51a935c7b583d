package podtemplate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func secretEnv(name, secret string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: "k"}}}
}

func secretEnvFrom(secret string) corev1.EnvFromSource {
	return corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: secret}}}
}

func vol(name string, src corev1.VolumeSource) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: src}
}

func TestProtectedSecretRefs(t *testing.T) {
	const (
		pgCreds = "i-metadata-postgres-creds"
		admin   = "admin-password"
	)
	protected := Protected(pgCreds, admin, "")
	lref := func(n string) *corev1.LocalObjectReference { return &corev1.LocalObjectReference{Name: n} }
	forbidden := func(path, secret string) string {
		return path + `: Forbidden: Secret "` + secret + `" is operator-protected and may not be referenced`
	}

	cases := map[string]struct {
		tpl       *corev1.PodTemplateSpec
		protected func(string) bool
		want      []string
	}{
		"NilTemplate": {protected: protected},
		"NilPredicate": {
			tpl: pod(corev1.PodSpec{Volumes: []corev1.Volume{vol("v", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: pgCreds}})}}),
		},
		"UnprotectedReferencesPass": {
			tpl: pod(corev1.PodSpec{
				Volumes: []corev1.Volume{
					vol("s", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "my-secret"}}),
					vol("cm", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: *lref(pgCreds)}}),
				},
				Containers: []corev1.Container{{
					Name:    "app",
					Env:     []corev1.EnvVar{secretEnv("TOKEN", "my-secret"), {Name: "PLAIN", Value: pgCreds}},
					EnvFrom: []corev1.EnvFromSource{secretEnvFrom("my-secret"), {ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: *lref(admin)}}},
				}},
			}),
			protected: protected,
		},
		"EnvReferences": {
			tpl: pod(corev1.PodSpec{
				Containers: []corev1.Container{
					{Name: EngineContainer, Env: []corev1.EnvVar{secretEnv("ADMIN", admin)}},
					{Name: "app", Env: []corev1.EnvVar{secretEnv("OK", "mine"), secretEnv("PG", pgCreds)},
						EnvFrom: []corev1.EnvFromSource{secretEnvFrom("mine"), secretEnvFrom("e-g3-engine-tls")}},
				},
				InitContainers: []corev1.Container{{Name: "init", Env: []corev1.EnvVar{secretEnv("", "i-auth-signing")}}},
			}),
			protected: protected,
			want: []string{
				forbidden("spec.template.spec.containers[engine].env[ADMIN].valueFrom.secretKeyRef.name", admin),
				forbidden("spec.template.spec.containers[app].env[PG].valueFrom.secretKeyRef.name", pgCreds),
				forbidden("spec.template.spec.containers[app].envFrom[1].secretRef.name", "e-g3-engine-tls"),
				forbidden("spec.template.spec.initContainers[init].env[0].valueFrom.secretKeyRef.name", "i-auth-signing"),
			},
		},
		"VolumeSources": {
			tpl: pod(corev1.PodSpec{Volumes: []corev1.Volume{
				vol("secret", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: pgCreds}}),
				vol("projected", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{Secret: &corev1.SecretProjection{LocalObjectReference: *lref("fine")}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: *lref(admin)}},
					{Secret: &corev1.SecretProjection{LocalObjectReference: *lref("i-auth-signing-signing-2")}},
				}}}),
				vol("csi", corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d", NodePublishSecretRef: lref(admin)}}),
				vol("azure", corev1.VolumeSource{AzureFile: &corev1.AzureFileVolumeSource{SecretName: admin}}),
				vol("ceph", corev1.VolumeSource{CephFS: &corev1.CephFSVolumeSource{SecretRef: lref(admin)}}),
				vol("cinder", corev1.VolumeSource{Cinder: &corev1.CinderVolumeSource{SecretRef: lref(admin)}}),
				vol("flex", corev1.VolumeSource{FlexVolume: &corev1.FlexVolumeSource{SecretRef: lref(admin)}}),
				vol("iscsi", corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{SecretRef: lref(admin)}}),
				vol("rbd", corev1.VolumeSource{RBD: &corev1.RBDVolumeSource{SecretRef: lref(admin)}}),
				vol("scaleio", corev1.VolumeSource{ScaleIO: &corev1.ScaleIOVolumeSource{SecretRef: lref(admin)}}),
				vol("storageos", corev1.VolumeSource{StorageOS: &corev1.StorageOSVolumeSource{SecretRef: lref(admin)}}),
				vol("", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "e-g0-engine-tls"}}),
				vol("ok", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "i-engine-tls-mine"}}),
			}}),
			protected: protected,
			want: []string{
				forbidden("spec.template.spec.volumes[secret].secret.secretName", pgCreds),
				forbidden("spec.template.spec.volumes[projected].projected.sources[2].secret.name", "i-auth-signing-signing-2"),
				forbidden("spec.template.spec.volumes[csi].csi.nodePublishSecretRef.name", admin),
				forbidden("spec.template.spec.volumes[azure].azureFile.secretName", admin),
				forbidden("spec.template.spec.volumes[ceph].cephfs.secretRef.name", admin),
				forbidden("spec.template.spec.volumes[cinder].cinder.secretRef.name", admin),
				forbidden("spec.template.spec.volumes[flex].flexVolume.secretRef.name", admin),
				forbidden("spec.template.spec.volumes[iscsi].iscsi.secretRef.name", admin),
				forbidden("spec.template.spec.volumes[rbd].rbd.secretRef.name", admin),
				forbidden("spec.template.spec.volumes[scaleio].scaleIO.secretRef.name", admin),
				forbidden("spec.template.spec.volumes[storageos].storageos.secretRef.name", admin),
				forbidden("spec.template.spec.volumes[11].secret.secretName", "e-g0-engine-tls"),
			},
		},
		"StorageDriverRefsWithoutSecret": {
			tpl: pod(corev1.PodSpec{Volumes: []corev1.Volume{
				vol("csi", corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d"}}),
				vol("ceph", corev1.VolumeSource{CephFS: &corev1.CephFSVolumeSource{}}),
				vol("rbd", corev1.VolumeSource{RBD: &corev1.RBDVolumeSource{}}),
				vol("storageos", corev1.VolumeSource{StorageOS: &corev1.StorageOSVolumeSource{}}),
			}}),
			protected: func(string) bool { return true },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := messages(ProtectedSecretRefs(tc.tpl, tc.protected, tplPath()))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ProtectedSecretRefs(...): -want, +got:\n%s", diff)
			}
		})
	}
}

func TestProtected(t *testing.T) {
	p := Protected("i-metadata-postgres-creds", "", "admin")
	cases := map[string]bool{
		"":                          false,
		"i-metadata-postgres-creds": true,
		"admin":                     true,
		"admin2":                    false,
		"i-auth-signing":            true,
		"e-g4-engine-tls":           true,
		"i-engine-tls":              false,
		"my-secret":                 false,
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			if got := p(name); got != want {
				t.Errorf("Protected(...)(%q): want %t, got %t", name, want, got)
			}
		})
	}
}

func TestIsSigningKeySecretName(t *testing.T) {
	cases := map[string]bool{
		"i-auth-signing":               true,
		"i-auth-signing-signing-2":     true,
		"my-inst-auth-signing-x":       true,
		"i-auth-signing-":              true,
		"a-auth-signingx-auth-signing": true,
		"-auth-signing":                false,
		"auth-signing":                 false,
		"app-auth-signingkey":          false,
		"i-auth-sign":                  false,
		"":                             false,
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			if got := IsSigningKeySecretName(name); got != want {
				t.Errorf("IsSigningKeySecretName(%q): want %t, got %t", name, want, got)
			}
		})
	}
}

func TestIsEngineTLSSecretName(t *testing.T) {
	cases := map[string]bool{
		"e-g2-engine-tls":          true,
		"my-engine-g10-engine-tls": true,
		"a-g-b-g0-engine-tls":      true,
		"i-engine-tls":             false,
		"e-g-engine-tls":           false,
		"-g2-engine-tls":           false,
		"g2-engine-tls":            false,
		"e-gx2-engine-tls":         false,
		"e-2-engine-tls":           false,
		"e-g2-engine-tls-x":        false,
		"e-g2-engine-tl":           false,
		"":                         false,
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			if got := IsEngineTLSSecretName(name); got != want {
				t.Errorf("IsEngineTLSSecretName(%q): want %t, got %t", name, want, got)
			}
		})
	}
}
