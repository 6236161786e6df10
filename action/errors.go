package action

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidParams matches (with errors.Is) every *ValidationError: the
// params were wrong, so the caller (a model, a script) should fix them rather
// than retry the device.
var ErrInvalidParams = errors.New("invalid params")

// FieldError is one problem with one parameter.
type FieldError struct {
	// Field is the parameter's JSON path: "locate", "locate.index",
	// "start.x"; empty for the params object as a whole.
	Field string
	// Message says what was expected and what was given.
	Message string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

// Invalid returns a FieldError; a params type's Validate method uses it to
// name the field a rule is about.
func Invalid(field, format string, args ...any) error {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// ValidationError lists every problem found in an action's params, so a
// model can fix them all in one go.
type ValidationError struct {
	Action string
	Fields []*FieldError
}

func (e *ValidationError) Error() string {
	msgs := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		msgs[i] = f.Error()
	}
	return fmt.Sprintf("%s: invalid params: %s", e.Action, strings.Join(msgs, "; "))
}

// Is makes errors.Is(err, ErrInvalidParams) true.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalidParams }

// prefixed puts a parent path in front of an error's field, turning
// whatever error a nested decoder returned into a FieldError.
func prefixed(path string, err error) *FieldError {
	var fe *FieldError
	if errors.As(err, &fe) {
		return &FieldError{Field: joinPath(path, fe.Field), Message: fe.Message}
	}
	return &FieldError{Field: path, Message: err.Error()}
}

func joinPath(parent, child string) string {
	switch {
	case parent == "":
		return child
	case child == "":
		return parent
	case strings.HasPrefix(child, "["):
		return parent + child
	}
	return parent + "." + child
}
