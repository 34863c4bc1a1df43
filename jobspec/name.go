package jobspec

import "fmt"

// MaxNameLength is the longest job name accepted.
const MaxNameLength = 63

// nameRule is quoted in every name rejection so that the user can fix the
// name without looking up the documentation.
const nameRule = "a job name has 1 to 63 characters, only ASCII letters, digits, '-' and '.', " +
	"starts and ends with a letter or digit, and has no '_'"

// ValidateName checks a job name against the rule of docs/reference.md#job-names (paddlecloud's).
// The error wraps ErrInvalidName and states both the problem and the rule.
func ValidateName(name string) error {
	if problem := nameProblem(name); problem != "" {
		return fmt.Errorf("%w %q (%s): %s", ErrInvalidName, name, problem, nameRule)
	}
	return nil
}

func nameProblem(name string) string {
	if name == "" {
		return "empty"
	}
	if len(name) > MaxNameLength {
		return fmt.Sprintf("%d characters", len(name))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case isAlphanumeric(c):
		case c == '-' || c == '.':
			if i == 0 {
				return fmt.Sprintf("starts with %q", c)
			}
			if i == len(name)-1 {
				return fmt.Sprintf("ends with %q", c)
			}
		case c == '_':
			return "contains '_'"
		default:
			return fmt.Sprintf("contains %q at byte %d", c, i)
		}
	}
	return ""
}

func isAlphanumeric(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
