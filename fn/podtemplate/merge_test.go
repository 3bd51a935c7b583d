package podtemplate

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func hardenedContainerSC() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsUser:                ptr(int64(3473)),
		RunAsGroup:               ptr(int64(3473)),
		RunAsNonRoot:             ptr(true),
		ReadOnlyRootFilesystem:   ptr(true),
		AllowPrivilegeEscalation: ptr(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

func engineVolumes() []corev1.Volume {
	return []corev1.Volume{
		{Name: VolumeEngineConfig, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "e-g2-config"}}}},
		emptyDir(VolumeRuntime),
		emptyDir(VolumeData),
	}
}

// operatorEngine is an engine composer's operator layer as §6.1 renders it
// (trimmed to what the merge treats differently).
func operatorEngine() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"firebolt.io/engine": "e", "firebolt.io/generation": "2"}},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr(int64(60)),
			EnableServiceLinks:            ptr(false),
			SecurityContext: &corev1.PodSecurityContext{
				FSGroup:             ptr(int64(3473)),
				FSGroupChangePolicy: ptr(corev1.FSGroupChangeOnRootMismatch),
			},
			Containers: []corev1.Container{
				{
					Name:    EngineContainer,
					Image:   "ghcr.io/firebolt-db/engine:v1",
					Command: []string{"/bin/bash", "-c"},
					Args:    []string{"exec /opt/firebolt/firebolt server"},
					Ports:   []corev1.ContainerPort{{Name: "http-query", ContainerPort: 3473}},
					Env: []corev1.EnvVar{
						{Name: EnvPodIndex, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
							APIVersion: "v1", FieldPath: "metadata.labels['apps.kubernetes.io/pod-index']"}}},
						{Name: EnvAWSEC2MetadataClientEnabled, Value: "true"},
					},
					VolumeMounts: []corev1.VolumeMount{
						mount(VolumeData, "/var/lib/firebolt"),
						{Name: VolumeEngineConfig, MountPath: "/var/lib/firebolt/config.yaml", SubPath: "config.yaml", ReadOnly: true},
						mount(VolumeRuntime, "/run/firebolt"),
					},
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
						Path: "/health/ready", Port: intstr.FromInt32(8122)}}},
					SecurityContext: hardenedContainerSC(),
				},
				{Name: EngineWebContainer, Image: "ghcr.io/firebolt-db/firebolt-core-ui:latest"},
			},
			Volumes: engineVolumes(),
		},
	}
}

func classTemplate() *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{
			Labels:      map[string]string{"team": "data", "tier": "class"},
			Annotations: map[string]string{"shared": "class", "iam.amazonaws.com/role": "arn:class"},
		},
		Spec: corev1.PodSpec{
			ServiceAccountName: "class-sa",
			PriorityClassName:  "class-prio",
			NodeSelector:       map[string]string{"pool": "engine", "zone": "a"},
			Tolerations:        []corev1.Toleration{{Key: "from-class", Operator: corev1.TolerationOpExists}},
			ImagePullSecrets:   []corev1.LocalObjectReference{{Name: "class-creds"}},
			Volumes:            []corev1.Volume{emptyDir("cache-class")},
			InitContainers:     []corev1.Container{{Name: "warmup", Image: "busybox"}},
			Containers: []corev1.Container{
				{
					Name:  EngineContainer,
					Image: "my/engine:class",
					Env:   []corev1.EnvVar{{Name: "DATABASE_URL", Value: "postgres://shared"}},
					EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
						LocalObjectReference: corev1.LocalObjectReference{Name: "shared-config"}}}},
					VolumeMounts:    []corev1.VolumeMount{mount("cache-class", "/cache/class")},
					Resources:       corev1.ResourceRequirements{Requests: rl("cpu", "4", "memory", "16Gi")},
					SecurityContext: &corev1.SecurityContext{RunAsUser: ptr(int64(1000))},
				},
				{Name: "log-shipper", Image: "fluent/fluent-bit"},
			},
		},
	}
}

