package instance

import (
	"crypto/rand"
	"encoding/hex"

	"github.com/crossplane/function-sdk-go/errors"
)

// A PasswordGenerator mints a candidate password for the internal
// PostgreSQL. The candidate is only used when the credentials Secret does not
// exist yet; afterwards the Secret Crossplane observes is reproduced.
type PasswordGenerator interface {
	Password() (string, error)
}

// PasswordGeneratorFn adapts a function to a PasswordGenerator.
type PasswordGeneratorFn func() (string, error)

// Password calls fn.
func (fn PasswordGeneratorFn) Password() (string, error) { return fn() }

// passwordBytes gives 24 hex characters, as the original operator's.
const passwordBytes = 12

// RandomPasswords draws passwords from crypto/rand.
type RandomPasswords struct{}

// Password returns 24 random hex characters.
func (RandomPasswords) Password() (string, error) {
	b := make([]byte, passwordBytes)
	if _, err := rand.Read(b); err != nil {
		return "", errors.Wrap(err, "cannot read random bytes")
	}
	return hex.EncodeToString(b), nil
}
