// Command etcd is etcd v3.6.5 built from the Go module proxy. The etcd root
// module carries replace directives, so `go install` refuses it; its server
// module is an ordinary dependency, and etcdmain is the real etcd main.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
