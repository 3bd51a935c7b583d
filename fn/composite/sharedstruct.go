package composite

import (
	"bytes"
	"fmt"
	"sync/atomic"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// SharedStruct is a desired object in protobuf form, kept between calls and
// carried as it is by every response that returns it: a stable engine
// returns the same objects on every call, and a copy per response was a
// quarter of the call's CPU and half of its allocations.
//
// Sharing holds one rule: nothing writes to a response's desired objects
// once Write has put them there. The function returns the response to the
// SDK, whose gRPC server marshals it, which only reads (protobuf-go keeps
// its size cache with atomic writes, so concurrent marshals of one message
// are safe); a test that edits a response must edit a copy (AsMap,
// proto.Clone). With verification on (the composers' tests turn it on,
// VerifySharedStructs), every Struct call checks that the object still
// has the bytes it was made from, so code that breaks the rule fails the
// tests instead of corrupting later answers.
type SharedStruct struct {
	s *structpb.Struct
	// sum is the deterministic encoding of s when it was made or, when
	// verification was off then, when it was first used with it on.
	sum atomic.Pointer[[]byte]
}

var verifyShared atomic.Bool

// VerifySharedStructs turns the check of every SharedStruct use on or off.
// It costs an encoding of the object per use: for tests, never for
// production.
func VerifySharedStructs(on bool) { verifyShared.Store(on) }

// NewSharedStruct makes s shared; nil stays nil. s must not be written to
// afterwards.
func NewSharedStruct(s *structpb.Struct) *SharedStruct {
	if s == nil {
		return nil
	}
	t := &SharedStruct{s: s}
	if verifyShared.Load() {
		sum := encodeDeterministic(s)
		t.sum.Store(&sum)
	}
	return t
}

// Struct is the object for a response to carry, shared with every other
// response that carries it: to be read, never written. With verification
// on it panics when the object was written to since it was made.
func (t *SharedStruct) Struct() *structpb.Struct {
	if t == nil {
		return nil
	}
	if verifyShared.Load() {
		now := encodeDeterministic(t.s)
		if t.sum.CompareAndSwap(nil, &now) {
			return t.s
		}
		if sum := *t.sum.Load(); !bytes.Equal(now, sum) {
			panic(fmt.Sprintf("a shared desired object was written to after it was made (%d bytes, now %d): a response's desired objects are read-only", len(sum), len(now)))
		}
	}
	return t.s
}

func encodeDeterministic(s *structpb.Struct) []byte {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(s)
	if err != nil {
		// A Struct that cannot be encoded cannot be sent either; its
		// encoding error is what the check then compares.
		return []byte(err.Error())
	}
	return b
}
