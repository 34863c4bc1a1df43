package render

import (
	"io"
	"os"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// IsTerminal reports whether w is a terminal. It asks for the terminal's
// settings: a character device is not enough, /dev/null is one too (and a
// question asked on it reads an empty answer).
func IsTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// TerminalWidth is the column count of the terminal w writes to; 0 when w
// is not a terminal or its size is unknown (then nothing is cut).
func TerminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}

// FitWidth cuts a progress line to fewer than width columns (counting a
// rune as one column), ending it with "…" when cut. A line as wide as the
// terminal would wrap, and "\r" then rewrites only its last row, leaving
// a trail of stale rows. width 0 means unknown: the line is kept whole.
func FitWidth(line string, width int) string {
	if width <= 1 || utf8.RuneCountInString(line) < width {
		return line
	}
	runes := []rune(line)
	return string(runes[:width-2]) + "…"
}
