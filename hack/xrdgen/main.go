// Command xrdgen turns the CRDs that controller-gen derives from
// apis/v1alpha1 into Crossplane CompositeResourceDefinitions: one
// LegacyCluster XRD per composite kind, offering the claim kind without the
// X, with the operator-owned pod-template rules compiled into CEL.
//
//	go run ./hack/xrdgen -crds <controller-gen output> -out apis/definitions
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/crossplane/function-sdk-go/errors"
)

func main() {
	crds := flag.String("crds", "", "folder holding controller-gen's CRDs for compute.firebolt.io")
	out := flag.String("out", "", "folder to write one XRD per composite kind into")
	flag.Parse()

	if *crds == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: xrdgen -crds DIR -out DIR")
		os.Exit(2)
	}
	if err := run(*crds, *out); err != nil {
		fmt.Fprintln(os.Stderr, "xrdgen: "+err.Error())
		os.Exit(1)
	}
}

func run(crdDir, outDir string) error {
	files, err := filepath.Glob(filepath.Join(crdDir, "*.yaml"))
	if err != nil {
		return errors.Wrap(err, "cannot list CRDs")
	}
	sort.Strings(files)
	if len(files) == 0 {
		return errors.Errorf("no CRDs in %s", crdDir)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return errors.Wrap(err, "cannot create output folder")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return errors.Wrapf(err, "cannot read %s", f)
		}
		crd := &extv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(b, crd); err != nil {
			return errors.Wrapf(err, "cannot parse %s", f)
		}
		xrd, err := ForCRD(crd)
		if err != nil {
			return errors.Wrapf(err, "cannot convert %s", f)
		}
		y, err := MarshalXRD(xrd)
		if err != nil {
			return errors.Wrapf(err, "cannot marshal the XRD for %s", crd.GetName())
		}
		name := filepath.Join(outDir, strings.ToLower(xrd.Spec.Names.Plural)+".yaml")
		if err := os.WriteFile(name, y, 0o644); err != nil {
			return errors.Wrapf(err, "cannot write %s", name)
		}
	}
	return nil
}
