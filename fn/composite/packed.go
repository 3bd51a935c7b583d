package composite

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"io"

	"github.com/crossplane/function-sdk-go/errors"
)

// Pack is how a recording of objects is kept in a status string: the
// bytes gzipped, then base64-encoded. The gzip header carries no name or
// time, so the same bytes always pack the same.
func Pack(b []byte) string {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// Unpack reverses Pack. A status is untrusted: s is measured before it is
// decoded, and decompression stops one byte past maxDecoded, so a gzip
// bomb allocates no more. what names the content in errors.
func Unpack(s, what string, maxEncoded, maxDecoded int) ([]byte, error) {
	if len(s) > maxEncoded {
		return nil, errors.Errorf("encoded %s exceeds %d bytes", what, maxEncoded)
	}
	z, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, errors.Wrap(err, "cannot decode base64")
	}
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, errors.Wrap(err, "cannot decompress")
	}
	b, err := io.ReadAll(io.LimitReader(zr, int64(maxDecoded)+1))
	if err != nil {
		return nil, errors.Wrap(err, "cannot decompress")
	}
	if len(b) > maxDecoded {
		return nil, errors.Errorf("decompressed %s exceeds %d bytes", what, maxDecoded)
	}
	return b, nil
}
