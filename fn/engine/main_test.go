package engine_test

import (
	"testing"

	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite/compositetest"
)

func TestMain(m *testing.M) { compositetest.Main(m) }

// unverified turns the check off for a benchmark, which measures what
// production runs.
func unverified(b *testing.B) {
	composite.VerifySharedStructs(false)
	b.Cleanup(func() { composite.VerifySharedStructs(true) })
}
