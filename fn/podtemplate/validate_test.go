package podtemplate

import (
	"reflect"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	fbOwned    = `Forbidden: operator-owned`
	fbHost     = `Forbidden: not permitted on operator-managed pods`
	fbMetaOnly = `Forbidden: only labels and annotations may be set on a pod template`
	fbPrefix   = `Forbidden: keys with the "firebolt.io/" prefix are reserved for the operator`
	fbEnv      = `Forbidden: reserved name: set by the operator`
	fbMount    = `Forbidden: reserved name: mounted by the operator`
	fbVolume   = `Forbidden: reserved name: rendered by the operator`
	fbCtr      = `Forbidden: reserved name: container added by the operator`
	fbSecret   = `Forbidden: Secret-backed operator volume: only the "engine" container may mount it`
	fbPSS      = `refused on every Composition (Pod Security Standards baseline)`
)

// everyAllowedEngineField sets every field EngineRules lets a user set on the
// engine container.
func everyAllowedEngineField() corev1.Container {
	return corev1.Container{
		Name:            EngineContainer,
		Image:           "my/engine:v2",
		ImagePullPolicy: corev1.PullAlways,
		Resources:       corev1.ResourceRequirements{Requests: rl("cpu", "4")},
		Env:             []corev1.EnvVar{{Name: "FOO", Value: "bar"}},
		EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "shared"}}}},
		VolumeMounts:             []corev1.VolumeMount{mount("cache", "/cache")},
		SecurityContext:          &corev1.SecurityContext{RunAsUser: ptr(int64(1000))},
		Lifecycle:                &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 5}}},
		WorkingDir:               "/work",
		TerminationMessagePath:   "/dev/msg",
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		VolumeDevices:            []corev1.VolumeDevice{{Name: "blk", DevicePath: "/dev/xvda"}},
		ResizePolicy:             []corev1.ContainerResizePolicy{{ResourceName: "cpu", RestartPolicy: corev1.NotRequired}},
	}
}

