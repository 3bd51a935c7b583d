package promcheck

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCredentialsFromSecret shows which Secrets give which Authorization
// header, and that every refusal names the key and the rule, never the
// value.
func TestCredentialsFromSecret(t *testing.T) {
	long := strings.Repeat("k", MaxCredentialBytes+1)
	cases := map[string]struct {
		data     map[string]string
		wantAuth string
		wantErr  string
	}{
		"Token":               {data: map[string]string{KeyToken: "s3cret"}, wantAuth: "Bearer s3cret"},
		"TokenWithOtherKeys":  {data: map[string]string{KeyToken: "s3cret", "ca.crt": "..."}, wantAuth: "Bearer s3cret"},
		"Basic":               {data: map[string]string{KeyUsername: "admin", KeyPassword: "s3cret"}, wantAuth: "Basic YWRtaW46czNjcmV0"},
		"TokenAtLimit":        {data: map[string]string{KeyToken: long[1:]}, wantAuth: "Bearer " + long[1:]},
		"NonASCIIPassword":    {data: map[string]string{KeyUsername: "admin", KeyPassword: "pässwörd"}, wantAuth: "Basic YWRtaW46cMOkc3N3w7ZyZA=="},
		"TokenAndBasic":       {data: map[string]string{KeyToken: "s3cret", KeyUsername: "admin", KeyPassword: "s3cret"}, wantErr: "keys token and username/password are both set: set token for a bearer token, or username and password for basic authentication, not both"},
		"TokenAndUsername":    {data: map[string]string{KeyToken: "s3cret", KeyUsername: "admin"}, wantErr: "keys token and username/password are both set: set token for a bearer token, or username and password for basic authentication, not both"},
		"UsernameOnly":        {data: map[string]string{KeyUsername: "admin"}, wantErr: "key username is set but key password is not: basic authentication needs both"},
		"PasswordOnly":        {data: map[string]string{KeyPassword: "s3cret"}, wantErr: "key password is set but key username is not: basic authentication needs both"},
		"Nothing":             {data: map[string]string{"ca.crt": "..."}, wantErr: "neither key token nor keys username and password are set"},
		"EmptyToken":          {data: map[string]string{KeyToken: ""}, wantErr: "key token is empty"},
		"EmptyUsername":       {data: map[string]string{KeyUsername: "", KeyPassword: "s3cret"}, wantErr: "key username is empty"},
		"EmptyPassword":       {data: map[string]string{KeyUsername: "admin", KeyPassword: ""}, wantErr: "key password is empty"},
		"TokenTooLong":        {data: map[string]string{KeyToken: long}, wantErr: "key token is longer than 8192 bytes"},
		"PasswordTooLong":     {data: map[string]string{KeyUsername: "admin", KeyPassword: long}, wantErr: "key password is longer than 8192 bytes"},
		"TokenTrailingLF":     {data: map[string]string{KeyToken: "s3cret\n"}, wantErr: "key token contains a control character (such as a trailing newline), which an HTTP header cannot carry"},
		"TokenHeaderInjected": {data: map[string]string{KeyToken: "s3cret\r\nX-Evil: 1"}, wantErr: "key token contains a control character (such as a trailing newline), which an HTTP header cannot carry"},
		"PasswordWithNUL":     {data: map[string]string{KeyUsername: "admin", KeyPassword: "s3\x00cret"}, wantErr: "key password contains a control character (such as a trailing newline), which an HTTP header cannot carry"},
		"UsernameWithTab":     {data: map[string]string{KeyUsername: "ad\tmin", KeyPassword: "s3cret"}, wantErr: "key username contains a control character (such as a trailing newline), which an HTTP header cannot carry"},
		"TokenWithDEL":        {data: map[string]string{KeyToken: "s3cret\x7f"}, wantErr: "key token contains a control character (such as a trailing newline), which an HTTP header cannot carry"},
		"UsernameWithColon":   {data: map[string]string{KeyUsername: "ad:min", KeyPassword: "s3cret"}, wantErr: "key username contains a colon, which basic authentication cannot carry"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, err := CredentialsFromSecret(secretData(tc.data))
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Errorf("CredentialsFromSecret error: -want, +got:\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantAuth, c.authorization()); diff != "" {
				t.Errorf("Authorization: -want, +got:\n%s", diff)
			}
			for k, v := range tc.data {
				if k != "ca.crt" && len(v) > 1 && strings.Contains(gotErr, v) {
					t.Errorf("error %q quotes the value of key %s", gotErr, k)
				}
			}
		})
	}
}

// TestZeroCredentials shows the zero value sends nothing and has nothing to
// scrub.
func TestZeroCredentials(t *testing.T) {
	var c Credentials
	if got := c.authorization(); got != "" {
		t.Errorf("authorization() = %q, want none", got)
	}
	if got := c.secrets(); got != nil {
		t.Errorf("secrets() = %q, want none", got)
	}
	if got := c.String(); got != "Credentials{none}" {
		t.Errorf("String() = %q", got)
	}
}

// TestCredentialsNeverPrint prints credentials every way a log line or an
// error might: by every verb and flag, through a pointer, inside a struct's
// exported and unexported fields, a slice and a map, and as JSON. No value
// may appear.
func TestCredentialsNeverPrint(t *testing.T) {
	secrets := map[string]map[string]string{
		"Bearer": {KeyToken: "t0ken-VALUE"},
		"Basic":  {KeyUsername: "user-VALUE", KeyPassword: "pass-VALUE"},
	}
	for name, data := range secrets {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := mustCredentials(t, data)
			type holder struct {
				Exported   Credentials  `json:"exported"`
				unexported Credentials  `json:"-"`
				ptr        *Credentials `json:"-"`
			}
			h := holder{Exported: c, unexported: c, ptr: &c}
			var printed []string
			for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T %v"} {
				for _, arg := range []any{c, &c, h, &h, []Credentials{c}, map[string]Credentials{"k": c}} {
					printed = append(printed, fmt.Sprintf(verb, arg))
				}
			}
			printed = append(printed, fmt.Sprint(c), fmt.Sprintln(h), c.GoString())
			if b, err := json.Marshal(h); err == nil {
				printed = append(printed, string(b))
			}
			for _, p := range printed {
				for _, v := range data {
					if strings.Contains(p, v) {
						t.Errorf("printed %q, which holds a credential value", p)
					}
				}
			}
			// It still says what kind of credentials they are.
			if !strings.Contains(fmt.Sprintf("%v", c), redacted) {
				t.Errorf("%%v = %q, want it to show %s", fmt.Sprintf("%v", c), redacted)
			}
		})
	}
}
