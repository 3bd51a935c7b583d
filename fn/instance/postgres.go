package instance

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// Keys of the PostgreSQL credentials Secret; an external Secret needs the
// first two.
const (
	KeyUsername = "username"
	KeyPassword = "password"
	KeyDatabase = "database"
)

// The internal PostgreSQL pod, as the original operator's (probes included:
// readiness TCP after 1 s every 5 s, liveness pg_isready after 5 s every
// 10 s): the image's
// postgres user (UID/GID 70 in the Alpine images), data under a
// subdirectory of the volume so initdb accepts the mount.
const (
	postgresContainer = "postgresql"
	postgresPortName  = "tcp-postgresql"
	postgresUID       = int64(70)
	postgresDataPath  = "/var/lib/postgresql/data"
	postgresVolume    = "data"
	postgresRunVolume = "run-postgresql"
	postgresTmpVolume = "tmp"
	postgresStorage   = "10Gi"
)

// postgresCredentials are the values of the internal credentials Secret.
type postgresCredentials struct {
	Username string
	Password string
	Database string
}

func renderPostgresSecret(n names, c postgresCredentials) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: objectMeta(n, n.postgresCredentials(), componentPostgres),
		Type:       corev1.SecretTypeOpaque,
		Data: map[string][]byte{
			KeyUsername: []byte(c.Username),
			KeyPassword: []byte(c.Password),
			KeyDatabase: []byte(c.Database),
		},
	}
}

func renderPostgresStatefulSet(n names, image string) *appsv1.StatefulSet {
	labels := n.labels(componentPostgres)
	secretEnv := func(name, key string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: n.postgresCredentials()},
			Key:                  key,
		}}}
	}
	uid := postgresUID
	return &appsv1.StatefulSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: objectMeta(n, n.postgres(), componentPostgres),
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To[int32](1),
			ServiceName: n.postgres(),
			Selector:    &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					AutomountServiceAccountToken: ptr.To(false),
					EnableServiceLinks:           ptr.To(false),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						RunAsUser:      &uid,
						RunAsGroup:     &uid,
						FSGroup:        &uid,
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:  postgresContainer,
						Image: image,
						Ports: []corev1.ContainerPort{{Name: postgresPortName, ContainerPort: PostgresPort, Protocol: corev1.ProtocolTCP}},
						Env: []corev1.EnvVar{
							secretEnv("POSTGRES_USER", KeyUsername),
							secretEnv("POSTGRES_PASSWORD", KeyPassword),
							secretEnv("POSTGRES_DB", KeyDatabase),
							{Name: "PGDATA", Value: postgresDataPath + "/pgdata"},
						},
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{
								corev1.ResourceCPU:    resource.MustParse("25m"),
								corev1.ResourceMemory: resource.MustParse("64Mi"),
							},
							Limits: corev1.ResourceList{
								corev1.ResourceCPU:    resource.MustParse("250m"),
								corev1.ResourceMemory: resource.MustParse("256Mi"),
							},
						},
						ReadinessProbe: &corev1.Probe{
							ProbeHandler:        corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(PostgresPort)}},
							InitialDelaySeconds: 1,
							PeriodSeconds:       5,
						},
						LivenessProbe: &corev1.Probe{
							ProbeHandler:        corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"pg_isready", "-U", postgresUser}}},
							InitialDelaySeconds: 5,
							PeriodSeconds:       10,
						},
						SecurityContext: hardenedContainer(uid),
						VolumeMounts: []corev1.VolumeMount{
							{Name: postgresVolume, MountPath: postgresDataPath},
							{Name: postgresRunVolume, MountPath: "/var/run/postgresql"},
							{Name: postgresTmpVolume, MountPath: "/tmp"},
						},
					}},
					Volumes: []corev1.Volume{
						emptyDirVolume(postgresRunVolume),
						emptyDirVolume(postgresTmpVolume),
					},
				},
			},
			// The volume goes with the instance, as the original's deletion
			// sweep takes its PVCs: a claim left behind would leak its
			// storage and hand its old data, initialised with the old
			// password, to an instance re-created under the same name.
			PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
				WhenScaled:  appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: postgresVolume, Labels: labels},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceStorage: resource.MustParse(postgresStorage),
					}},
				},
			}},
		},
	}
}

func renderPostgresService(n names) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: objectMeta(n, n.postgres(), componentPostgres),
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Selector:  n.labels(componentPostgres),
			Ports: []corev1.ServicePort{{
				Name:       postgresPortName,
				Port:       PostgresPort,
				TargetPort: intstr.FromInt32(PostgresPort),
				Protocol:   corev1.ProtocolTCP,
			}},
		},
	}
}

// objectMeta is the metadata of every composed object: the claim's
// namespace set explicitly (Crossplane does not default it for a cluster
// scoped composite) and the instance and component labels.
func objectMeta(n names, name string, c component) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: n.namespace, Labels: n.labels(c)}
}

// hardenedContainer is the container securityContext of every operator
// container: non-root, read-only root filesystem, no privilege escalation,
// no capabilities.
func hardenedContainer(uid int64) *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsNonRoot:             ptr.To(true),
		RunAsUser:                &uid,
		ReadOnlyRootFilesystem:   ptr.To(true),
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

func emptyDirVolume(name string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
}
