package harness

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossplane/function-sdk-go/errors"
)

// crossplaneSA is the identity Crossplane runs as. It holds exactly what
// Crossplane's Helm chart grants it: the chart's system ClusterRole, plus
// whatever ClusterRoles carry rbac.crossplane.io/aggregate-to-crossplane,
// which is how deploy/rbac.yaml lets it manage the kinds the function
// composes, and how Crossplane's RBAC manager lets it manage each XRD's
// kinds. An RBAC gap in deploy/ then fails the tests as it would fail a
// cluster, instead of hiding behind admin rights.
const crossplaneSA = "crossplane"

var helmDirective = regexp.MustCompile(`^\s*\{\{-.*\}\}\s*$`)

// crossplaneChartRoles renders the chart's clusterrole.yaml with the RBAC
// manager enabled: the "crossplane" ClusterRole aggregating every
// aggregate-to-crossplane role, and the chart's own such role.
func (c *Cluster) crossplaneChartRoles() (string, error) {
	path := filepath.Join(c.Tools.CrossplaneModule, "cluster", "charts", "crossplane", "templates", "clusterrole.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		return "", errors.Wrap(err, "cannot read Crossplane's chart")
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if helmDirective.MatchString(l) {
			// {{- if .Values.rbacManager.deploy }}, {{- end }}, {{- include ... }}
			continue
		}
		out = append(out, strings.ReplaceAll(l, `{{ template "crossplane.name" . }}`, "crossplane"))
	}
	s := strings.Join(out, "\n")
	if strings.Contains(s, "{{") {
		return "", errors.Errorf("%s has template directives the harness does not render", path)
	}
	p := c.path("crossplane-clusterroles.yaml")
	return p, errors.Wrap(os.WriteFile(p, []byte(s), 0o644), "cannot write Crossplane's ClusterRoles")
}

// crossplaneIdentity creates Crossplane's service account with the chart's
// RBAC, starts the RBAC manager, and writes a kubeconfig for the account.
func (c *Cluster) crossplaneIdentity(ctx context.Context) (string, error) {
	roles, err := c.crossplaneChartRoles()
	if err != nil {
		return "", err
	}
	if err := c.ApplyFiles(ctx, "", roles); err != nil {
		return "", errors.Wrap(err, "cannot apply Crossplane's ClusterRoles")
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: crossplaneSA, Namespace: CrossplaneNamespace}}
	if _, err := c.Kube.CoreV1().ServiceAccounts(CrossplaneNamespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !kerrors.IsAlreadyExists(err) {
		return "", errors.Wrap(err, "cannot create Crossplane's service account")
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "crossplane"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "crossplane"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: crossplaneSA, Namespace: CrossplaneNamespace}},
	}
	if _, err := c.Kube.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil && !kerrors.IsAlreadyExists(err) {
		return "", errors.Wrap(err, "cannot bind Crossplane's ClusterRole")
	}
	// The RBAC manager grants Crossplane each XRD's kinds. In a cluster it
	// runs with its own, broader role; admin stands in for that here.
	if err := c.procs.start("crossplane-rbac-manager", c.Tools.CrossplaneCore, []string{"rbac", "start", flagDebug}, "KUBECONFIG="+c.Kubeconfig); err != nil {
		return "", err
	}
	kubeconfig := c.path("crossplane-kubeconfig")
	return kubeconfig, c.serviceAccountKubeconfig(ctx, CrossplaneNamespace, crossplaneSA, kubeconfig)
}
