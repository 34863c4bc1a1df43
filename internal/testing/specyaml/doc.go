// Package specyaml writes a jobspec.Spec as the YAML document a user
// would submit, so that end-to-end tests build their jobs as typed values
// (and change a field by assignment) instead of copying YAML templates.
//
// It owns the rendering: a field left at its zero value is left out (so
// that it gets its default, as in a hand-written spec), a pointer is
// written when set, and trainers/pservers bounds take the
// {count, min, max} form. It must not validate (jobspec.Parse does, when
// the agent reads the document) and must not be imported by production
// code.
package specyaml
