package main

import "strings"

// A block is one fenced code block of a Markdown file whose info string
// names Go.
type block struct {
	file     string   // the Markdown file, as shown in messages
	line     int      // the line of its opening fence, from 1
	indent   int      // the columns its content was indented by in the file
	words    []string // the info string's words after the language
	src      string   // its content, the indentation of its fence removed
	fragment bool     // marked as a fragment: not compiled
	seq      int      // its place among the blocks checked
}

// first is the file's line of the block's first line of content.
func (b *block) first() int { return b.line + 1 }

// goBlocks returns the Go blocks of a Markdown document: fenced with ```
// or ~~~, indented by up to three spaces (more in a list item: the fence's
// own indentation is taken off every line of content, as CommonMark
// does), closed by a fence of the same character at least as long, or by
// the end of the document. The language is the info string's first word,
// "go" or "golang", in any case.
func goBlocks(file, doc string) []block {
	var out []block
	lines := strings.Split(doc, "\n")
	for i := 0; i < len(lines); i++ {
		indent, fence, info, ok := openingFence(lines[i])
		if !ok {
			continue
		}
		start := i
		var body []string
		for i++; i < len(lines) && !closes(lines[i], fence); i++ {
			body = append(body, dedent(lines[i], indent))
		}
		words := strings.Fields(info)
		if len(words) == 0 || !isGo(words[0]) {
			continue
		}
		b := block{file: file, line: start + 1, indent: indent, words: words[1:], src: strings.Join(body, "\n") + "\n"}
		for _, w := range b.words {
			if w == fragmentWord {
				b.fragment = true
			}
		}
		out = append(out, b)
	}
	return out
}

func isGo(lang string) bool {
	lang = strings.ToLower(lang)
	return lang == "go" || lang == "golang"
}

// openingFence parses a line that opens a fenced code block: its
// indentation, its fence (``` or ~~~, or longer), and its info string.
func openingFence(line string) (indent int, fence, info string, ok bool) {
	trimmed := strings.TrimLeft(line, " ")
	indent = len(line) - len(trimmed)
	if len(trimmed) < 3 || (trimmed[0] != '`' && trimmed[0] != '~') {
		return 0, "", "", false
	}
	n := len(trimmed) - len(strings.TrimLeft(trimmed, trimmed[:1]))
	if n < 3 {
		return 0, "", "", false
	}
	fence, info = trimmed[:n], strings.TrimSpace(trimmed[n:])
	if fence[0] == '`' && strings.Contains(info, "`") {
		return 0, "", "", false // inline code, not a fence
	}
	return indent, fence, info, true
}

// closes reports whether line closes a block opened by fence: a line of
// the fence's character alone, at least as many.
func closes(line, fence string) bool {
	t := strings.TrimSpace(line)
	return len(t) >= len(fence) && strings.Trim(t, fence[:1]) == ""
}

// dedent takes up to n leading spaces off line.
func dedent(line string, n int) string {
	for i := 0; i < n && strings.HasPrefix(line, " "); i++ {
		line = line[1:]
	}
	return line
}
