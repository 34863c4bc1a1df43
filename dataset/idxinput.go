package dataset

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
)

// idxUnsignedByte is the only IDX element type MNIST-style data uses.
const idxUnsignedByte = 0x08

// readIDX reads an images file (N × d1 × d2 ... of u8, scaled to [0,1]) and a
// labels file (N of u8). Gzipped files (as MNIST is distributed) are accepted.
func readIDX(imagesPath, labelsPath string) ([]Example, error) {
	imagesData, err := readInputFile(imagesPath)
	if err != nil {
		return nil, err
	}
	labelsData, err := readInputFile(labelsPath)
	if err != nil {
		return nil, err
	}
	imageDims, pixels, err := parseIDX(imagesPath, imagesData)
	if err != nil {
		return nil, err
	}
	labelDims, labels, err := parseIDX(labelsPath, labelsData)
	if err != nil {
		return nil, err
	}
	if len(imageDims) < 2 {
		return nil, fmt.Errorf("%w: %s: images file has %d dimension(s), want at least 2 (count, then the image shape)", ErrBadIDX, imagesPath, len(imageDims))
	}
	if len(labelDims) != 1 {
		return nil, fmt.Errorf("%w: %s: labels file has %d dimensions, want 1", ErrBadIDX, labelsPath, len(labelDims))
	}
	if imageDims[0] != labelDims[0] {
		return nil, fmt.Errorf("%w: %s has %d images but %s has %d labels", ErrBadIDX, imagesPath, imageDims[0], labelsPath, labelDims[0])
	}
	n := imageDims[0]
	if n == 0 {
		return nil, fmt.Errorf("%w: %s holds 0 images", ErrNoRecords, imagesPath)
	}
	features := len(pixels) / n
	if features == 0 {
		return nil, fmt.Errorf("%w: %s: images have shape %v, 0 pixels each", ErrBadIDX, imagesPath, imageDims[1:])
	}
	out := make([]Example, n)
	all := make([]float32, len(pixels))
	for i, p := range pixels {
		all[i] = float32(p) / 255
	}
	for i := range out {
		f := all[i*features : (i+1)*features : (i+1)*features]
		out[i] = Example{Features: f, Label: float32(labels[i])}
	}
	return out, nil
}

// parseIDX checks the header (two zero bytes, element type, dimension count,
// big-endian u32 sizes) and that the data is exactly as long as the sizes say.
func parseIDX(name string, data []byte) (dims []int, payload []byte, err error) {
	if len(data) < 4 {
		return nil, nil, fmt.Errorf("%w: %s: %d bytes, too short for an IDX header", ErrBadIDX, name, len(data))
	}
	magic := binary.BigEndian.Uint32(data)
	if data[0] != 0 || data[1] != 0 {
		return nil, nil, fmt.Errorf("%w: %s: bad magic 0x%08x, want 0x0000TTDD (TT element type, DD dimensions)", ErrBadIDX, name, magic)
	}
	if data[2] != idxUnsignedByte {
		return nil, nil, fmt.Errorf("%w: %s: magic 0x%08x has element type 0x%02x, only 0x%02x (unsigned byte) is supported", ErrBadIDX, name, magic, data[2], idxUnsignedByte)
	}
	ndims := int(data[3])
	if ndims == 0 {
		return nil, nil, fmt.Errorf("%w: %s: magic 0x%08x says 0 dimensions", ErrBadIDX, name, magic)
	}
	headerSize := 4 + 4*ndims
	if len(data) < headerSize {
		return nil, nil, fmt.Errorf("%w: %s: %d bytes, too short for the %d dimension sizes of the header", ErrBadIDX, name, len(data), ndims)
	}
	dims = make([]int, ndims)
	for i := range dims {
		dims[i] = int(binary.BigEndian.Uint32(data[4+4*i:]))
	}
	available := len(data) - headerSize
	if want, fits := idxDataSize(dims); !fits || want != uint64(available) {
		need := "more than 2^64"
		if fits {
			need = fmt.Sprint(want)
		}
		return nil, nil, fmt.Errorf("%w: %s: size mismatch: dimensions %v need %s data bytes after the %d-byte header, the file has %d",
			ErrBadIDX, name, dims, need, headerSize, available)
	}
	return dims, data[headerSize:], nil
}

// idxDataSize is the product of dims, or fits=false if that overflows 64 bits.
func idxDataSize(dims []int) (size uint64, fits bool) {
	if slices.Contains(dims, 0) {
		return 0, true
	}
	size = 1
	for _, d := range dims {
		hi, lo := bits.Mul64(size, uint64(d))
		if hi != 0 {
			return 0, false
		}
		size = lo
	}
	return size, true
}
