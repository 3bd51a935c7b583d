package phasedsts_test

import (
	"testing"

	"github.com/firebolt-db/firebolt-crossplane/fn/composite/compositetest"
)

func TestMain(m *testing.M) { compositetest.Main(m) }
