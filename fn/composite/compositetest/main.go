// Package compositetest holds what the composers' tests share.
package compositetest

import (
	"fmt"
	"os"
	"testing"

	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
)

// Main runs a test binary with every use of a shared desired object
// checked (composite.SharedStruct): a test or a code path that writes to a
// response's desired objects fails instead of corrupting later answers.
// Each of after then runs once the tests pass, to check what they left:
// it returns what is wrong, or "". Call Main from TestMain.
func Main(m *testing.M, after ...func() string) {
	composite.VerifySharedStructs(true)
	code := m.Run()
	for _, check := range after {
		if code != 0 {
			break
		}
		if msg := check(); msg != "" {
			fmt.Fprintln(os.Stderr, "FAIL: after the tests:", msg)
			code = 1
		}
	}
	os.Exit(code)
}
