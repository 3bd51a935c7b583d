package harness

import (
	"context"
	"fmt"
	"net"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ServiceAccountMount is where a container reads its API credential (the
// token, the CA and the namespace), as client-go's in-cluster config does.
const ServiceAccountMount = "/var/run/secrets/kubernetes.io/serviceaccount"

// StartWakeAgent runs the function binary's wake agent as container
// `container` of the gateway pod `pod` runs it: with the token the kubelet
// would project into that container (a TokenRequest for the pod's
// ServiceAccount, bound to the pod, with the projection's lifetime and
// audiences), so the Role the instance composes is all it may do. It fails
// when the container mounts no projected token at ServiceAccountMount. The
// /hold listener is on holdAddress and metrics on metricsAddress. The
// agent is the scenario's own: it is not one of the processes every
// scenario shares, so stopping it (the caller's job) never fails another
// scenario's checks.
func (c *Cluster) StartWakeAgent(ctx context.Context, pod *corev1.Pod, container, holdAddress, metricsAddress string) (*Process, error) {
	proj, err := projectedToken(pod, container)
	if err != nil {
		return nil, err
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		Audiences:         nil,
		ExpirationSeconds: proj.ExpirationSeconds,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
	}}
	if proj.Audience != "" {
		req.Spec.Audiences = []string{proj.Audience}
	}
	tr, err := c.Kube.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, pod.Spec.ServiceAccountName, req, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("cannot request the token projected into %s/%s container %s: %w", pod.Namespace, pod.Name, container, err)
	}
	kubeconfig := c.path("wake-agent-" + pod.Namespace + "-kubeconfig")
	if err := writeKubeconfig(kubeconfig, apiServerURL, c.pki.CA.Cert, pod.Namespace+"-"+pod.Spec.ServiceAccountName, &clientcmdapi.AuthInfo{Token: tr.Status.Token}); err != nil {
		return nil, err
	}
	p := &Process{
		Name: "wake-agent-" + pod.Namespace,
		Path: c.Tools.Function,
		Args: []string{"wake-agent", "--address=" + holdAddress, "--metrics-address=" + metricsAddress, flagDebug},
		Env:  []string{"KUBECONFIG=" + kubeconfig, "POD_NAMESPACE=" + pod.Namespace},
		Log:  c.path("logs", "wake-agent-"+pod.Namespace+".log"),
	}
	if err := p.Start(); err != nil {
		return nil, err
	}
	err = Wait(ctx, 30*time.Second, "the wake agent listening on "+holdAddress, func(ctx context.Context) (bool, string, error) {
		if ok, err := p.Running(); !ok {
			return false, "", err
		}
		d := net.Dialer{Timeout: time.Second}
		conn, err := d.DialContext(ctx, "tcp", holdAddress)
		if err != nil {
			return false, SeenErr(err), nil
		}
		_ = conn.Close()
		return true, "", nil
	})
	if err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}

// projectedToken is the service account token projection container
// `container` of pod mounts at ServiceAccountMount.
func projectedToken(pod *corev1.Pod, container string) (*corev1.ServiceAccountTokenProjection, error) {
	for _, c := range pod.Spec.Containers {
		if c.Name != container {
			continue
		}
		for _, m := range c.VolumeMounts {
			if m.MountPath != ServiceAccountMount {
				continue
			}
			for _, v := range pod.Spec.Volumes {
				if v.Name != m.Name || v.Projected == nil {
					continue
				}
				for _, s := range v.Projected.Sources {
					if s.ServiceAccountToken != nil {
						return s.ServiceAccountToken, nil
					}
				}
			}
			return nil, fmt.Errorf("pod %s/%s container %s mounts volume %s at %s, which projects no service account token", pod.Namespace, pod.Name, container, m.Name, ServiceAccountMount)
		}
		return nil, fmt.Errorf("pod %s/%s container %s mounts nothing at %s", pod.Namespace, pod.Name, container, ServiceAccountMount)
	}
	return nil, fmt.Errorf("pod %s/%s has no container %s", pod.Namespace, pod.Name, container)
}
