package cli

import (
	"strings"
	"unicode/utf8"
)

// helpWidth is the widest line of help written into a pipe or a file.
const helpWidth = 80

// fitHelp makes rendered help fit helpWidth columns: trailing spaces go,
// and a longer line is wrapped at spaces, its continuation lines indented
// under its text (a flag's or a listed term's under its description). The
// description's paragraphs are filled anew first (reflowDescription). Example commands (the
// lines of the EXAMPLES section that are not comments) are continued with
// a backslash, so that they still paste into a shell. A single word longer
// than the width stays whole.
func fitHelp(s string) string {
	var b strings.Builder
	examples := false
	lines := reflowDescription(strings.Split(s, "\n"))
	for _, line := range lines {
		line = strings.TrimRight(line, " \t")
		indent := len(line) - len(strings.TrimLeft(line, " "))
		if t := strings.TrimSpace(line); t != "" && isHeading(t) {
			examples = t == "EXAMPLES"
		}
		command := examples && indent > 0 && !strings.HasPrefix(strings.TrimSpace(line), "#")
		for _, l := range wrapHelpLine(line, indent, command) {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// reflowDescription joins the lines of each paragraph of the description
// (the text before the first heading, at its first line's indent), which
// the commands wrap at about 100 columns, so that wrapHelpLine wraps them
// at helpWidth. Lines indented further (lists, forms) stay as they are.
func reflowDescription(lines []string) []string {
	base := -1
	var out []string
	joining := false
	for i, line := range lines {
		t := strings.TrimSpace(line)
		if t != "" && isHeading(t) {
			return append(out, lines[i:]...)
		}
		indent := len(line) - len(strings.TrimLeft(line, " "))
		if t != "" && base < 0 {
			base = indent
		}
		if t == "" || indent != base {
			out = append(out, line)
			joining = false
			continue
		}
		if joining {
			out[len(out)-1] = strings.TrimRight(out[len(out)-1], " ") + " " + t
			continue
		}
		out = append(out, line)
		joining = true
	}
	return out
}

// isHeading reports whether t is a section heading of fang's help (USAGE,
// EXAMPLES, FLAGS…): upper-case words.
func isHeading(t string) bool {
	return t == strings.ToUpper(t) && strings.ToLower(t) != t && !strings.ContainsAny(t, "-=/.")
}

// wrapHelpLine wraps one line at helpWidth.
func wrapHelpLine(line string, indent int, command bool) []string {
	if utf8.RuneCountInString(line) <= helpWidth {
		return []string{line}
	}
	hang := indent
	if command {
		hang = indent + 2
	} else if i := strings.Index(line[indent:], "  "); i > 0 && i < 40 {
		// A flag or a term and its description: continue under the
		// description.
		rest := line[indent+i:]
		hang = indent + i + len(rest) - len(strings.TrimLeft(rest, " "))
	}
	width := helpWidth
	if command {
		width -= 2 // room for " \"
	}
	var out []string
	head := indent
	if hang > indent && !command {
		head = hang // the flag's names and the spaces after them, as they are
	}
	cur, curLen := line[:head], head
	first := true
	for _, w := range strings.Fields(line[head:]) {
		wl := utf8.RuneCountInString(w)
		if !first && curLen+1+wl > width {
			if command {
				cur += " \\"
			}
			out = append(out, cur)
			cur, curLen, first = strings.Repeat(" ", hang), hang, true
		}
		if !first {
			cur += " "
			curLen++
		}
		cur += w
		curLen += wl
		first = false
	}
	return append(out, cur)
}
