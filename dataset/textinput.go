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

// readText reads one record per non-blank line; the last column is the label.
// A gzip-compressed file is read through (see openInput).
// It also returns the line number of every record, for error messages.
func readText(path, format string) ([]Example, []int, error) {
	r, err := openInput(path)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	return parseText(r, path, format)
}

func parseText(r io.Reader, name, format string) ([]Example, []int, error) {
	br := bufio.NewReader(r)
	var (
		out       []Example
		lines     []int
		columns   int
		firstLine int
	)
	for lineNo := 1; ; lineNo++ {
		line, readErr := br.ReadString('\n')
		if errors.Is(readErr, ErrBadGzip) {
			return nil, nil, fmt.Errorf("%w (reading line %d)", readErr, lineNo)
		}
		if readErr != nil && !errors.Is(readErr, io.EOF) {
			return nil, nil, fmt.Errorf("dataset: %s:%d: %w", name, lineNo, readErr)
		}
		if lineNo == 1 {
			line = strings.TrimPrefix(line, "\ufeff")
		}
		if strings.TrimSpace(line) != "" {
			tokens := splitLine(line, format)
			switch {
			case columns == 0 && len(tokens) < 2:
				return nil, nil, fmt.Errorf("%w: %s:%d: %d column, need at least one feature and a label", ErrBadLine, name, lineNo, len(tokens))
			case columns == 0:
				columns, firstLine = len(tokens), lineNo
			case len(tokens) != columns:
				return nil, nil, fmt.Errorf("%w: %s:%d: %d columns, want %d like line %d", ErrBadLine, name, lineNo, len(tokens), columns, firstLine)
			}
			e, err := parseRow(tokens)
			if err != nil {
				return nil, nil, fmt.Errorf("%w: %s:%d: %v", ErrBadLine, name, lineNo, err)
			}
			out = append(out, e)
			lines = append(lines, lineNo)
		}
		if readErr != nil {
			break
		}
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("%w: %s has no non-blank line", ErrNoRecords, name)
	}
	return out, lines, nil
}

func splitLine(line, format string) []string {
	if format == FormatWhitespace {
		return strings.Fields(line)
	}
	tokens := strings.Split(line, ",")
	for i, t := range tokens {
		tokens[i] = strings.TrimSpace(t)
	}
	return tokens
}

func parseRow(tokens []string) (Example, error) {
	values := make([]float32, len(tokens))
	for i, tok := range tokens {
		if tok == "" {
			return Example{}, fmt.Errorf("column %d: empty value", i+1)
		}
		v, err := strconv.ParseFloat(tok, 32)
		if err != nil {
			return Example{}, fmt.Errorf("column %d: %q is not a number (or out of float32 range)", i+1, tok)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Example{}, fmt.Errorf("column %d: %q is not a finite number", i+1, tok)
		}
		values[i] = float32(v)
	}
	last := len(values) - 1
	return Example{Features: values[:last:last], Label: values[last]}, nil
}
