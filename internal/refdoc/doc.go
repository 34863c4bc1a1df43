// Package refdoc keeps docs/reference.md, the user contract, true to the
// code: it renders the parts of the reference that code defines (the CLI
// from cobra's command tree, the job spec from jobspec's fields, defaults and
// limits, the JSON documents from their Go types, the states from api's
// constants) and compares each with its marked section of the document.
//
// A section sits between
//
//	<!-- BEGIN GENERATED name -->
//	<!-- END GENERATED name -->
//
// and everything outside the markers is written by hand. The tests of the
// packages that own a section (this one, cmd/gctl, cmd/gtraind) fail when
// their section differs from what the code renders now; run
//
//	go generate ./internal/refdoc
//
// to rewrite the sections, then read the diff and fix the prose around them.
//
// It is test support: it must not be imported by production code.
package refdoc

//go:generate sh -c "cd ../.. && REFDOC_UPDATE=1 go test -count=1 -p 1 -run Reference ./internal/refdoc ./cmd/gctl ./cmd/gtraind"