func engineTemplate() *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{
			Labels:      map[string]string{"team": "analytics", "owner": "me"},
			Annotations: map[string]string{"shared": "engine", "prometheus.io/scrape": "true"},
		},
		Spec: corev1.PodSpec{
			ServiceAccountName: "engine-sa",
			NodeSelector:       map[string]string{"zone": "b", "gpu": "true"},
			Tolerations:        []corev1.Toleration{{Key: "from-engine", Operator: corev1.TolerationOpExists}},
			ImagePullSecrets:   []corev1.LocalObjectReference{{Name: "engine-creds"}},
			Volumes:            []corev1.Volume{emptyDir("cache-engine")},
			InitContainers:     []corev1.Container{{Name: "migrate", Image: "busybox"}},
			// The user lists the sidecar before the primary; the primary still
			// merges into the operator's first container.
			Containers: []corev1.Container{
				{Name: "metrics-exporter", Image: "exporter"},
				{
					Name:            EngineContainer,
					ImagePullPolicy: corev1.PullAlways,
					Env:             []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "debug"}},
					VolumeMounts:    []corev1.VolumeMount{mount("cache-engine", "/cache/engine")},
					Resources:       corev1.ResourceRequirements{Limits: rl("memory", "32Gi")},
				},
			},
		},
	}
}

// poison overwrites everything reachable from v that can be set, so a test
// can prove the merged result shares no memory with the inputs.
func poison(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			poison(v.Elem())
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Field(i).CanSet() {
				poison(v.Field(i))
			}
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			poison(v.Index(i))
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			if v.Type().Elem().Kind() == reflect.String {
				v.SetMapIndex(k, reflect.ValueOf("poisoned").Convert(v.Type().Elem()))
			} else {
				v.SetMapIndex(k, reflect.Zero(v.Type().Elem()))
			}
		}
	case reflect.String:
		v.SetString("poisoned")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + 7)
	case reflect.Bool:
		v.SetBool(!v.Bool())
	default:
		// PodTemplateSpec holds no other kinds worth poisoning.
	}
}

