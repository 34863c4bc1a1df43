package jobspec

// ShuffleRecords reports whether passes read the data in a seeded shuffle
// (data.shuffle, true unless set to false).
func (d DataSpec) ShuffleRecords() bool { return d.Shuffle == nil || *d.Shuffle }
