package dataset

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseTextColumns(t *testing.T) {
	in := "user,item,ts,rating,a,b\n7,shoe|hat,99,4,0.5,1\n\n8,,98,2.5,-1,2\n"
	spec, err := parseColumnSpec("label=rating, id:user=1, hash:item=item, dense=5-6")
	if err != nil {
		t.Fatal(err)
	}
	got, lines, fields, err := parseText(strings.NewReader(in), "in.csv", textInput{format: FormatCSV, spec: spec, header: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []Example{
		{Features: []float32{0.5, 1}, Label: 4, IDs: [][]uint64{{7}, {HashID("item", "shoe"), HashID("item", "hat")}}},
		{Features: []float32{-1, 2}, Label: 2.5, IDs: [][]uint64{{8}, {}}},
	}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(lines, []int{2, 4}) {
		t.Errorf("records %+v at lines %v, want %+v at [2 4]", got, lines, want)
	}
	if !reflect.DeepEqual(fields, []IDField{{Name: "user"}, {Name: "item"}}) {
		t.Errorf("id fields %+v, want user, item", fields)
	}
	tsv, _, fields, err := parseText(strings.NewReader("1\t2\t3\n"), "in.tsv", textInput{format: FormatTSV})
	if err != nil || !reflect.DeepEqual(tsv, []Example{{Features: []float32{1, 2}, Label: 3}}) || fields != nil {
		t.Errorf("tsv without a spec = %+v, %v, %v; want the last column the label, no id fields", tsv, fields, err)
	}
}

func TestColumnSpecErrors(t *testing.T) {
	for spec, want := range map[string]string{
		"dense=1-2":               "0 label columns",
		"label=1,label=2,dense=3": "2 label columns",
		"label=3,bogus=1":         `entry "bogus=1"`,
		"label=3,id:9x=1":         `field name "9x"`,
		"label=3,id:a=1-2":        "only dense takes a range",
		"label=3,dense=1-9":       "not within the input's 3 columns",
		"label=3,dense=1,id:a=1":  "names column 1 twice",
		"label=3,id:a=1,hash:a=2": `id field "a" twice`,
		"label=3,dense=x":         `"x" is not a column number (from 1)`,
		"label=3":                 "only a label",
	} {
		parsed, err := parseColumnSpec(spec)
		if err == nil {
			_, err = resolve(parsed, 3, nil)
		}
		if !errors.Is(err, ErrBadOptions) || !strings.Contains(err.Error(), want) {
			t.Errorf("spec %q: %v, want ErrBadOptions with %q", spec, err, want)
		}
	}
}
