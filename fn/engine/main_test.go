package engine_test

import (
	"testing"

	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite/compositetest"
	"github.com/firebolt-db/firebolt-crossplane/fn/engine"
)

// TestMain also uses every shared object the memos still hold once the
// tests pass: one written to after its last use fails them too.
func TestMain(m *testing.M) { compositetest.Main(m, engine.CheckSharedStructs) }

// unverified turns the check off for a benchmark, which measures what
// production runs.
func unverified(b *testing.B) {
	composite.VerifySharedStructs(false)
	b.Cleanup(func() { composite.VerifySharedStructs(true) })
}
