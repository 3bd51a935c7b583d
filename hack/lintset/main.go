// Command lintset writes the linter registry of the golangci-lint that
// hack/tools.sh builds: golangci-lint's own registry (pkg/lint/lintersdb's
// builder_linter.go) with only the linters .golangci.yml names kept, so the
// build compiles those linters and not the other hundred. golangci-lint
// still checks the configuration against the registry it was built with:
// a linter enabled later and not yet built is refused by name, and
// hack/tools.sh keys the binary on .golangci.yml, so the next build has it.
//
//	lintset -config .golangci.yml -in builder_linter.go -out FILE
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	var cfg, in, out string
	flag.StringVar(&cfg, "config", "", "golangci-lint configuration (.golangci.yml)")
	flag.StringVar(&in, "in", "", "golangci-lint's pkg/lint/lintersdb/builder_linter.go")
	flag.StringVar(&out, "out", "", "file the cut registry is written to")
	flag.Parse()
	if err := run(cfg, in, out); err != nil {
		fmt.Fprintln(os.Stderr, "lintset:", err)
		os.Exit(1)
	}
}

func run(cfgPath, in, out string) error {
	if cfgPath == "" || in == "" || out == "" {
		return fmt.Errorf("-config, -in and -out are all required")
	}
	cfg, err := os.ReadFile(cfgPath)
	if err != nil {
		return fmt.Errorf("cannot read the configuration: %w", err)
	}
	want, err := Wanted(cfg)
	if err != nil {
		return fmt.Errorf("%s: %w", cfgPath, err)
	}
	src, err := os.ReadFile(in)
	if err != nil {
		return fmt.Errorf("cannot read the registry: %w", err)
	}
	cut, err := Cut(src, want)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	return os.WriteFile(out, cut, 0o644)
}
