package promcheck

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"

	"github.com/crossplane/function-sdk-go/errors"
)

// The keys of a credentials Secret, as PrometheusQuery.SecretRef documents
// them.
const (
	KeyToken    = "token"
	KeyUsername = "username"
	KeyPassword = "password"
)

// MaxCredentialBytes bounds one credential value: far above any real token,
// far below what would make every request's header a burden.
const MaxCredentialBytes = 8 << 10

// redacted stands wherever a credential value would be printed.
const redacted = "[redacted]"

// Credentials authenticate a query: a bearer token, a username and password
// for basic authentication, or nothing (the zero value). They never print
// their values, whatever the verb.
//
// The values are behind a function on purpose: where fmt cannot call
// Format (a Credentials in another type's unexported field), it walks the
// fields by reflection, and a verb it rejects (%s of a pointer) prints what
// a pointer points to; a function it prints as an address only.
type Credentials struct {
	values func() credentialValues
}

type credentialValues struct {
	token, username, password string
}

func newCredentials(v credentialValues) Credentials {
	return Credentials{values: func() credentialValues { return v }}
}

// get returns the values; all empty for the zero Credentials.
func (c Credentials) get() credentialValues {
	if c.values == nil {
		return credentialValues{}
	}
	return c.values()
}

// CredentialsFromSecret reads a Secret's data: key token for a bearer token,
// or keys username and password for basic authentication. Other keys are
// ignored. Errors name keys and rules, never values.
func CredentialsFromSecret(data map[string][]byte) (Credentials, error) {
	token, hasToken := data[KeyToken]
	user, hasUser := data[KeyUsername]
	pass, hasPass := data[KeyPassword]
	switch {
	case hasToken && (hasUser || hasPass):
		return Credentials{}, errors.Errorf("keys %s and %s/%s are both set: set %s for a bearer token, or %s and %s for basic authentication, not both",
			KeyToken, KeyUsername, KeyPassword, KeyToken, KeyUsername, KeyPassword)
	case hasToken:
		if err := checkValue(KeyToken, token); err != nil {
			return Credentials{}, err
		}
		return newCredentials(credentialValues{token: string(token)}), nil
	case hasUser != hasPass:
		set, unset := KeyUsername, KeyPassword
		if hasPass {
			set, unset = KeyPassword, KeyUsername
		}
		return Credentials{}, errors.Errorf("key %s is set but key %s is not: basic authentication needs both", set, unset)
	case !hasUser:
		return Credentials{}, errors.Errorf("neither key %s nor keys %s and %s are set", KeyToken, KeyUsername, KeyPassword)
	}
	if err := checkValue(KeyUsername, user); err != nil {
		return Credentials{}, err
	}
	if err := checkValue(KeyPassword, pass); err != nil {
		return Credentials{}, err
	}
	if bytes.IndexByte(user, ':') >= 0 {
		// RFC 7617: the first colon ends the user-id, so the server would
		// read another username and password than the Secret's.
		return Credentials{}, errors.Errorf("key %s contains a colon, which basic authentication cannot carry", KeyUsername)
	}
	return newCredentials(credentialValues{username: string(user), password: string(pass)}), nil
}

// checkValue refuses what cannot go into an Authorization header as it is.
// A control character would let a value end the header and start another
// (header injection), and is most often a newline left by `echo` when the
// Secret was made; Go's transport would refuse it too, with a message
// that quotes the header.
func checkValue(key string, v []byte) error {
	if len(v) == 0 {
		return errors.Errorf("key %s is empty", key)
	}
	if len(v) > MaxCredentialBytes {
		return errors.Errorf("key %s is longer than %d bytes", key, MaxCredentialBytes)
	}
	for _, b := range v {
		if b < 0x20 || b == 0x7f {
			return errors.Errorf("key %s contains a control character (such as a trailing newline), which an HTTP header cannot carry", key)
		}
	}
	return nil
}

// authorization returns the Authorization header value, or "" for none.
func (c Credentials) authorization() string {
	v := c.get()
	switch {
	case v.token != "":
		return "Bearer " + v.token
	case v.username != "":
		return "Basic " + v.basic()
	default:
		return ""
	}
}

func (v credentialValues) basic() string {
	return base64.StdEncoding.EncodeToString([]byte(v.username + ":" + v.password))
}

// secrets lists every value a message must not contain. The username is
// one too: it is half of what basic authentication needs.
func (c Credentials) secrets() []string {
	v := c.get()
	var out []string
	for _, s := range []string{v.token, v.username, v.password} {
		if s != "" {
			out = append(out, s)
		}
	}
	if v.username != "" {
		// The encoded pair, as a server echoing the header would show it.
		out = append(out, v.basic())
	}
	return out
}

// String describes the credentials without their values.
func (c Credentials) String() string {
	v := c.get()
	switch {
	case v.token != "":
		return "Credentials{token: " + redacted + "}"
	case v.username != "":
		return "Credentials{username: " + redacted + ", password: " + redacted + "}"
	default:
		return "Credentials{none}"
	}
}

// GoString is String, for printers that ask for Go syntax.
func (c Credentials) GoString() string { return c.String() }

// Format prints String for every verb, so no flag (%+v, %#v, %x, %q) can
// reach the values.
func (c Credentials) Format(f fmt.State, _ rune) {
	_, _ = io.WriteString(f, c.String())
}
