package kubectlfirebolt

import (
	"context"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/crossplane/function-sdk-go/errors"
)

// operatorSelector finds the original operator's Deployment: the label its
// Helm chart sets.
const operatorSelector = "app.kubernetes.io/name=firebolt-operator"

// splitOperator reads --operator NAMESPACE/NAME.
func splitOperator(s string) (string, string, error) {
	ns, name, ok := strings.Cut(s, "/")
	if !ok || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
		return "", "", errors.Errorf("--operator %q: must be NAMESPACE/NAME of a Deployment", s)
	}
	return ns, name, nil
}

// operatorDeployments finds the original operator's Deployments.
func (m *migration) operatorDeployments() ([]appsv1.Deployment, error) {
	if m.cmd.Operator != "" {
		ns, name, _ := splitOperator(m.cmd.Operator)
		d, err := m.c.Core.GetDeployment(m.ctx, ns, name)
		if err != nil {
			return nil, errors.Wrapf(err, "cannot get deployment %s (--operator)", m.cmd.Operator)
		}
		return []appsv1.Deployment{*d}, nil
	}
	l, err := m.c.Core.ListDeployments(m.ctx, metav1.NamespaceAll, metav1.ListOptions{LabelSelector: operatorSelector, Limit: listPageSize})
	if err != nil {
		return nil, errors.Wrapf(err, "cannot list deployments labelled %s", operatorSelector)
	}
	return l.Items, nil
}

// stopOperator is step 2: the original's Deployments scaled to zero, and
// their pods gone, so nothing reconciles what the next steps change.
func (m *migration) stopOperator() error {
	if m.cmd.OperatorStopped {
		m.printf("  --operator-stopped: not looking for it\n")
		return nil
	}
	if len(m.live) == 0 {
		m.printf("  the original serves nothing in %s any more: nothing to stop\n", m.scopeName())
		return nil
	}
	ds, err := m.operatorDeployments()
	if err != nil {
		return err
	}
	if len(ds) == 0 {
		return errors.Errorf("no deployment labelled %s in any namespace: name it with --operator NAMESPACE/NAME, "+
			"or scale the original operator to 0 yourself and run again with --operator-stopped", operatorSelector)
	}
	for _, d := range ds {
		if err := m.scaleToZero(d); err != nil {
			return err
		}
	}
	return nil
}

// scaleToZero scales d to 0 replicas and waits until its pods are gone.
func (m *migration) scaleToZero(d appsv1.Deployment) error {
	name := d.Namespace + "/" + d.Name
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 0 {
		was := int32(1)
		if d.Spec.Replicas != nil {
			was = *d.Spec.Replicas
		}
		m.would("scale deployment %s from %d to 0 replicas", name, was)
		if m.cmd.DryRun {
			return nil
		}
		patch := []byte(`{"spec":{"replicas":0}}`)
		if _, err := m.c.Core.PatchDeployment(m.ctx, d.Namespace, d.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager}); err != nil {
			return errors.Wrapf(err, "cannot scale deployment %s to 0", name)
		}
	}
	if m.cmd.DryRun {
		m.printf("  deployment %s is at 0 replicas already\n", name)
		return nil
	}
	err := waitUntil(m.ctx, m.cmd.Timeout, "the original operator's pods ("+name+") going", func(ctx context.Context) (bool, error) {
		cur, err := m.c.Core.GetDeployment(ctx, d.Namespace, d.Name)
		if kerrors.IsNotFound(err) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		terminating := cur.Status.TerminatingReplicas != nil && *cur.Status.TerminatingReplicas > 0
		return cur.Status.ObservedGeneration >= cur.Generation && cur.Status.Replicas == 0 && !terminating, nil
	})
	if err != nil {
		return err
	}
	m.printf("  deployment %s: 0 replicas, no pod left\n", name)
	return nil
}