func TestValidate(t *testing.T) {
	now := metav1.Now()
	cases := map[string]struct {
		tpl   *corev1.PodTemplateSpec
		rules Rules
		want  []string
	}{
		"NilTemplate": {
			tpl:   nil,
			rules: EngineRules,
		},
		"EmptyTemplate": {
			tpl:   &corev1.PodTemplateSpec{},
			rules: EngineRules,
		},
		"EngineEverythingAllowed": {
			tpl: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels:      map[string]string{"team": "data"},
					Annotations: map[string]string{"iam.amazonaws.com/role": "arn:x"},
				},
				Spec: corev1.PodSpec{
					ServiceAccountName: "sa",
					NodeSelector:       map[string]string{"pool": "engine"},
					Tolerations:        []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}},
					ImagePullSecrets:   []corev1.LocalObjectReference{{Name: "creds"}},
					SecurityContext:    &corev1.PodSecurityContext{RunAsUser: ptr(int64(1000))},
					Volumes:            []corev1.Volume{emptyDir("cache"), emptyDir("blk")},
					Containers: []corev1.Container{
						everyAllowedEngineField(),
						// Non-secret operator volumes may be mounted by sidecars.
						{Name: "shipper", Image: "fluent", VolumeMounts: []corev1.VolumeMount{
							mount(VolumeData, "/data"), mount(VolumeEngineConfig, "/cfg"), mount(VolumeRuntime, "/run"),
						}},
					},
					InitContainers: []corev1.Container{
						{Name: "chown", Image: "busybox", Command: []string{"chown"}, VolumeMounts: []corev1.VolumeMount{mount(VolumeData, "/data")}},
					},
				},
			},
			rules: EngineRules,
		},
		"MetadataOtherThanLabelsAndAnnotations": {
			tpl: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{
				Name:                       "n",
				GenerateName:               "g",
				Namespace:                  "ns",
				SelfLink:                   "/x", //nolint:staticcheck // The deprecated field a template must not set.
				UID:                        "u",
				ResourceVersion:            "1",
				Generation:                 2,
				CreationTimestamp:          now,
				DeletionTimestamp:          &now,
				DeletionGracePeriodSeconds: ptr(int64(1)),
				OwnerReferences:            []metav1.OwnerReference{{Name: "o"}},
				Finalizers:                 []string{"f"},
				ManagedFields:              []metav1.ManagedFieldsEntry{{Manager: "m"}},
			}},
			rules: EngineRules,
			want: []string{
				"spec.template.metadata.name: " + fbMetaOnly,
				"spec.template.metadata.generateName: " + fbMetaOnly,
				"spec.template.metadata.namespace: " + fbMetaOnly,
				"spec.template.metadata.selfLink: " + fbMetaOnly,
				"spec.template.metadata.uid: " + fbMetaOnly,
				"spec.template.metadata.resourceVersion: " + fbMetaOnly,
				"spec.template.metadata.generation: " + fbMetaOnly,
				"spec.template.metadata.creationTimestamp: " + fbMetaOnly,
				"spec.template.metadata.deletionTimestamp: " + fbMetaOnly,
				"spec.template.metadata.deletionGracePeriodSeconds: " + fbMetaOnly,
				"spec.template.metadata.ownerReferences: " + fbMetaOnly,
				"spec.template.metadata.finalizers: " + fbMetaOnly,
				"spec.template.metadata.managedFields: " + fbMetaOnly,
			},
		},
		"ReservedLabelAndAnnotationPrefix": {
			tpl: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{
				Labels: map[string]string{
					"firebolt.io/generation": "9", "team": "data", "firebolt.io/engine": "other",
					"x.firebolt.io/ok": "prefix must lead",
				},
				Annotations: map[string]string{"firebolt.io/config-hash": "h", "note": "fine"},
			}},
			rules: MetadataRules,
			want: []string{
				"spec.template.metadata.labels[firebolt.io/engine]: " + fbPrefix,
				"spec.template.metadata.labels[firebolt.io/generation]: " + fbPrefix,
				"spec.template.metadata.annotations[firebolt.io/config-hash]: " + fbPrefix,
			},
		},
		"UniversalPodFields": {
			tpl: pod(corev1.PodSpec{
				TerminationGracePeriodSeconds: ptr(int64(10)),
				ActiveDeadlineSeconds:         ptr(int64(10)),
				RestartPolicy:                 corev1.RestartPolicyAlways,
				Hostname:                      "h",
				HostnameOverride:              ptr("h"),
				Subdomain:                     "s",
				HostNetwork:                   true,
				HostPID:                       true,
				HostIPC:                       true,
				ShareProcessNamespace:         ptr(false),
				HostUsers:                     ptr(true),
				EphemeralContainers:           []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "dbg"}}},
			}),
			rules: GatewayRules,
			want: []string{
				"spec.template.spec.terminationGracePeriodSeconds: " + fbOwned,
				"spec.template.spec.activeDeadlineSeconds: " + fbOwned,
				"spec.template.spec.restartPolicy: " + fbOwned,
				"spec.template.spec.hostname: " + fbOwned,
				"spec.template.spec.hostnameOverride: " + fbOwned,
				"spec.template.spec.subdomain: " + fbOwned,
				"spec.template.spec.hostNetwork: " + fbHost,
				"spec.template.spec.hostPID: " + fbHost,
				"spec.template.spec.hostIPC: " + fbHost,
				"spec.template.spec.shareProcessNamespace: " + fbHost,
				"spec.template.spec.hostUsers: " + fbHost,
				"spec.template.spec.ephemeralContainers: Forbidden: not permitted on a pod template",
			},
		},
		"PrimaryAlwaysOperatorOwned": {
			tpl: pod(corev1.PodSpec{Containers: []corev1.Container{{
				Name:               EngineContainer,
				Command:            []string{"sh"},
				Args:               []string{"-c"},
				Ports:              []corev1.ContainerPort{{ContainerPort: 1}},
				LivenessProbe:      &corev1.Probe{},
				ReadinessProbe:     &corev1.Probe{},
				StartupProbe:       &corev1.Probe{},
				RestartPolicy:      ptr(corev1.ContainerRestartPolicyAlways),
				RestartPolicyRules: []corev1.ContainerRestartRule{{Action: corev1.ContainerRestartRuleActionRestart}},
				Stdin:              true,
				StdinOnce:          true,
				TTY:                true,
			}}}),
			rules: EngineRules,
			want: []string{
				"spec.template.spec.containers[engine].command: " + fbOwned,
				"spec.template.spec.containers[engine].args: " + fbOwned,
				"spec.template.spec.containers[engine].ports: " + fbOwned,
				"spec.template.spec.containers[engine].restartPolicy: " + fbOwned,
				"spec.template.spec.containers[engine].restartPolicyRules: " + fbOwned,
				"spec.template.spec.containers[engine].livenessProbe: " + fbOwned,
				"spec.template.spec.containers[engine].readinessProbe: " + fbOwned,
				"spec.template.spec.containers[engine].startupProbe: " + fbOwned,
				"spec.template.spec.containers[engine].stdin: " + fbOwned,
				"spec.template.spec.containers[engine].stdinOnce: " + fbOwned,
				"spec.template.spec.containers[engine].tty: " + fbOwned,
			},
		},
		"GatewayPrimaryOnlyImageAndResources": {
			tpl: pod(corev1.PodSpec{Containers: []corev1.Container{func() corev1.Container {
				c := everyAllowedEngineField()
				c.Name = GatewayContainer
				return c
			}()}}),
			rules: GatewayRules,
			want: []string{
				"spec.template.spec.containers[envoy].workingDir: " + fbOwned,
				"spec.template.spec.containers[envoy].envFrom: " + fbOwned,
				"spec.template.spec.containers[envoy].env: " + fbOwned,
				"spec.template.spec.containers[envoy].resizePolicy: " + fbOwned,
				"spec.template.spec.containers[envoy].volumeMounts: " + fbOwned,
				"spec.template.spec.containers[envoy].volumeDevices: " + fbOwned,
				"spec.template.spec.containers[envoy].lifecycle: " + fbOwned,
				"spec.template.spec.containers[envoy].terminationMessagePath: " + fbOwned,
				"spec.template.spec.containers[envoy].terminationMessagePolicy: " + fbOwned,
				"spec.template.spec.containers[envoy].securityContext: " + fbOwned,
			},
		},
		"MetadataPrimaryImageResourcesAccepted": {
			tpl: pod(corev1.PodSpec{Containers: []corev1.Container{{
				Name: MetadataContainer, Image: "m:2", ImagePullPolicy: corev1.PullIfNotPresent,
				Resources: corev1.ResourceRequirements{Limits: rl("memory", "1Gi")},
			}}}),
			rules: MetadataRules,
		},
		"MetadataPrimaryEnvRejected": {
			tpl: pod(corev1.PodSpec{Containers: []corev1.Container{{
				Name: MetadataContainer, Env: []corev1.EnvVar{{Name: "POSTGRES_PASSWORD_FILE", Value: "/x"}},
			}}}),
			rules: MetadataRules,
			want:  []string{"spec.template.spec.containers[metadata].env: " + fbOwned},
		},
		"ImageFieldsRejectedWhenNotAllowed": {
			tpl: pod(corev1.PodSpec{Containers: []corev1.Container{{
				Name: "p", Image: "x", ImagePullPolicy: corev1.PullNever,
				Resources: corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "gpu"}}},
			}}}),
			rules: Rules{Primary: "p"},
			want: []string{
				"spec.template.spec.containers[p].image: " + fbOwned,
				"spec.template.spec.containers[p].imagePullPolicy: " + fbOwned,
				"spec.template.spec.containers[p].resources: " + fbOwned,
			},
		},
		"EngineReservedEnv": {
			tpl: pod(corev1.PodSpec{Containers: []corev1.Container{{
				Name: EngineContainer,
				Env: []corev1.EnvVar{
					{Name: EnvPodIndex, Value: "0"}, {Name: "FOO", Value: "1"}, {Name: EnvAWSEC2MetadataClientEnabled, Value: "false"},
				},
			}}}),
			rules: EngineRules,
			want: []string{
				"spec.template.spec.containers[engine].env[POD_INDEX]: " + fbEnv,
				"spec.template.spec.containers[engine].env[FB_AWS_EC2_METADATA_CLIENT_ENABLED]: " + fbEnv,
			},
		},
		"EngineReservedMounts": {
			tpl: pod(corev1.PodSpec{Containers: []corev1.Container{{
				Name: EngineContainer,
				VolumeMounts: []corev1.VolumeMount{
					mount(VolumeData, "/a"), mount(VolumeEngineConfig, "/b"), mount(VolumeRuntime, "/c"),
					mount(VolumeAuthAdmin, "/d"), mount(VolumeEngineTLS, "/e"), mount("auth-signing-signing-1", "/f"),
					mount("cache", "/g"), mount(VolumeEngineWeb, "/h"),
				},
			}}}),
			rules: EngineRules,
			want: []string{
				"spec.template.spec.containers[engine].volumeMounts[data]: " + fbMount,
				"spec.template.spec.containers[engine].volumeMounts[engine-config]: " + fbMount,
				"spec.template.spec.containers[engine].volumeMounts[runtime]: " + fbMount,
				"spec.template.spec.containers[engine].volumeMounts[auth-admin]: " + fbMount,
				"spec.template.spec.containers[engine].volumeMounts[tls-engine]: " + fbMount,
				"spec.template.spec.containers[engine].volumeMounts[auth-signing-signing-1]: " + fbMount,
				"spec.template.spec.containers[engine].volumeMounts[nginx-writable-dir]: " + fbMount,
			},
		},
		"DuplicatePrimary": {
			tpl: pod(corev1.PodSpec{Containers: []corev1.Container{
				{Name: EngineContainer, Image: "a"}, {Name: EngineContainer, Image: "b"},
			}}),
			rules: EngineRules,
			want:  []string{`spec.template.spec.containers[engine]: Duplicate value: "engine"`},
		},
		"EngineReservedContainerNames": {
			tpl: pod(corev1.PodSpec{
				Containers:     []corev1.Container{{Name: EngineWebContainer}},
				InitContainers: []corev1.Container{{Name: EngineWebContainer}, {Name: EngineContainer}},
			}),
			rules: EngineRules,
			want: []string{
				"spec.template.spec.containers[engine-web]: " + fbCtr,
				"spec.template.spec.initContainers[engine-web]: " + fbCtr,
				`spec.template.spec.initContainers[engine]: Forbidden: reserved name: the operator's "engine" container`,
			},
		},
		"GatewayReservedContainerName": {
			tpl: pod(corev1.PodSpec{
				Containers:     []corev1.Container{{Name: WakeAgentContainer}, {Name: EngineWebContainer}},
				InitContainers: []corev1.Container{{Name: GatewayContainer}},
			}),
			rules: GatewayRules,
			want: []string{
				"spec.template.spec.containers[wake-agent]: " + fbCtr,
				`spec.template.spec.initContainers[envoy]: Forbidden: reserved name: the operator's "envoy" container`,
			},
		},
		"EngineSidecarsMountingSecretVolumes": {
			tpl: pod(corev1.PodSpec{
				Containers: []corev1.Container{{Name: "shipper", VolumeMounts: []corev1.VolumeMount{
					mount(VolumeAuthAdmin, "/a"), mount(VolumeData, "/d"), mount(VolumeEngineTLS, "/t"),
				}}},
				InitContainers: []corev1.Container{{Name: "init", VolumeMounts: []corev1.VolumeMount{
					mount("auth-signing-signing-3", "/k"),
				}}},
			}),
			rules: EngineRules,
			want: []string{
				"spec.template.spec.containers[shipper].volumeMounts[auth-admin]: " + fbSecret,
				"spec.template.spec.containers[shipper].volumeMounts[tls-engine]: " + fbSecret,
				"spec.template.spec.initContainers[init].volumeMounts[auth-signing-signing-3]: " + fbSecret,
			},
		},
		"GatewaySidecarsMountingSecretVolumes": {
			tpl: pod(corev1.PodSpec{Containers: []corev1.Container{{Name: "exporter", VolumeMounts: []corev1.VolumeMount{
				mount(VolumeWakeAgentToken, "/a"), mount(VolumeGatewayConfig, "/b"), mount(VolumeGatewayTmp, "/c"),
				mount(VolumeEngineCA, "/d"), mount(VolumeGatewayTLS, "/e"), mount(VolumeClientCA, "/f"),
				mount(VolumeEngineCRL, "/g"), mount(VolumeClientCRL, "/h"),
			}}}}),
			rules: GatewayRules,
			want: []string{
				`spec.template.spec.containers[exporter].volumeMounts[wake-agent-token]: Forbidden: Secret-backed operator volume: only the "envoy" container may mount it`,
				`spec.template.spec.containers[exporter].volumeMounts[engine-ca]: Forbidden: Secret-backed operator volume: only the "envoy" container may mount it`,
				`spec.template.spec.containers[exporter].volumeMounts[tls-gateway]: Forbidden: Secret-backed operator volume: only the "envoy" container may mount it`,
				`spec.template.spec.containers[exporter].volumeMounts[client-ca]: Forbidden: Secret-backed operator volume: only the "envoy" container may mount it`,
				`spec.template.spec.containers[exporter].volumeMounts[engine-crl]: Forbidden: Secret-backed operator volume: only the "envoy" container may mount it`,
				`spec.template.spec.containers[exporter].volumeMounts[client-crl]: Forbidden: Secret-backed operator volume: only the "envoy" container may mount it`,
			},
		},
		"MetadataSidecarMountingPostgresCreds": {
			tpl: pod(corev1.PodSpec{Containers: []corev1.Container{{Name: "proxy", VolumeMounts: []corev1.VolumeMount{
				mount(VolumePostgresCreds, "/a"), mount(VolumeMetadataConfig, "/b"), mount(VolumeMetadataTmp, "/c"),
			}}}}),
			rules: MetadataRules,
			want: []string{
				`spec.template.spec.containers[proxy].volumeMounts[postgres-creds]: Forbidden: Secret-backed operator volume: only the "metadata" container may mount it`,
			},
		},
		"ReservedDuplicateAndUnnamedVolumes": {
			tpl: pod(corev1.PodSpec{Volumes: []corev1.Volume{
				emptyDir(VolumeData), emptyDir("auth-signing-mine"), emptyDir(VolumeEngineWeb),
				emptyDir("cache"), emptyDir("cache"), emptyDir(""),
			}}),
			rules: EngineRules,
			want: []string{
				"spec.template.spec.volumes[data]: " + fbVolume,
				"spec.template.spec.volumes[auth-signing-mine]: " + fbVolume,
				"spec.template.spec.volumes[nginx-writable-dir]: " + fbVolume,
				`spec.template.spec.volumes[cache]: Duplicate value: "cache"`,
				"spec.template.spec.volumes[5].name: Required value: a name is required",
			},
		},
		"PrivilegesNoInputMayAllow": {
			tpl: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
					"container.apparmor.security.beta.kubernetes.io/shipper": "unconfined",
					"container.apparmor.security.beta.kubernetes.io/engine":  "runtime/default",
					"container.apparmor.security.beta.kubernetes.io/init":    "localhost/custom",
				}},
				Spec: corev1.PodSpec{
					NodeName: "node-1",
					SecurityContext: &corev1.PodSecurityContext{
						Sysctls:         []corev1.Sysctl{{Name: "net.ipv4.tcp_syncookies", Value: "1"}, {Name: "kernel.msgmax", Value: "1"}},
						SELinuxOptions:  &corev1.SELinuxOptions{Type: "spc_t", User: "system_u", Role: "system_r"},
						SeccompProfile:  &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined},
						AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined},
						WindowsOptions:  &corev1.WindowsSecurityContextOptions{HostProcess: ptr(true)},
					},
					Containers: []corev1.Container{{
						Name:  "shipper",
						Ports: []corev1.ContainerPort{{ContainerPort: 80}, {ContainerPort: 81, HostPort: 81}},
						SecurityContext: &corev1.SecurityContext{
							Privileged:               ptr(true),
							AllowPrivilegeEscalation: ptr(true),
							ProcMount:                ptr(corev1.UnmaskedProcMount),
							SELinuxOptions:           &corev1.SELinuxOptions{Type: "container_t"},
							SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr("p.json")},
						},
					}},
					InitContainers: []corev1.Container{{
						Name: "init",
						SecurityContext: &corev1.SecurityContext{
							Privileged:               ptr(false),
							AllowPrivilegeEscalation: ptr(false),
							ProcMount:                ptr(corev1.DefaultProcMount),
							SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined},
						},
					}},
				},
			},
			rules: EngineRules,
			want: []string{
				"spec.template.spec.nodeName: Forbidden: refused on every Composition: it bypasses the scheduler, taints and node restrictions; use nodeSelector or affinity",
				"spec.template.metadata.annotations[container.apparmor.security.beta.kubernetes.io/shipper]: Forbidden: only runtime/default or localhost/<profile>; " + fbPSS,
				"spec.template.spec.securityContext.sysctls[1].name: Forbidden: sysctl kernel.msgmax is not one of the safe sysctls; " + fbPSS,
				"spec.template.spec.securityContext.seLinuxOptions.type: Forbidden: must be one of container_t, container_init_t, container_kvm_t, container_engine_t; " + fbPSS,
				"spec.template.spec.securityContext.seLinuxOptions.user: Forbidden: " + fbPSS,
				"spec.template.spec.securityContext.seLinuxOptions.role: Forbidden: " + fbPSS,
				"spec.template.spec.securityContext.seccompProfile.type: Forbidden: Unconfined is " + fbPSS,
				"spec.template.spec.securityContext.appArmorProfile.type: Forbidden: Unconfined is " + fbPSS,
				"spec.template.spec.securityContext.windowsOptions.hostProcess: Forbidden: " + fbPSS,
				"spec.template.spec.containers[shipper].ports[1].hostPort: Forbidden: " + fbPSS,
				"spec.template.spec.containers[shipper].securityContext.privileged: Forbidden: " + fbPSS,
				"spec.template.spec.containers[shipper].securityContext.allowPrivilegeEscalation: Forbidden: " + fbPSS,
				"spec.template.spec.containers[shipper].securityContext.procMount: Forbidden: must be Default; " + fbPSS,
				"spec.template.spec.initContainers[init].securityContext.seccompProfile.type: Forbidden: Unconfined is " + fbPSS,
			},
		},
		"DuplicateAndUnnamedContainers": {
			tpl: pod(corev1.PodSpec{
				Containers: []corev1.Container{
					{Name: "log"}, {Name: "log"},
					{VolumeMounts: []corev1.VolumeMount{mount(VolumeAuthAdmin, "/a")}},
				},
				InitContainers: []corev1.Container{{Name: "log"}, {}},
			}),
			rules: EngineRules,
			want: []string{
				`spec.template.spec.containers[log]: Duplicate value: "log"`,
				"spec.template.spec.containers[2].name: Required value: a name is required",
				"spec.template.spec.containers[2].volumeMounts[auth-admin]: " + fbSecret,
				`spec.template.spec.initContainers[log]: Duplicate value: "log"`,
				"spec.template.spec.initContainers[1].name: Required value: a name is required",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := messages(Validate(tc.tpl, tc.rules, tplPath()))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Validate(...): -want, +got:\n%s", diff)
			}
		})
	}
}

