package dataset

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Input formats of ConvertOptions.Format.
const (
	FormatWhitespace = "whitespace"
	FormatCSV        = "csv"
	FormatIDX        = "idx"
)

// textInput is how a text input is laid out.
type textInput struct {
	format string
	spec   []specEntry // empty: every column a feature but the last, the label
	header bool        // the first non-blank line names the columns
}

// readText reads one record per non-blank line, laid out as in says.
// A gzip-compressed file is read through (see openInput).
// It also returns the line number of every record, for error messages, and
// the id fields of the spec.
func readText(path string, in textInput) ([]Example, []int, []IDField, error) {
	r, err := openInput(path)
	if err != nil {
		return nil, nil, nil, err
	}
	defer r.Close()
	return parseText(r, path, in)
}

func parseText(r io.Reader, name string, in textInput) ([]Example, []int, []IDField, error) {
	br := bufio.NewReader(r)
	var (
		out       []Example
		lines     []int
		columns   int
		firstLine int
		layout    columnLayout
	)
	for lineNo := 1; ; lineNo++ {
		line, readErr := br.ReadString('\n')
		if errors.Is(readErr, ErrBadGzip) {
			return nil, nil, nil, fmt.Errorf("%w (reading line %d)", readErr, lineNo)
		}
		if readErr != nil && !errors.Is(readErr, io.EOF) {
			return nil, nil, nil, fmt.Errorf("dataset: %s:%d: %w", name, lineNo, readErr)
		}
		if lineNo == 1 {
			line = strings.TrimPrefix(line, "\ufeff")
		}
		if strings.TrimSpace(line) != "" {
			tokens := splitLine(line, in.format)
			var err error
			isHeader := false
			if columns == 0 {
				columns, firstLine = len(tokens), lineNo
				layout, err = in.layout(tokens)
				isHeader = in.header
			}
			if err == nil && !isHeader {
				var e Example
				if e, err = parseRecord(tokens, columns, firstLine, layout); err == nil {
					out, lines = append(out, e), append(lines, lineNo)
				}
			}
			if err != nil {
				return nil, nil, nil, fmt.Errorf("%w: %s:%d: %v", ErrBadLine, name, lineNo, err)
			}
		}
		if readErr != nil {
			break
		}
	}
	if len(out) == 0 {
		return nil, nil, nil, fmt.Errorf("%w: %s has no record line", ErrNoRecords, name)
	}
	return out, lines, layout.fields(), nil
}

// layout resolves the spec against the first line's tokens (the header's
// names when there is one).
func (in textInput) layout(first []string) (columnLayout, error) {
	if len(in.spec) == 0 && len(first) < 2 {
		return columnLayout{}, fmt.Errorf("%d column, need at least one feature and a label", len(first))
	}
	var names []string
	if in.header {
		names = first
	}
	return resolve(in.spec, len(first), names)
}

func splitLine(line, format string) []string {
	if format == FormatWhitespace {
		return strings.Fields(line)
	}
	sep := ","
	if format == FormatTSV {
		sep = "\t"
	}
	tokens := strings.Split(line, sep)
	for i, t := range tokens {
		tokens[i] = strings.TrimSpace(t)
	}
	return tokens
}

// parseRecord reads a line's tokens as layout says; every line has as many
// columns as the first (line firstLine).
func parseRecord(tokens []string, columns, firstLine int, layout columnLayout) (Example, error) {
	if len(tokens) != columns {
		err := fmt.Errorf("%d columns, want %d like line %d", len(tokens), columns, firstLine)
		if len(tokens) < columns {
			err = fmt.Errorf("%w: %s and after are missing", err, layout.colName(len(tokens)))
		}
		return Example{}, err
	}
	e := Example{Features: make([]float32, len(layout.dense))}
	var err error
	for i, c := range layout.dense {
		if e.Features[i], err = parseValue(tokens[c], layout.colName(c)); err != nil {
			return Example{}, err
		}
	}
	if e.Label, err = parseValue(tokens[layout.label], layout.colName(layout.label)); err != nil {
		return Example{}, err
	}
	if len(layout.ids) > 0 {
		e.IDs = make([][]uint64, len(layout.ids))
	}
	for f, ic := range layout.ids {
		if e.IDs[f], err = parseIDCell(tokens[ic.col], ic, layout.colName(ic.col)); err != nil {
			return Example{}, err
		}
	}
	return e, nil
}

// parseValue reads a dense feature or label.
func parseValue(tok, col string) (float32, error) {
	if tok == "" {
		return 0, fmt.Errorf("%s: empty value", col)
	}
	v, err := strconv.ParseFloat(tok, 32)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a number (or out of float32 range)", col, tok)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%s: %q is not a finite number", col, tok)
	}
	return float32(v), nil
}

// parseIDCell reads the "|"-separated ids of a cell (none when empty):
// decimal ids as they are, or for a hashed column HashID(field, value).
func parseIDCell(tok string, ic idColumn, col string) ([]uint64, error) {
	if tok == "" {
		return []uint64{}, nil
	}
	values := strings.Split(tok, "|")
	if len(values) > MaxIDsPerField {
		return nil, fmt.Errorf("%s: %d ids, at most %d", col, len(values), MaxIDsPerField)
	}
	ids := make([]uint64, len(values))
	for i, v := range values {
		if ic.hashed {
			ids[i] = HashID(ic.field, v)
			continue
		}
		id, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s (id:%s): %q is not a whole number in [0, 2^64) (declare the column hash:%s to hash text)", col, ic.field, v, ic.field)
		}
		ids[i] = id
	}
	return ids, nil
}
