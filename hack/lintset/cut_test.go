package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// registrySrc has the shape of golangci-lint's builder_linter.go: a
// placeholder replacer only some linters take, a standard-group linter,
// the builtin typecheck, and a versioned linter.
const registrySrc = `package lintersdb

import (
	"example.com/pkg/config"
	"example.com/pkg/golinters"
	"example.com/pkg/golinters/alpha"
	"example.com/pkg/golinters/beta"
	"example.com/pkg/golinters/errcheck"
	"example.com/pkg/golinters/wsl"
	"example.com/pkg/lint/linter"
)

type LinterBuilder struct{}

func (LinterBuilder) Build(cfg *config.Config) ([]*linter.Config, error) {
	replacer := config.NewPlaceholderReplacer(cfg)

	return []*linter.Config{
		// alpha takes the replacer.
		linter.NewConfig(alpha.New(&cfg.Alpha, replacer)).
			WithSince("v1.0.0"),

		linter.NewConfig(beta.New()).
			WithLoadForGoAnalysis(),

		linter.NewConfig(errcheck.New(&cfg.Errcheck)).
			WithGroups(config.GroupStandard).
			WithLoadForGoAnalysis(),

		linter.NewConfig(golinters.NewTypecheck()),

		linter.NewConfig(wsl.NewV5(&cfg.WSL)),
	}, nil
}
`

func TestCut(t *testing.T) {
	cases := map[string]struct {
		set     Set
		want    []string // the linter packages left, in order
		wantErr string
		has     []string // lines the output must hold
		hasNot  []string
	}{
		"StandardAndOne": {
			set:    Set{Packages: map[string]bool{"beta": true}, Standard: true},
			want:   []string{"beta", "errcheck", "golinters"},
			has:    []string{"_ = config.NewPlaceholderReplacer(cfg)"},
			hasNot: []string{`"example.com/pkg/golinters/alpha"`, `"example.com/pkg/golinters/wsl"`, "alpha takes the replacer"},
		},
		"ReplacerStillUsed": {
			set:  Set{Packages: map[string]bool{"alpha": true, "wsl": true}},
			want: []string{"alpha", "golinters", "wsl"},
			has:  []string{"replacer := config.NewPlaceholderReplacer(cfg)", `"example.com/pkg/golinters/alpha"`},
		},
		"NoneNamed": {
			set:  Set{Packages: map[string]bool{}},
			want: []string{"golinters"},
		},
		"Unknown": {
			set:     Set{Packages: map[string]bool{"beta": true, "gamma": true, "delta": true}},
			wantErr: "the configuration names linters this golangci-lint does not have: delta, gamma",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := Cut([]byte(registrySrc), tc.set)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("Cut(): error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Cut(): %v", err)
			}
			if diff := cmp.Diff(tc.want, kept(out)); diff != "" {
				t.Errorf("linters kept (-want +got):\n%s\n%s", diff, out)
			}
			for _, h := range tc.has {
				if !strings.Contains(string(out), h) {
					t.Errorf("output lacks %q:\n%s", h, out)
				}
			}
			for _, h := range tc.hasNot {
				if strings.Contains(string(out), h) {
					t.Errorf("output still holds %q:\n%s", h, out)
				}
			}
		})
	}
}

func TestCutRefusesOtherShapes(t *testing.T) {
	for name, src := range map[string]string{
		"NotGo":       "package lintersdb\nfunc (",
		"NoBuild":     "package lintersdb\nfunc Other() []int { return []int{1} }\n",
		"OtherEntry":  "package lintersdb\ntype B struct{}\nfunc (B) Build() ([]*int, error) { return []*int{nil}, nil }\n",
		"BareLinters": "package lintersdb\ntype B struct{}\nfunc (B) Build() ([]*int, error) { return []*int{linter.NewConfig(x)}, nil }\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Cut([]byte(src), Set{Packages: map[string]bool{}}); err == nil {
				t.Errorf("Cut() of %q succeeded, want an error", src)
			}
		})
	}
}

func TestWanted(t *testing.T) {
	cases := map[string]struct {
		cfg     string
		want    Set
		wantErr string
	}{
		"Standard": {
			cfg:  "version: \"2\"\nlinters:\n  default: standard\n  enable: [gosec, wsl_v5]\n  disable: [errcheck]\nformatters:\n  enable: [gci]\n",
			want: Set{Packages: map[string]bool{"gosec": true, "wsl": true, "errcheck": true, "gci": true}, Standard: true},
		},
		"DefaultIsStandard": {
			cfg:  "version: \"2\"\n",
			want: Set{Packages: map[string]bool{}, Standard: true},
		},
		"None": {
			cfg:  "linters:\n  default: none\n  enable: [revive]\n",
			want: Set{Packages: map[string]bool{"revive": true}},
		},
		"All": {
			cfg:     "linters:\n  default: all\n",
			wantErr: `linters.default: "all" enables linters the configuration does not name, which a cut build cannot know; use standard or none and name the rest under linters.enable`,
		},
		"NotYAML": {
			cfg:     "linters: [",
			wantErr: "cannot parse the configuration",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Wanted([]byte(tc.cfg))
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("Wanted(): error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Wanted(): %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Wanted() (-want +got):\n%s", diff)
			}
		})
	}
}

// kept lists the packages of the linters a cut registry holds, in order.
func kept(src []byte) []string {
	var pkgs []string
	for _, l := range strings.Split(string(src), "\n") {
		if _, rest, ok := strings.Cut(l, "linter.NewConfig("); ok {
			if pkg, _, ok := strings.Cut(rest, "."); ok {
				pkgs = append(pkgs, pkg)
			}
		}
	}
	return pkgs
}