func TestValidateLayers(t *testing.T) {
	class := pod(corev1.PodSpec{
		Containers:     []corev1.Container{{Name: EngineContainer}, {Name: "log"}},
		InitContainers: []corev1.Container{{Name: "warmup"}},
		Volumes:        []corev1.Volume{emptyDir("cache")},
	})
	cases := map[string]struct {
		class, engine *corev1.PodTemplateSpec
		want          []string
	}{
		"NoClass": {
			engine: pod(corev1.PodSpec{Containers: []corev1.Container{{Name: "log"}}}),
		},
		"NoEngine": {
			class: class,
		},
		"DistinctNamesAndSharedPrimary": {
			class: class,
			engine: pod(corev1.PodSpec{
				Containers:     []corev1.Container{{Name: EngineContainer}, {Name: "metrics"}},
				InitContainers: []corev1.Container{{Name: "migrate"}},
				Volumes:        []corev1.Volume{emptyDir("scratch")},
			}),
		},
		"ReusedNames": {
			class: class,
			engine: pod(corev1.PodSpec{
				Containers:     []corev1.Container{{Name: "warmup"}, {Name: "log"}},
				InitContainers: []corev1.Container{{Name: "log"}},
				Volumes:        []corev1.Volume{emptyDir("cache")},
			}),
			want: []string{
				"spec.template.spec.containers[warmup]: Forbidden: name already used by the class template",
				"spec.template.spec.containers[log]: Forbidden: name already used by the class template",
				"spec.template.spec.initContainers[log]: Forbidden: name already used by the class template",
				"spec.template.spec.volumes[cache]: Forbidden: name already used by the class template",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := messages(ValidateLayers(tc.class, tc.engine, EngineRules, tplPath()))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ValidateLayers(...): -want, +got:\n%s", diff)
			}
		})
	}
}

