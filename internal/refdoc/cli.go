package refdoc

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Commands renders root and every available command under it, depth
// first in cobra's (alphabetical) order: a heading per command at level
// `level` (e.g. "###"), its usage, its own flags and its help text. Flags
// a command inherits are documented once, on the command that declares
// them. cobra's own help and completion commands are added at execution,
// so they are not in the tree and not rendered.
func Commands(root *cobra.Command, level string) string {
	var b strings.Builder
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		writeCommand(&b, c, level)
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() {
				walk(sub)
			}
		}
	}
	walk(root)
	return b.String()
}

func writeCommand(b *strings.Builder, c *cobra.Command, level string) {
	fmt.Fprintf(b, "%s `%s`\n\n%s.\n\n", level, c.CommandPath(), strings.TrimSuffix(c.Short, "."))
	fmt.Fprintf(b, "```\n%s\n```\n\n", usage(c))
	writeFlags(b, c)
	if long := strings.TrimSpace(c.Long); long != "" {
		fmt.Fprintf(b, "```text\n%s\n```\n\n", long)
	}
	if ex := strings.TrimRight(c.Example, " \n"); ex != "" {
		fmt.Fprintf(b, "```sh\n%s\n```\n\n", dedent(ex))
	}
}

// usage is the command's use line; a group of subcommands shows how to
// reach them instead of cobra's "[flags]" line.
func usage(c *cobra.Command) string {
	if c.HasAvailableSubCommands() {
		return c.CommandPath() + " COMMAND [flags]"
	}
	return c.UseLine()
}

func writeFlags(b *strings.Builder, c *cobra.Command) {
	var rows []string
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Deprecated != "" || f.Name == "help" {
			return
		}
		rows = append(rows, fmt.Sprintf("| `%s` | %s | %s | %s |", flagName(f), f.Value.Type(), flagDefault(f), cell(f.Usage)))
	})
	if len(rows) == 0 {
		return
	}
	b.WriteString("| flag | type | default | meaning |\n|---|---|---|---|\n")
	b.WriteString(strings.Join(rows, "\n"))
	b.WriteString("\n\n")
}

func flagName(f *pflag.Flag) string {
	if f.Shorthand != "" {
		return "-" + f.Shorthand + ", --" + f.Name
	}
	return "--" + f.Name
}

// flagDefault is the flag's default as a reader should see it: none for
// empty values, and no machine's own host name (--node-name defaults to
// the host name of whichever machine renders the document).
func flagDefault(f *pflag.Flag) string {
	v := f.DefValue
	if host, err := os.Hostname(); err == nil && v == host {
		return "the host name"
	}
	if v == "" || v == "[]" {
		return ""
	}
	return "`" + v + "`"
}

// cell makes text safe inside a table cell.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

// dedent removes the indentation common to every non-blank line (cobra
// examples are indented two spaces for the terminal).
func dedent(s string) string {
	lines := strings.Split(s, "\n")
	indent := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " "))
		if indent < 0 || n < indent {
			indent = n
		}
	}
	for i, l := range lines {
		if len(l) >= indent && indent > 0 {
			lines[i] = l[indent:]
		}
	}
	return strings.Join(lines, "\n")
}
