// Package compositetest holds what the composers' tests share.
package compositetest

import (
	"os"
	"testing"

	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
)

// Main runs a test binary with every use of a shared desired object
// checked (composite.SharedStruct): a test or a code path that writes to a
// response's desired objects fails instead of corrupting later answers.
// Call it from TestMain.
func Main(m *testing.M) {
	composite.VerifySharedStructs(true)
	os.Exit(m.Run())
}