func TestPrimaryContainer(t *testing.T) {
	tpl := pod(corev1.PodSpec{Containers: []corev1.Container{{Name: "log"}, {Name: EngineContainer, Image: "first"}, {Name: EngineContainer, Image: "second"}}})
	cases := map[string]struct {
		tpl  *corev1.PodTemplateSpec
		name string
		want *corev1.Container
	}{
		"Nil":     {tpl: nil, name: EngineContainer},
		"Missing": {tpl: tpl, name: GatewayContainer},
		"First":   {tpl: tpl, name: EngineContainer, want: &corev1.Container{Name: EngineContainer, Image: "first"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, PrimaryContainer(tc.tpl, tc.name)); diff != "" {
				t.Errorf("PrimaryContainer(...): -want, +got:\n%s", diff)
			}
		})
	}
}

func fieldNames(v any) []string {
	t := reflect.TypeOf(v)
	out := make([]string, 0, t.NumField())
	for i := 0; i < t.NumField(); i++ {
		out = append(out, t.Field(i).Name)
	}
	sort.Strings(out)
	return out
}

func sorted(s ...string) []string {
	sort.Strings(s)
	return s
}

// The rules and the merge name every field of these types. When a Kubernetes
// upgrade adds one, these tests fail so someone decides whether users may set
// it and how it merges, instead of it passing through unjudged.
func TestContainerFieldsClassified(t *testing.T) {
	want := sorted("Name", "Image", "Command", "Args", "WorkingDir", "Ports", "EnvFrom", "Env", "Resources",
		"ResizePolicy", "RestartPolicy", "RestartPolicyRules", "VolumeMounts", "VolumeDevices", "LivenessProbe",
		"ReadinessProbe", "StartupProbe", "Lifecycle", "TerminationMessagePath", "TerminationMessagePolicy",
		"ImagePullPolicy", "SecurityContext", "Stdin", "StdinOnce", "TTY")
	if diff := cmp.Diff(want, fieldNames(corev1.Container{})); diff != "" {
		t.Errorf("corev1.Container fields changed; classify them in validatePrimary and mergePrimary: -want, +got:\n%s", diff)
	}
}

