package schema

import "encoding/json"

// DecodeState decodes a raw state record (for watchers).
func DecodeState(raw []byte) (StateRecord, error) {
	var st StateRecord
	err := json.Unmarshal(raw, &st)
	return st, err
}

// DecodeJobRecord decodes the value of a JobKey.
func DecodeJobRecord(raw []byte) (JobRecord, error) {
	var rec JobRecord
	err := json.Unmarshal(raw, &rec)
	return rec, err
}

// DecodePlacement decodes the value of a PlacementKey.
func DecodePlacement(raw []byte) (PlacementRecord, error) {
	var p PlacementRecord
	err := json.Unmarshal(raw, &p)
	return p, err
}

// DecodeHung decodes the value of a HungKey.
func DecodeHung(raw []byte) (HungRecord, error) {
	var h HungRecord
	err := json.Unmarshal(raw, &h)
	return h, err
}
