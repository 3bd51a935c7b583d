package promcheck

import (
	"context"
	"time"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// A Runner runs a check's query at a time; *Client is the real one.
type Runner interface {
	Run(ctx context.Context, q v1alpha1.PrometheusQuery, creds Credentials, at time.Time) Outcome
}

// Secret is the Secret a query's secretRef names, as Crossplane sent it.
type Secret struct {
	Found bool
	Data  map[string][]byte
}

// RunWithSecret runs q with r and the credentials of secret, which field
// (the claim's path to secretRef) names in namespace. A missing runner, or
// a Secret that is missing or holds bad credentials, fails the check as an
// unreachable server does: the rollout holds and the status says why.
func RunWithSecret(ctx context.Context, r Runner, q v1alpha1.PrometheusQuery, field, namespace string, secret Secret, at time.Time) Outcome {
	if r == nil {
		return Outcome{Cause: CauseConfig, Message: "the function has no Prometheus client"}
	}
	creds := Credentials{}
	if ref := q.SecretRef; ref != "" {
		if !secret.Found {
			return Outcome{Cause: CauseConfig, Message: "Secret " + ref + " named by " + field + " was not found in namespace " + namespace}
		}
		var err error
		if creds, err = CredentialsFromSecret(secret.Data); err != nil {
			return Outcome{Cause: CauseConfig, Message: "Secret " + ref + ": " + err.Error()}
		}
	}
	return r.Run(ctx, q, creds, at)
}