func TestPodSpecFieldsClassified(t *testing.T) {
	want := sorted("Volumes", "InitContainers", "Containers", "EphemeralContainers", "RestartPolicy",
		"TerminationGracePeriodSeconds", "ActiveDeadlineSeconds", "DNSPolicy", "NodeSelector", "ServiceAccountName",
		"DeprecatedServiceAccount", "AutomountServiceAccountToken", "NodeName", "HostNetwork", "HostPID", "HostIPC",
		"ShareProcessNamespace", "SecurityContext", "ImagePullSecrets", "Hostname", "Subdomain", "Affinity",
		"SchedulerName", "Tolerations", "HostAliases", "PriorityClassName", "Priority", "DNSConfig", "ReadinessGates",
		"RuntimeClassName", "EnableServiceLinks", "PreemptionPolicy", "Overhead", "TopologySpreadConstraints",
		"SetHostnameAsFQDN", "OS", "HostUsers", "SchedulingGates", "ResourceClaims", "Resources", "HostnameOverride",
		"SchedulingGroup")
	if diff := cmp.Diff(want, fieldNames(corev1.PodSpec{})); diff != "" {
		t.Errorf("corev1.PodSpec fields changed; classify them in validatePodFields and mergePodSpec: -want, +got:\n%s", diff)
	}
}

func TestObjectMetaFieldsClassified(t *testing.T) {
	want := sorted("Name", "GenerateName", "Namespace", "SelfLink", "UID", "ResourceVersion", "Generation",
		"CreationTimestamp", "DeletionTimestamp", "DeletionGracePeriodSeconds", "Labels", "Annotations",
		"OwnerReferences", "Finalizers", "ManagedFields")
	if diff := cmp.Diff(want, fieldNames(metav1.ObjectMeta{})); diff != "" {
		t.Errorf("metav1.ObjectMeta fields changed; classify them in validateMetadata: -want, +got:\n%s", diff)
	}
}
