package wakeagent

import (
	"context"
	"time"

	"github.com/firebolt-db/firebolt-crossplane/internal/wakestamp"
)

// Stamper asks for an engine to be woken.
type Stamper interface {
	Stamp(ctx context.Context, engine string, at time.Time) error
}

// ClaimStamper stamps the wake annotation on the engine's claim: the
// stamp `kubectl firebolt engine wake` writes too (package wakestamp).
type ClaimStamper = wakestamp.ClaimStamper
