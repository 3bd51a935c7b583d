// Command apidocs writes the pages of docs/ that are generated:
// api-reference.md from the XRDs in apis/definitions, and
// troubleshooting.md from the condition reasons catalogued in fn/reasons.
// hack/generate.sh runs it; a test fails while a committed page is stale.
//
//	go run ./hack/apidocs -xrds apis/definitions -out docs
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/crossplane/function-sdk-go/errors"
)

// Pages it writes, relative to -out.
const (
	ReferencePage       = "api-reference.md"
	TroubleshootingPage = "troubleshooting.md"
)

func main() {
	xrds := flag.String("xrds", "", "folder holding the XRDs (apis/definitions)")
	out := flag.String("out", "", "folder to write the pages into (docs)")
	flag.Parse()
	if *xrds == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: apidocs -xrds DIR -out DIR")
		os.Exit(2)
	}
	if err := run(*xrds, *out); err != nil {
		fmt.Fprintln(os.Stderr, "apidocs: "+err.Error())
		os.Exit(1)
	}
}

func run(xrdDir, outDir string) error {
	pages, err := Pages(xrdDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(outDir, 0o750); err != nil {
		return errors.Wrap(err, "cannot create the output folder")
	}
	for name, content := range pages {
		if err := os.WriteFile(filepath.Join(outDir, name), content, 0o644); err != nil {
			return errors.Wrapf(err, "cannot write %s", name)
		}
	}
	return nil
}

// Pages renders every generated page, by file name.
func Pages(xrdDir string) (map[string][]byte, error) {
	xrds, err := ReadXRDs(xrdDir)
	if err != nil {
		return nil, err
	}
	ref, err := Reference(xrds)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{
		ReferencePage:       ref,
		TroubleshootingPage: Troubleshooting(),
	}, nil
}
