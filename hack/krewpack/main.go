// Command krewpack packs the kubectl-firebolt binaries hack/xpkg.sh
// cross-compiled into one reproducible .tar.gz per platform and writes the
// krew plugin manifest naming each archive's URL and SHA-256.
//
//	krewpack -version v0.1.0 -url https://…/download/v0.1.0 -bins DIR -out OUT [-license LICENSE] [-platforms "linux/amd64 …"]
//	krewpack -list
//
// DIR holds <os>-<arch>/kubectl-firebolt for every platform packed. -list
// prints the platforms the plugin ships for, the list hack/xpkg.sh builds.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

func main() {
	var o Options
	flag.StringVar(&o.Version, "version", "", "plugin version, vMAJOR.MINOR.PATCH (the Makefile's VERSION)")
	flag.StringVar(&o.URL, "url", "", "URL the archives are downloaded from, without the file name")
	flag.StringVar(&o.Bins, "bins", "", "directory of <os>-<arch>/kubectl-firebolt")
	flag.StringVar(&o.Out, "out", "", "directory the archives and firebolt.yaml are written to")
	flag.StringVar(&o.License, "license", "", "LICENSE file packed beside the binary, if any")
	only := flag.String("platforms", "", "space-separated GOOS/GOARCH: pack only these of the shipped platforms (default: all)")
	list := flag.Bool("list", false, "print the shipped platforms, space-separated GOOS/GOARCH, and exit")
	flag.Parse()
	if *list {
		fmt.Println(platformList(Platforms))
		return
	}
	o.Only = strings.Fields(*only)
	files, err := Pack(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "krewpack:", err)
		os.Exit(1)
	}
	for _, f := range files {
		fmt.Println(f)
	}
}
