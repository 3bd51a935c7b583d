package fn

import (
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
)

// callLogger is the per-call logger: the tag, kind and name every line of a
// call carries are kept as key/value pairs and passed with each line,
// instead of deriving a logger with WithValues. Deriving one makes zap copy
// its core and encode the fields on every call, though a stable engine's
// call logs nothing; passing them per line writes the same fields in the
// same order, and only when a line is written.
type callLogger struct {
	base logging.Logger
	kv   []any
}

func newCallLogger(base logging.Logger, keysAndValues ...any) callLogger {
	return callLogger{base: base, kv: keysAndValues}
}

func (l callLogger) Info(msg string, keysAndValues ...any) {
	l.base.Info(msg, l.with(keysAndValues)...)
}

func (l callLogger) Debug(msg string, keysAndValues ...any) {
	l.base.Debug(msg, l.with(keysAndValues)...)
}

func (l callLogger) WithValues(keysAndValues ...any) logging.Logger {
	return callLogger{base: l.base, kv: l.with(keysAndValues)}
}

// with is the call's pairs followed by keysAndValues, in a new slice, so
// loggers derived from one another never share a backing array.
func (l callLogger) with(keysAndValues []any) []any {
	if len(keysAndValues) == 0 {
		return l.kv
	}
	out := make([]any, 0, len(l.kv)+len(keysAndValues))
	return append(append(out, l.kv...), keysAndValues...)
}
