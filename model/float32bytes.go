package model

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"
)

// Float32Bytes returns p as little-endian bytes. On little-endian hosts the
// result shares p's memory (no copy): do not modify one while using the other.
func Float32Bytes(p []float32) []byte {
	if len(p) == 0 {
		return []byte{}
	}
	if hostIsLittleEndian() {
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(p))), len(p)*4)
	}
	return encodeFloat32s(p)
}

// BytesFloat32 decodes little-endian float32 values. On little-endian hosts,
// when b is 4-byte aligned, the result shares b's memory (no copy).
func BytesFloat32(b []byte) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("float32 data of %d bytes (%d trailing): %w", len(b), len(b)%4, ErrByteLength)
	}
	if len(b) == 0 {
		return []float32{}, nil
	}
	data := unsafe.Pointer(unsafe.SliceData(b))
	if hostIsLittleEndian() && uintptr(data)%unsafe.Alignof(float32(0)) == 0 {
		return unsafe.Slice((*float32)(data), len(b)/4), nil
	}
	return decodeFloat32s(b), nil
}

// encodeFloat32s is the portable, copying path of Float32Bytes.
func encodeFloat32s(p []float32) []byte {
	b := make([]byte, len(p)*4)
	for i, v := range p {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

// decodeFloat32s is the portable, copying path of BytesFloat32; len(b) must be a multiple of 4.
func decodeFloat32s(b []byte) []float32 {
	p := make([]float32, len(b)/4)
	for i := range p {
		p[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return p
}

// hostIsLittleEndian is cheap enough to call every time, which avoids
// package-level state computed at init.
func hostIsLittleEndian() bool {
	return binary.NativeEndian.Uint16([]byte{1, 0}) == 1
}
