package engine

import (
	"html"
	"regexp"
	"strings"
)

// blockTags end a line of the plain-text part.
var blockTags = map[string]bool{
	"p": true, "div": true, "br": true, "tr": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true,
	"h6": true, "table": true, "ul": true, "ol": true, "hr": true, "blockquote": true, "section": true,
	"article": true, "header": true, "footer": true, "pre": true, "title": true,
}

// skipTags are dropped with their content.
var skipTags = map[string]bool{"script": true, "style": true, "head": true, "template": true, "noscript": true}

var (
	hrefRE     = regexp.MustCompile(`(?is)\bhref\s*=\s*("([^"]*)"|'([^']*)'|([^\s>]+))`)
	spacesRE   = regexp.MustCompile(`[ \t\r\f\v]+`)
	newlinesRE = regexp.MustCompile(`\n{3,}`)
)

// htmlToText derives an e-mail's plain-text part from its HTML: no tags
// left, scripts and styles dropped, blocks on their own lines, list items
// dashed, links followed by their address, entities decoded.
func htmlToText(s string) string {
	var b strings.Builder
	var href []string // the open links' addresses
	var linkText []int
	for i := 0; i < len(s); {
		if s[i] != '<' {
			j := strings.IndexByte(s[i:], '<')
			if j < 0 {
				j = len(s) - i
			}
			b.WriteString(s[i : i+j])
			i += j
			continue
		}
		if strings.HasPrefix(s[i:], "<!--") {
			end := strings.Index(s[i+4:], "-->")
			if end < 0 {
				break
			}
			i += 4 + end + 3
			continue
		}
		end := tagEnd(s, i)
		if end < 0 { // an unterminated tag: the rest is text (and no later tag can end either)
			b.WriteString(s[i:])
			break
		}
		if i+1 >= len(s) || !(isLetter(s[i+1]) || s[i+1] == '/' || s[i+1] == '!') {
			b.WriteByte('<') // a lone "<" is text
			i++
			continue
		}
		tag := s[i+1 : end]
		i = end + 1
		closing := strings.HasPrefix(tag, "/")
		name := strings.ToLower(strings.TrimLeft(tag, "/!"))
		if k := strings.IndexAny(name, " \t\r\n/"); k >= 0 {
			name = name[:k]
		}
		switch {
		case skipTags[name] && !closing:
			i = closingTag(s, i, name)
		case name == "li" && !closing:
			b.WriteString("\n- ")
		case name == "a" && !closing:
			u := ""
			if m := hrefRE.FindStringSubmatch(tag); m != nil {
				u = m[2] + m[3] + m[4]
			}
			href, linkText = append(href, html.UnescapeString(u)), append(linkText, b.Len())
		case name == "a" && closing && len(href) > 0:
			u, start := href[len(href)-1], linkText[len(linkText)-1]
			href, linkText = href[:len(href)-1], linkText[:len(linkText)-1]
			label := b.String()[start:]
			same := false
			if len(label) <= 2048 { // bounded: nested links must not make this quadratic
				label = strings.TrimSpace(html.UnescapeString(label))
				same = u == label || strings.EqualFold(u, "mailto:"+label)
			}
			if u != "" && !same && !strings.HasPrefix(u, "#") {
				b.WriteString(" (" + u + ")")
			}
		case name == "td" || name == "th":
			b.WriteByte(' ')
		case blockTags[name]:
			b.WriteByte('\n')
		}
	}
	lines := strings.Split(html.UnescapeString(b.String()), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(spacesRE.ReplaceAllString(strings.ReplaceAll(l, "\u00a0", " "), " "))
	}
	return strings.TrimSpace(newlinesRE.ReplaceAllString(strings.Join(lines, "\n"), "\n\n"))
}

// closingTag is where the closing tag of name after i starts (the end of s
// when there is none), found without copying s: linear in what it skips.
func closingTag(s string, i int, name string) int {
	for {
		k := strings.Index(s[i:], "</")
		if k < 0 {
			return len(s)
		}
		i += k
		if end := i + 2 + len(name); end <= len(s) && strings.EqualFold(s[i+2:end], name) {
			return i
		}
		i += 2
	}
}

// tagEnd finds the '>' closing the tag opened at i, past quoted attribute values.
func tagEnd(s string, i int) int {
	var quote byte
	for j := i + 1; j < len(s); j++ {
		switch c := s[j]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '>':
			return j
		}
	}
	return -1
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
