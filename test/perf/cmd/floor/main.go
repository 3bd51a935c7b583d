// Command floor is the no-op function the function is measured against: a
// function-sdk-go function that answers every request with the response it
// was given, read once from a file, so a call costs only what every
// function pays (gRPC, request decoding, response.To, response encoding).
package main

import (
	"context"
	"os"

	"github.com/alecthomas/kong"
	"google.golang.org/protobuf/proto"

	"github.com/crossplane/function-sdk-go"
	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"
)

// maxResponseBytes bounds the canned response read at start.
const maxResponseBytes = 16 << 20

type cli struct {
	Address  string `default:"127.0.0.1:9443" help:"Address at which to listen for gRPC connections."`
	Response string `required:"" type:"existingfile" help:"The RunFunctionResponse (binary protobuf) to answer with."`
	// The function serves the SDK's gRPC metrics too; the floor pays for
	// the same interceptors.
	MetricsAddress string `default:"" help:"Address of the Prometheus metrics listener; empty disables it."`
}

type floor struct {
	fnv1.UnimplementedFunctionRunnerServiceServer
	canned *fnv1.RunFunctionResponse
}

// RunFunction answers with the canned desired state, conditions, results
// and requirements. They are shared between calls: encoding only reads
// them.
func (f *floor) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := response.To(req, f.canned.GetMeta().GetTtl().AsDuration())
	rsp.Desired = f.canned.GetDesired()
	rsp.Conditions = f.canned.GetConditions()
	rsp.Results = f.canned.GetResults()
	rsp.Requirements = f.canned.GetRequirements()
	return rsp, nil
}

func (c *cli) Run() error {
	fi, err := os.Stat(c.Response)
	if err != nil {
		return err
	}
	if fi.Size() > maxResponseBytes {
		return errors.Errorf("%s exceeds %d bytes", c.Response, maxResponseBytes)
	}
	b, err := os.ReadFile(c.Response)
	if err != nil {
		return err
	}
	canned := &fnv1.RunFunctionResponse{}
	if err := proto.Unmarshal(b, canned); err != nil {
		return errors.Wrapf(err, "cannot decode %s", c.Response)
	}
	return function.Serve(&floor{canned: canned},
		function.Listen("tcp", c.Address),
		function.Insecure(true),
		function.WithMetricsServer(c.MetricsAddress))
}

func main() {
	ctx := kong.Parse(&cli{}, kong.Description("A no-op composition function answering with a fixed response."))
	ctx.FatalIfErrorf(ctx.Run())
}