func TestMerge(t *testing.T) {
	type args struct {
		operator      corev1.PodTemplateSpec
		class, engine *corev1.PodTemplateSpec
		rules         Rules
	}
	cases := map[string]struct {
		reason string
		args   args
		want   func() corev1.PodTemplateSpec
	}{
		"OperatorOnly": {
			reason: "Without user layers the operator's template renders unchanged.",
			args:   args{operator: operatorEngine(), rules: EngineRules},
			want:   operatorEngine,
		},
		"ClassOnly": {
			reason: "A class alone fills in on top of the operator defaults.",
			args:   args{operator: operatorEngine(), class: classTemplate(), rules: EngineRules},
			want: func() corev1.PodTemplateSpec {
				w := operatorEngine()
				w.Labels["team"] = "data"
				w.Labels["tier"] = "class"
				w.Annotations = map[string]string{"shared": "class", "iam.amazonaws.com/role": "arn:class"}
				s := &w.Spec
				s.ServiceAccountName = "class-sa"
				s.PriorityClassName = "class-prio"
				s.NodeSelector = map[string]string{"pool": "engine", "zone": "a"}
				s.Tolerations = []corev1.Toleration{{Key: "from-class", Operator: corev1.TolerationOpExists}}
				s.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "class-creds"}}
				s.Volumes = append(s.Volumes, emptyDir("cache-class"))
				s.InitContainers = []corev1.Container{{Name: "warmup", Image: "busybox"}}
				e := &s.Containers[0]
				e.Image = "my/engine:class"
				e.Env = append(e.Env, corev1.EnvVar{Name: "DATABASE_URL", Value: "postgres://shared"})
				e.EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "shared-config"}}}}
				e.VolumeMounts = append(e.VolumeMounts, mount("cache-class", "/cache/class"))
				e.Resources = corev1.ResourceRequirements{Requests: rl("cpu", "4", "memory", "16Gi")}
				e.SecurityContext = &corev1.SecurityContext{RunAsUser: ptr(int64(1000))}
				s.Containers = append(s.Containers, corev1.Container{Name: "log-shipper", Image: "fluent/fluent-bit"})
				return w
			},
		},
		"EngineOnly": {
			reason: "An engine template alone fills in on top of the operator defaults; the hardened container securityContext stays because nobody supplied one.",
			args:   args{operator: operatorEngine(), engine: engineTemplate(), rules: EngineRules},
			want: func() corev1.PodTemplateSpec {
				w := operatorEngine()
				w.Labels["team"] = "analytics"
				w.Labels["owner"] = "me"
				w.Annotations = map[string]string{"shared": "engine", "prometheus.io/scrape": "true"}
				s := &w.Spec
				s.ServiceAccountName = "engine-sa"
				s.NodeSelector = map[string]string{"zone": "b", "gpu": "true"}
				s.Tolerations = []corev1.Toleration{{Key: "from-engine", Operator: corev1.TolerationOpExists}}
				s.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "engine-creds"}}
				s.Volumes = append(s.Volumes, emptyDir("cache-engine"))
				s.InitContainers = []corev1.Container{{Name: "migrate", Image: "busybox"}}
				e := &s.Containers[0]
				e.ImagePullPolicy = corev1.PullAlways
				e.Env = append(e.Env, corev1.EnvVar{Name: "LOG_LEVEL", Value: "debug"})
				e.VolumeMounts = append(e.VolumeMounts, mount("cache-engine", "/cache/engine"))
				e.Resources = corev1.ResourceRequirements{Limits: rl("memory", "32Gi")}
				s.Containers = append(s.Containers, corev1.Container{Name: "metrics-exporter", Image: "exporter"})
				return w
			},
		},
		"ClassAndEngine": {
			reason: "Scalars and maps: engine over class over operator; lists: operator, class, engine; resources engine-wholesale; reserved labels stay the operator's.",
			args: args{
				operator: operatorEngine(),
				class: func() *corev1.PodTemplateSpec {
					c := classTemplate()
					c.Labels["firebolt.io/generation"] = "9"
					return c
				}(),
				engine: engineTemplate(),
				rules:  EngineRules,
			},
			want: func() corev1.PodTemplateSpec {
				w := operatorEngine()
				w.Labels = map[string]string{
					"firebolt.io/engine": "e", "firebolt.io/generation": "2",
					"team": "analytics", "tier": "class", "owner": "me",
				}
				w.Annotations = map[string]string{"shared": "engine", "iam.amazonaws.com/role": "arn:class", "prometheus.io/scrape": "true"}
				s := &w.Spec
				s.ServiceAccountName = "engine-sa"
				s.PriorityClassName = "class-prio"
				s.NodeSelector = map[string]string{"pool": "engine", "zone": "b", "gpu": "true"}
				s.Tolerations = []corev1.Toleration{
					{Key: "from-class", Operator: corev1.TolerationOpExists},
					{Key: "from-engine", Operator: corev1.TolerationOpExists},
				}
				s.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "class-creds"}, {Name: "engine-creds"}}
				s.Volumes = append(s.Volumes, emptyDir("cache-class"), emptyDir("cache-engine"))
				s.InitContainers = []corev1.Container{{Name: "warmup", Image: "busybox"}, {Name: "migrate", Image: "busybox"}}
				e := &s.Containers[0]
				e.Image = "my/engine:class"
				e.ImagePullPolicy = corev1.PullAlways
				e.Env = append(e.Env,
					corev1.EnvVar{Name: "DATABASE_URL", Value: "postgres://shared"},
					corev1.EnvVar{Name: "LOG_LEVEL", Value: "debug"})
				e.EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "shared-config"}}}}
				e.VolumeMounts = append(e.VolumeMounts, mount("cache-class", "/cache/class"), mount("cache-engine", "/cache/engine"))
				e.Resources = corev1.ResourceRequirements{Limits: rl("memory", "32Gi")}
				e.SecurityContext = &corev1.SecurityContext{RunAsUser: ptr(int64(1000))}
				s.Containers = append(s.Containers,
					corev1.Container{Name: "log-shipper", Image: "fluent/fluent-bit"},
					corev1.Container{Name: "metrics-exporter", Image: "exporter"})
				return w
			},
		},
		"ResourcesFromClassWhenEngineSaysNothing": {
			reason: "The engine's primary says nothing about resources, so the class's whole value is used.",
			args: args{
				operator: operatorEngine(),
				class: pod(corev1.PodSpec{Containers: []corev1.Container{{Name: EngineContainer,
					Resources: corev1.ResourceRequirements{Requests: rl("cpu", "2"), Limits: rl("cpu", "4")}}}}),
				engine: pod(corev1.PodSpec{Containers: []corev1.Container{{Name: EngineContainer, Image: "mine"}}}),
				rules:  EngineRules,
			},
			want: func() corev1.PodTemplateSpec {
				w := operatorEngine()
				w.Spec.Containers[0].Image = "mine"
				w.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: rl("cpu", "2"), Limits: rl("cpu", "4")}
				return w
			},
		},
		"ContainerSecurityContextEngineWholesale": {
			reason: "The engine's container securityContext replaces the class's whole value, which replaced the operator default.",
			args: args{
				operator: operatorEngine(),
				class: pod(corev1.PodSpec{Containers: []corev1.Container{{Name: EngineContainer,
					SecurityContext: &corev1.SecurityContext{RunAsUser: ptr(int64(1000)), Privileged: ptr(false)}}}}),
				engine: pod(corev1.PodSpec{Containers: []corev1.Container{{Name: EngineContainer,
					SecurityContext: &corev1.SecurityContext{RunAsNonRoot: ptr(true)}}}}),
				rules: EngineRules,
			},
			want: func() corev1.PodTemplateSpec {
				w := operatorEngine()
				w.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{RunAsNonRoot: ptr(true)}
				return w
			},
		},
		"PodSecurityContextDefaultsFillUnset": {
			reason: "A user pod securityContext keeps its fields and gains the operator's fsGroup defaults where unset.",
			args: args{
				operator: operatorEngine(),
				class:    pod(corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr(int64(1000))}}),
				rules:    EngineRules,
			},
			want: func() corev1.PodTemplateSpec {
				w := operatorEngine()
				w.Spec.SecurityContext = &corev1.PodSecurityContext{
					RunAsUser:           ptr(int64(1000)),
					FSGroup:             ptr(int64(3473)),
					FSGroupChangePolicy: ptr(corev1.FSGroupChangeOnRootMismatch),
				}
				return w
			},
		},
		"PodSecurityContextEngineWholesale": {
			reason: "The engine's pod securityContext replaces the class's; only operator defaults fill what it leaves unset.",
			args: args{
				operator: operatorEngine(),
				class: pod(corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{
					RunAsUser: ptr(int64(1000)), SupplementalGroups: []int64{5}}}),
				engine: pod(corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{FSGroup: ptr(int64(2000))}}),
				rules:  EngineRules,
			},
			want: func() corev1.PodTemplateSpec {
				w := operatorEngine()
				w.Spec.SecurityContext = &corev1.PodSecurityContext{
					FSGroup:             ptr(int64(2000)),
					FSGroupChangePolicy: ptr(corev1.FSGroupChangeOnRootMismatch),
				}
				return w
			},
		},
		"PodSecurityContextWithoutOperatorDefault": {
			reason: "With no operator pod securityContext the user's is taken as is.",
			args: args{
				operator: corev1.PodTemplateSpec{},
				engine:   pod(corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr(int64(7))}}),
				rules:    EngineRules,
			},
			want: func() corev1.PodTemplateSpec {
				return corev1.PodTemplateSpec{Spec: corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr(int64(7))}}}
			},
		},
		"OperatorOwnedInputIgnored": {
			reason: "Fields and names Validate rejects never reach the rendered pod, even when a caller skipped Validate.",
			args: args{
				operator: operatorEngine(),
				class: &corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Name: "x", Labels: map[string]string{"firebolt.io/engine": "other"}},
					Spec: corev1.PodSpec{
						TerminationGracePeriodSeconds: ptr(int64(1)),
						ActiveDeadlineSeconds:         ptr(int64(1)),
						RestartPolicy:                 corev1.RestartPolicyNever,
						Hostname:                      "h",
						HostnameOverride:              ptr("h"),
						Subdomain:                     "s",
						HostNetwork:                   true,
						HostPID:                       true,
						HostIPC:                       true,
						ShareProcessNamespace:         ptr(true),
						HostUsers:                     ptr(true),
						EphemeralContainers:           []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "dbg"}}},
						Volumes:                       []corev1.Volume{emptyDir(VolumeData), emptyDir("auth-signing-x"), emptyDir(VolumeEngineWeb)},
						InitContainers:                []corev1.Container{{Name: EngineContainer}, {Name: EngineWebContainer}},
					},
				},
				engine: pod(corev1.PodSpec{Containers: []corev1.Container{
					{
						Name:               EngineContainer,
						Command:            []string{"evil"},
						Args:               []string{"evil"},
						Ports:              []corev1.ContainerPort{{ContainerPort: 1}},
						LivenessProbe:      &corev1.Probe{},
						ReadinessProbe:     &corev1.Probe{},
						StartupProbe:       &corev1.Probe{},
						RestartPolicy:      ptr(corev1.ContainerRestartPolicyAlways),
						RestartPolicyRules: []corev1.ContainerRestartRule{{Action: corev1.ContainerRestartRuleActionRestart}},
						Stdin:              true,
						StdinOnce:          true,
						TTY:                true,
						Env:                []corev1.EnvVar{{Name: EnvPodIndex, Value: "0"}},
						VolumeMounts:       []corev1.VolumeMount{mount(VolumeData, "/x"), mount("auth-signing-k", "/y")},
					},
					{Name: EngineWebContainer, Image: "evil"},
				}}),
				rules: EngineRules,
			},
			want: operatorEngine,
		},
		"PodFields": {
			reason: "Every mergeable pod field: scalars engine over class, overhead whole, lists concatenated class then engine.",
			args: args{
				operator: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					DNSPolicy:     corev1.DNSClusterFirst,
					SchedulerName: "operator-scheduler",
					Tolerations:   []corev1.Toleration{{Key: "operator"}},
					NodeSelector:  map[string]string{"kubernetes.io/os": "linux"},
				}},
				class: pod(corev1.PodSpec{
					DNSPolicy:                    corev1.DNSDefault,
					DeprecatedServiceAccount:     "old-sa",
					AutomountServiceAccountToken: ptr(false),
					NodeName:                     "node-1",
					Affinity:                     &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}},
					Priority:                     ptr(int32(5)),
					DNSConfig:                    &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}},
					RuntimeClassName:             ptr("gvisor"),
					EnableServiceLinks:           ptr(true),
					PreemptionPolicy:             ptr(corev1.PreemptNever),
					SetHostnameAsFQDN:            ptr(true),
					OS:                           &corev1.PodOS{Name: corev1.Linux},
					Resources:                    &corev1.ResourceRequirements{Limits: rl("cpu", "8")},
					SchedulingGroup:              &corev1.PodSchedulingGroup{PodGroupName: ptr("w")},
					Overhead:                     rl("cpu", "100m"),
					HostAliases:                  []corev1.HostAlias{{IP: "10.0.0.1"}},
					ReadinessGates:               []corev1.PodReadinessGate{{ConditionType: "class"}},
					TopologySpreadConstraints:    []corev1.TopologySpreadConstraint{{TopologyKey: "zone"}},
					SchedulingGates:              []corev1.PodSchedulingGate{{Name: "class"}},
					ResourceClaims:               []corev1.PodResourceClaim{{Name: "class"}},
				}),
				engine: pod(corev1.PodSpec{
					DNSPolicy:                 corev1.DNSNone,
					SchedulerName:             "engine-scheduler",
					RuntimeClassName:          ptr("kata"),
					Overhead:                  rl("memory", "1Gi"),
					NodeSelector:              map[string]string{"kubernetes.io/os": "windows"},
					HostAliases:               []corev1.HostAlias{{IP: "10.0.0.2"}},
					ReadinessGates:            []corev1.PodReadinessGate{{ConditionType: "engine"}},
					TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{TopologyKey: "host"}},
					SchedulingGates:           []corev1.PodSchedulingGate{{Name: "engine"}},
					ResourceClaims:            []corev1.PodResourceClaim{{Name: "engine"}},
				}),
				rules: EngineRules,
			},
			want: func() corev1.PodTemplateSpec {
				return corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					DNSPolicy:                    corev1.DNSNone,
					SchedulerName:                "engine-scheduler",
					NodeSelector:                 map[string]string{"kubernetes.io/os": "windows"},
					DeprecatedServiceAccount:     "old-sa",
					AutomountServiceAccountToken: ptr(false),
					NodeName:                     "node-1",
					Affinity:                     &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}},
					Priority:                     ptr(int32(5)),
					DNSConfig:                    &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}},
					RuntimeClassName:             ptr("kata"),
					EnableServiceLinks:           ptr(true),
					PreemptionPolicy:             ptr(corev1.PreemptNever),
					SetHostnameAsFQDN:            ptr(true),
					OS:                           &corev1.PodOS{Name: corev1.Linux},
					Resources:                    &corev1.ResourceRequirements{Limits: rl("cpu", "8")},
					SchedulingGroup:              &corev1.PodSchedulingGroup{PodGroupName: ptr("w")},
					Overhead:                     rl("memory", "1Gi"),
					Tolerations:                  []corev1.Toleration{{Key: "operator"}},
					HostAliases:                  []corev1.HostAlias{{IP: "10.0.0.1"}, {IP: "10.0.0.2"}},
					ReadinessGates:               []corev1.PodReadinessGate{{ConditionType: "class"}, {ConditionType: "engine"}},
					TopologySpreadConstraints:    []corev1.TopologySpreadConstraint{{TopologyKey: "zone"}, {TopologyKey: "host"}},
					SchedulingGates:              []corev1.PodSchedulingGate{{Name: "class"}, {Name: "engine"}},
					ResourceClaims:               []corev1.PodResourceClaim{{Name: "class"}, {Name: "engine"}},
				}}
			},
		},
		"GatewayPrimaryOnlyAllowedFields": {
			reason: "Under GatewayRules only image, pull policy and resources reach the envoy container; the wake-agent name stays the operator's.",
			args: args{
				operator: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"firebolt.io/config-hash": "abc"}},
					Spec: corev1.PodSpec{
						Containers: []corev1.Container{
							{Name: GatewayContainer, Image: "envoyproxy/envoy:v1.37.2", Args: []string{"-c", "/etc/envoy/envoy.yaml"}},
							{Name: WakeAgentContainer, Image: "agent"},
						},
						Volumes: []corev1.Volume{emptyDir(VolumeGatewayTmp)},
					},
				},
				class: &corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"firebolt.io/config-hash": "user", "a": "b"}},
					Spec: corev1.PodSpec{
						Volumes: []corev1.Volume{emptyDir(VolumeGatewayTmp), emptyDir("stats")},
						Containers: []corev1.Container{
							{
								Name: GatewayContainer, Image: "envoyproxy/envoy:v1.38.0", ImagePullPolicy: corev1.PullIfNotPresent,
								Resources:       corev1.ResourceRequirements{Requests: rl("memory", "512Mi")},
								Env:             []corev1.EnvVar{{Name: "X", Value: "y"}},
								EnvFrom:         []corev1.EnvFromSource{{Prefix: "P"}},
								VolumeMounts:    []corev1.VolumeMount{mount("stats", "/s")},
								SecurityContext: &corev1.SecurityContext{Privileged: ptr(true)},
								Lifecycle:       &corev1.Lifecycle{},
								WorkingDir:      "/w",
								VolumeDevices:   []corev1.VolumeDevice{{Name: "d"}},
								ResizePolicy:    []corev1.ContainerResizePolicy{{ResourceName: "cpu"}},

								TerminationMessagePath: "/m",
							},
							{Name: WakeAgentContainer, Image: "evil"},
							{Name: "exporter", Image: "exporter"},
						},
					},
				},
				rules: GatewayRules,
			},
			want: func() corev1.PodTemplateSpec {
				return corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"firebolt.io/config-hash": "abc", "a": "b"}},
					Spec: corev1.PodSpec{
						Containers: []corev1.Container{
							{
								Name: GatewayContainer, Image: "envoyproxy/envoy:v1.38.0", ImagePullPolicy: corev1.PullIfNotPresent,
								Args:      []string{"-c", "/etc/envoy/envoy.yaml"},
								Resources: corev1.ResourceRequirements{Requests: rl("memory", "512Mi")},
							},
							{Name: WakeAgentContainer, Image: "agent"},
							{Name: "exporter", Image: "exporter"},
						},
						Volumes: []corev1.Volume{emptyDir(VolumeGatewayTmp), emptyDir("stats")},
					},
				}
			},
		},
		"PrimaryMissingFromOperator": {
			reason: "When the operator layer has no primary container, a user primary lands first, ahead of sidecars.",
			args: args{
				operator: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "op-sidecar"}}}},
				class: pod(corev1.PodSpec{Containers: []corev1.Container{
					{Name: "log"}, {Name: EngineContainer, Image: "my/engine", Command: []string{"ignored"}},
				}}),
				rules: EngineRules,
			},
			want: func() corev1.PodTemplateSpec {
				return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
					{Name: EngineContainer, Image: "my/engine"}, {Name: "op-sidecar"}, {Name: "log"},
				}}}
			},
		},
		"FirstPrimaryOfALayerCounts": {
			reason: "A duplicate primary is a Validate error; the merge reads only the first.",
			args: args{
				operator: operatorEngine(),
				engine: pod(corev1.PodSpec{Containers: []corev1.Container{
					{Name: EngineContainer, Image: "first"}, {Name: EngineContainer, Image: "second", WorkingDir: "/w"},
				}}),
				rules: EngineRules,
			},
			want: func() corev1.PodTemplateSpec {
				w := operatorEngine()
				w.Spec.Containers[0].Image = "first"
				return w
			},
		},
		"EmptyLayers": {
			reason: "Empty user templates change nothing, and absent maps stay absent.",
			args: args{
				operator: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: EngineContainer}}}},
				class:    &corev1.PodTemplateSpec{},
				engine:   &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{}}},
				rules:    EngineRules,
			},
			want: func() corev1.PodTemplateSpec {
				return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: EngineContainer}}}}
			},
		},
		"PrimaryFieldsEngineOverClass": {
			reason: "Scalar primary fields: engine over class over operator; list fields concatenate class then engine.",
			args: args{
				operator: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: EngineContainer, Image: "op", ImagePullPolicy: corev1.PullNever, WorkingDir: "/op",
					Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 1}}},
				}}}},
				class: pod(corev1.PodSpec{Containers: []corev1.Container{{
					Name: EngineContainer, WorkingDir: "/class", TerminationMessagePath: "/class-msg",
					TerminationMessagePolicy: corev1.TerminationMessageReadFile,
					Lifecycle:                &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 2}}},
					VolumeDevices:            []corev1.VolumeDevice{{Name: "class-dev", DevicePath: "/dev/a"}},
					ResizePolicy:             []corev1.ContainerResizePolicy{{ResourceName: "cpu", RestartPolicy: corev1.NotRequired}},
					EnvFrom:                  []corev1.EnvFromSource{{Prefix: "CLASS_"}},
				}}}),
				engine: pod(corev1.PodSpec{Containers: []corev1.Container{{
					Name: EngineContainer, Image: "eng", TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
					VolumeDevices: []corev1.VolumeDevice{{Name: "engine-dev", DevicePath: "/dev/b"}},
					ResizePolicy:  []corev1.ContainerResizePolicy{{ResourceName: "memory", RestartPolicy: corev1.RestartContainer}},
					EnvFrom:       []corev1.EnvFromSource{{Prefix: "ENGINE_"}},
				}}}),
				rules: EngineRules,
			},
			want: func() corev1.PodTemplateSpec {
				return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: EngineContainer, Image: "eng", ImagePullPolicy: corev1.PullNever, WorkingDir: "/class",
					TerminationMessagePath:   "/class-msg",
					TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
					Lifecycle:                &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 2}}},
					VolumeDevices:            []corev1.VolumeDevice{{Name: "class-dev", DevicePath: "/dev/a"}, {Name: "engine-dev", DevicePath: "/dev/b"}},
					ResizePolicy: []corev1.ContainerResizePolicy{
						{ResourceName: "cpu", RestartPolicy: corev1.NotRequired},
						{ResourceName: "memory", RestartPolicy: corev1.RestartContainer},
					},
					EnvFrom: []corev1.EnvFromSource{{Prefix: "CLASS_"}, {Prefix: "ENGINE_"}},
				}}}}
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			operator := *tc.args.operator.DeepCopy()
			class := tc.args.class.DeepCopy()
			engine := tc.args.engine.DeepCopy()

			got := Merge(tc.args.operator, tc.args.class, tc.args.engine, tc.args.rules)
			if diff := cmp.Diff(tc.want(), got); diff != "" {
				t.Errorf("%s\nMerge(...): -want, +got:\n%s", tc.reason, diff)
			}

			// Overwrite everything in the result: the inputs must not move,
			// or the result shares memory with them.
			poison(reflect.ValueOf(&got).Elem())
			if diff := cmp.Diff(operator, tc.args.operator); diff != "" {
				t.Errorf("Merge(...) changed or aliased the operator template: -before, +after:\n%s", diff)
			}
			if diff := cmp.Diff(class, tc.args.class); diff != "" {
				t.Errorf("Merge(...) changed or aliased the class template: -before, +after:\n%s", diff)
			}
			if diff := cmp.Diff(engine, tc.args.engine); diff != "" {
				t.Errorf("Merge(...) changed or aliased the engine template: -before, +after:\n%s", diff)
			}
		})
	}
}

// TestMergeDeterministic renders the same inputs repeatedly; map iteration
// order must never show in the result.
func TestMergeDeterministic(t *testing.T) {
	want := Merge(operatorEngine(), classTemplate(), engineTemplate(), EngineRules)
	for i := 0; i < 50; i++ {
		got := Merge(operatorEngine(), classTemplate(), engineTemplate(), EngineRules)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("Merge(...) run %d differs: -first, +this:\n%s", i, diff)
		}
	}
}
