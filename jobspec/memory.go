package jobspec

import (
	"fmt"
	"math/big"
	"regexp"
)

// quantityPattern is a Kubernetes-style quantity without exponent notation:
// a decimal number and an optional unit.
var quantityPattern = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)([A-Za-z]*)$`)

const memoryUnitsHelp = "want a number of bytes with an optional unit Ki, Mi, Gi, Ti, Pi, Ei (powers of 1024) " +
	"or k, M, G, T, P, E (powers of 1000), e.g. \"512Mi\""

// MemoryBytes reads Memory as a byte count: "1024", "512Mi", "1Gi", "500M",
// "1.5Gi". A fraction of a byte rounds up. Empty Memory (not stated) is 0.
// Errors wrap ErrInvalidMemory.
func (r Resource) MemoryBytes() (int64, error) {
	if r.Memory == "" {
		return 0, nil
	}
	m := quantityPattern.FindStringSubmatch(r.Memory)
	if m == nil {
		return 0, fmt.Errorf("%w %q: %s", ErrInvalidMemory, r.Memory, memoryUnitsHelp)
	}
	unit, ok := memoryUnit(m[2])
	if !ok {
		return 0, fmt.Errorf("%w %q: unknown unit %q; %s", ErrInvalidMemory, r.Memory, m[2], memoryUnitsHelp)
	}
	number, ok := new(big.Rat).SetString(m[1])
	if !ok {
		return 0, fmt.Errorf("%w %q: %s", ErrInvalidMemory, r.Memory, memoryUnitsHelp)
	}
	bytes := number.Mul(number, new(big.Rat).SetInt(unit))
	quotient, remainder := new(big.Int).QuoRem(bytes.Num(), bytes.Denom(), new(big.Int))
	if remainder.Sign() != 0 {
		quotient.Add(quotient, big.NewInt(1))
	}
	if !quotient.IsInt64() {
		return 0, fmt.Errorf("%w %q: more bytes than an int64 holds", ErrInvalidMemory, r.Memory)
	}
	return quotient.Int64(), nil
}

func memoryUnit(suffix string) (*big.Int, bool) {
	binary := map[string]uint{"": 0, "Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
	if shift, ok := binary[suffix]; ok {
		return new(big.Int).Lsh(big.NewInt(1), shift), true
	}
	decimal := map[string]int64{"k": 3, "K": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
	if exp, ok := decimal[suffix]; ok {
		return new(big.Int).Exp(big.NewInt(10), big.NewInt(exp), nil), true
	}
	return nil, false
}
