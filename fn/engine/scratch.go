package engine

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
)

// maxScratchBytes bounds the buffers kept for reuse: a rare huge document
// is encoded into a buffer that is then dropped, not pinned.
const maxScratchBytes = 256 << 10

var scratch = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// marshalScratch encodes v as json.Marshal does into a reused buffer, for
// JSON that is decoded again at once and never kept: every call's spec and
// status would otherwise allocate their whole encoding. The bytes are
// valid until done is called.
func marshalScratch(v any) ([]byte, func(), error) {
	buf := scratch.Get().(*bytes.Buffer)
	buf.Reset()
	done := func() {
		if buf.Cap() <= maxScratchBytes {
			scratch.Put(buf)
		}
	}
	// Unstructured content (a spec, a status) is written directly, the
	// same bytes without reflection.
	if b, ok := composite.AppendJSON(buf.AvailableBuffer(), v); ok {
		buf.Write(append(b, '\n'))
		return buf.Bytes(), done, nil
	}
	// Encode escapes HTML and sorts map keys as Marshal does; it only adds
	// a newline, which a decoder skips.
	if err := json.NewEncoder(buf).Encode(v); err != nil {
		done()
		return nil, func() {}, err
	}
	return buf.Bytes(), done, nil
}
