package dataset

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// FormatTSV is text with tab-separated columns (csv's rules otherwise).
const FormatTSV = "tsv"

// A column spec (ConvertOptions.Columns) says what each column of a text
// input is: comma-separated ROLE=COLUMNS entries, where ROLE is
//
//	label        the label (exactly one)
//	dense        dense features, in the order given (a column or a range A-B)
//	id:NAME      id field NAME: decimal 64-bit ids as they are
//	hash:NAME    id field NAME: any text, each value's id HashID(NAME, value)
//
// and a column is its number, counted from 1, or with a header row its name.
// An id cell may hold several ids separated by "|", or none (empty). Columns
// not named are ignored. Example: label=4,id:user=1,hash:item=2,dense=5-7.
type specEntry struct {
	role  string // "label", "dense", "id", "hash"
	field string // id field name for id and hash
	ref   string // "3", "3-5" or a header name
}

// idColumn is where an id field is read from.
type idColumn struct {
	col    int
	field  string
	hashed bool
}

// columnLayout is a spec resolved against the input's columns (0-based).
type columnLayout struct {
	label int
	dense []int
	ids   []idColumn
	names []string // header names, for messages; nil without a header
}

var specEntryRE = regexp.MustCompile(`^(label|dense|id:[^=]+|hash:[^=]+)=(.+)$`)

func parseColumnSpec(spec string) ([]specEntry, error) {
	var out []specEntry
	labels := 0
	for _, raw := range strings.Split(spec, ",") {
		m := specEntryRE.FindStringSubmatch(strings.TrimSpace(raw))
		if m == nil {
			return nil, fmt.Errorf("%w: column spec entry %q: want label=COL, dense=COL or A-B, id:NAME=COL or hash:NAME=COL", ErrBadOptions, raw)
		}
		e := specEntry{role: m[1], ref: strings.TrimSpace(m[2])}
		if role, name, ok := strings.Cut(m[1], ":"); ok {
			e.role, e.field = role, name
			if !idFieldName.MatchString(name) {
				return nil, fmt.Errorf("%w: column spec entry %q: field name %q is not a letter then up to 63 letters, digits or _", ErrBadOptions, raw, name)
			}
		}
		if e.role == "label" {
			labels++
		}
		out = append(out, e)
	}
	if labels != 1 {
		return nil, fmt.Errorf("%w: column spec %q names %d label columns, want exactly one (label=COL)", ErrBadOptions, spec, labels)
	}
	return out, nil
}

// resolve turns the spec into column indices for rows of width columns; names
// is the header row (nil without one). An empty spec is the default layout:
// every column a dense feature but the last, the label.
func resolve(spec []specEntry, width int, names []string) (columnLayout, error) {
	l := columnLayout{names: names}
	if len(spec) == 0 {
		l.label = width - 1
		for c := range width - 1 {
			l.dense = append(l.dense, c)
		}
		return l, nil
	}
	used := map[int]string{}
	for _, e := range spec {
		cols, err := e.columns(width, names)
		if err != nil {
			return columnLayout{}, err
		}
		for _, c := range cols {
			if prev, dup := used[c]; dup {
				return columnLayout{}, fmt.Errorf("%w: column spec names column %d twice (%s and %s)", ErrBadOptions, c+1, prev, e)
			}
			used[c] = e.String()
		}
		switch e.role {
		case "label":
			l.label = cols[0]
		case "dense":
			l.dense = append(l.dense, cols...)
		default:
			if slices.ContainsFunc(l.ids, func(x idColumn) bool { return x.field == e.field }) {
				return columnLayout{}, fmt.Errorf("%w: column spec names id field %q twice", ErrBadOptions, e.field)
			}
			l.ids = append(l.ids, idColumn{col: cols[0], field: e.field, hashed: e.role == "hash"})
		}
	}
	if len(l.dense) == 0 && len(l.ids) == 0 {
		return columnLayout{}, fmt.Errorf("%w: the column spec reads only a label: name dense or id columns too", ErrBadOptions)
	}
	return l, nil
}

func (e specEntry) String() string {
	if e.field != "" {
		return e.role + ":" + e.field + "=" + e.ref
	}
	return e.role + "=" + e.ref
}

// columns resolves e.ref: a header name, a column number, or (dense only) a
// range A-B of numbers.
func (e specEntry) columns(width int, names []string) ([]int, error) {
	if i := slices.Index(names, e.ref); i >= 0 {
		return []int{i}, nil
	}
	lo, hi, isRange := strings.Cut(e.ref, "-")
	if !isRange {
		hi = lo
	} else if e.role != "dense" {
		return nil, fmt.Errorf("%w: %s: only dense takes a range of columns", ErrBadOptions, e)
	}
	a, errA := strconv.Atoi(lo)
	b, errB := strconv.Atoi(hi)
	switch {
	case errA != nil || errB != nil:
		what := "a column number (from 1)"
		if names != nil {
			what += " or a name of the header row"
		}
		return nil, fmt.Errorf("%w: %s: %q is not %s", ErrBadOptions, e, e.ref, what)
	case a < 1 || b < a || b > width:
		return nil, fmt.Errorf("%w: %s: columns %d-%d are not within the input's %d columns (counted from 1)", ErrBadOptions, e, a, b, width)
	}
	cols := make([]int, 0, b-a+1)
	for c := a - 1; c < b; c++ {
		cols = append(cols, c)
	}
	return cols, nil
}

// fields lists the id fields the layout reads, in spec order (nil for none).
func (l columnLayout) fields() []IDField {
	if len(l.ids) == 0 {
		return nil
	}
	out := make([]IDField, len(l.ids))
	for i, c := range l.ids {
		out[i] = IDField{Name: c.field}
	}
	return out
}

// colName names column c (0-based) in a message: "column 3" or
// "column 3 (rating)".
func (l columnLayout) colName(c int) string {
	if c < len(l.names) && l.names[c] != "" {
		return fmt.Sprintf("column %d (%s)", c+1, l.names[c])
	}
	return fmt.Sprintf("column %d", c+1)
}
