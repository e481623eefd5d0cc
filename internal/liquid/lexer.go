package liquid

import (
	"strings"
	"unicode/utf8"

	"github.com/herald-notify/herald/internal/jsvalue"
)

// The tokenizer follows LiquidJS's Tokenizer character for character: what
// is a word, a blank, a quote; where a tag or an output ends; how
// whitespace control trims the text beside it.

const (
	cWord   = 1
	cBlank  = 4
	cQuote  = 8
	cInline = 16
	cNumber = 32
	cSign   = 64
)

var asciiTypes = [128]uint8{
	9: 20, 10: 4, 11: 4, 12: 4, 13: 20, 32: 20, '"': 8, '\'': 8, '-': 65, '+': 64,
}

func init() {
	for c := '0'; c <= '9'; c++ {
		asciiTypes[c] = 33
	}
	for c := 'a'; c <= 'z'; c++ {
		asciiTypes[c] = 1
	}
	for c := 'A'; c <= 'Z'; c++ {
		asciiTypes[c] = 1
	}
	asciiTypes['_'] = 1
	asciiTypes['?'] = 1
	asciiTypes['!'] = 2
	asciiTypes['<'] = 2
	asciiTypes['='] = 2
	asciiTypes['>'] = 2
}

// typeOf is LiquidJS's TYPES table for the rune.
func typeOf(r rune) uint8 {
	if r < 128 {
		if r < 0 {
			return 0
		}
		return asciiTypes[r]
	}
	switch r {
	case 160, 5760, 6158, 8232, 8233, 8239, 8287, 12288:
		return cBlank
	case 8220, 8221:
		return 128
	}
	if r >= 8192 && r <= 8202 {
		return cBlank
	}
	return 0
}

// isWordRune is LiquidJS's isWord.
func isWordRune(r rune) bool {
	if r >= 128 {
		return typeOf(r) == 0
	}
	return r >= 0 && asciiTypes[r]&cWord != 0
}

// tokenizer reads src[p:n].
type tokenizer struct {
	src  string
	p, n int
}

func newTokenizer(src string, begin, end int) *tokenizer {
	return &tokenizer{src: src, p: begin, n: end}
}

func (t *tokenizer) end() bool { return t.p >= t.n }

// peekRune is the rune at p+off bytes (-1 past the end).
func (t *tokenizer) peekAt(i int) (rune, int) {
	if i >= t.n {
		return -1, 0
	}
	c := t.src[i]
	if c < utf8.RuneSelf {
		return rune(c), 1
	}
	r, size := utf8.DecodeRuneInString(t.src[i:t.n])
	return r, size
}

func (t *tokenizer) peek() byte {
	if t.p >= t.n {
		return 0
	}
	return t.src[t.p]
}

func (t *tokenizer) peekN(k int) byte {
	if t.p+k >= t.n {
		return 0
	}
	return t.src[t.p+k]
}

func (t *tokenizer) skipBlank() {
	for {
		r, size := t.peekAt(t.p)
		if size == 0 || typeOf(r)&cBlank == 0 {
			return
		}
		t.p += size
	}
}

func (t *tokenizer) match(word string) bool { return strings.HasPrefix(t.src[t.p:], word) }

func (t *tokenizer) rmatch(word string) bool {
	return t.p >= len(word) && t.src[t.p-len(word):t.p] == word
}

// readTo moves past the next occurrence of end; -1 when there is none.
func (t *tokenizer) readTo(end string) int {
	for t.p < t.n {
		t.p++
		if t.rmatch(end) {
			return t.p
		}
	}
	return -1
}

func (t *tokenizer) readIdentifier() (begin, end int) {
	t.skipBlank()
	begin = t.p
	for {
		r, size := t.peekAt(t.p)
		if size == 0 || !isWordRune(r) {
			return begin, t.p
		}
		t.p += size
	}
}

func (t *tokenizer) snapshot(begin int) string {
	s := t.src[begin:t.n]
	if jsvalue.Len16(s) > 32 {
		s = truncate16(s, 29) + "..."
	}
	return JSONStringify(s, "")
}

// truncate16 keeps the first n UTF-16 units of s (whole runes).
func truncate16(s string, n int) string {
	k := 0
	for i, r := range s {
		w := 1
		if r >= 0x10000 {
			w = 2
		}
		if k+w > n {
			return s[:i]
		}
		k += w
	}
	return s
}

func (t *tokenizer) errorf(pos int, format string, a ...any) *Error {
	return errorf(pos, format, a...)
}

// token kinds of the top level.
type topKind int

const (
	kindHTML topKind = iota
	kindTag
	kindOutput
)

// topToken is text, a tag or an output.
type topToken struct {
	kind       topKind
	begin, end int // the whole token
	// delimited tokens: the content without delimiters, dashes and blanks
	cBegin, cEnd        int
	trimLeft, trimRight bool
	name                string // tags
	argsBegin           int    // tags: where the arguments start
	// text: bytes trimmed by whitespace control
	tl, tr int
}

func (tk *topToken) text(src string) string { return src[tk.begin:tk.end] }

func (tk *topToken) htmlContent(src string) string { return src[tk.begin+tk.tl : tk.end-tk.tr] }

// readTopLevel splits a template into text, tags and outputs, and applies
// whitespace control.
func readTopLevel(src string) ([]*topToken, error) {
	t := newTokenizer(src, 0, len(src))
	var toks []*topToken
	rawBeginAt := -1
	for t.p < t.n {
		var tk *topToken
		var err error
		switch {
		case rawBeginAt > -1:
			tk, err = t.readEndrawOrRawContent(&rawBeginAt)
		case t.match("{%"):
			begin := t.p
			if t.readToDelimiter("%}", false) == -1 {
				return nil, t.errorf(begin, "tag %s not closed", t.snapshot(begin))
			}
			tk, err = newTagToken(src, begin, t.p)
			if err == nil && tk.name == "raw" {
				rawBeginAt = begin
			}
		case t.match("{{"):
			begin := t.p
			if t.readToDelimiter("}}", true) == -1 {
				return nil, t.errorf(begin, "output %s not closed", t.snapshot(begin))
			}
			tk = newDelimited(kindOutput, src, begin, t.p, begin+2, t.p-2)
		default:
			begin := t.p
			for t.p < t.n && !t.match("{%") && !t.match("{{") {
				t.p++
			}
			tk = &topToken{kind: kindHTML, begin: begin, end: t.p}
		}
		if err != nil {
			return nil, err
		}
		toks = append(toks, tk)
	}
	whitespaceControl(src, toks)
	return toks, nil
}

func (t *tokenizer) readToDelimiter(delim string, respectQuoted bool) int {
	t.skipBlank()
	for t.p < t.n {
		if respectQuoted && (t.peek() == '"' || t.peek() == '\'') {
			t.readQuoted()
			continue
		}
		t.p++
		if t.rmatch(delim) {
			return t.p
		}
	}
	return -1
}

func (t *tokenizer) readEndrawOrRawContent(rawBeginAt *int) (*topToken, error) {
	begin := t.p
	leftPos := t.readTo("{%") - 2
	for t.p < t.n {
		b, e := t.readIdentifier()
		if t.src[b:e] != "endraw" {
			leftPos = t.readTo("{%") - 2
			continue
		}
		for t.p <= t.n {
			if t.rmatch("%}") {
				end := t.p
				if begin == leftPos {
					*rawBeginAt = -1
					return newTagToken(t.src, begin, end)
				}
				t.p = leftPos
				return &topToken{kind: kindHTML, begin: begin, end: leftPos}, nil
			}
			if t.rmatch("{%") {
				break
			}
			t.p++
		}
	}
	return nil, t.errorf(begin, "raw %s not closed", t.snapshot(*rawBeginAt))
}

func newDelimited(kind topKind, src string, begin, end, cBegin, cEnd int) *topToken {
	tk := &topToken{kind: kind, begin: begin, end: end}
	tl := cBegin < len(src) && src[cBegin] == '-'
	tr := cEnd-1 >= 0 && cEnd-1 < len(src) && src[cEnd-1] == '-'
	l, r := cBegin, cEnd
	if tl {
		l++
	}
	if tr {
		r--
	}
	t := newTokenizer(src, l, r)
	t.skipBlank()
	l = t.p
	for r > l {
		c, size := utf8.DecodeLastRuneInString(src[l:r])
		if typeOf(c)&cBlank == 0 {
			break
		}
		r -= size
	}
	tk.cBegin, tk.cEnd, tk.trimLeft, tk.trimRight = l, r, tl, tr
	return tk
}

func newTagToken(src string, begin, end int) (*topToken, error) {
	tk := newDelimited(kindTag, src, begin, end, begin+2, end-2)
	t := newTokenizer(src, tk.cBegin, tk.cEnd)
	name, err := t.readTagName()
	if err != nil {
		return nil, err
	}
	tk.name = name
	t.skipBlank()
	tk.argsBegin = t.p
	return tk, nil
}

func (t *tokenizer) readTagName() (string, error) {
	t.skipBlank()
	if t.peek() == '#' {
		t.p++
		return "#", nil
	}
	b, e := t.readIdentifier()
	if b == e {
		return "", t.errorf(b, "illegal tag syntax, tag name expected")
	}
	return t.src[b:e], nil
}

func whitespaceControl(src string, toks []*topToken) {
	inRaw := false
	for i, tk := range toks {
		if tk.kind == kindHTML {
			continue
		}
		if !inRaw && tk.trimLeft && i > 0 {
			trimEnd(src, toks[i-1])
		}
		if tk.kind == kindTag {
			switch tk.name {
			case "raw":
				inRaw = true
			case "endraw":
				inRaw = false
			}
		}
		if !inRaw && tk.trimRight && i+1 < len(toks) {
			trimStart(src, toks[i+1])
		}
	}
}

// trimEnd trims the blanks at the end of a text token (greedy).
func trimEnd(src string, tk *topToken) {
	if tk.kind != kindHTML {
		return
	}
	for tk.end-tk.tr > tk.begin+tk.tl {
		r, size := utf8.DecodeLastRuneInString(src[tk.begin+tk.tl : tk.end-tk.tr])
		if typeOf(r)&cBlank == 0 {
			return
		}
		tk.tr += size
	}
}

func trimStart(src string, tk *topToken) {
	if tk.kind != kindHTML {
		return
	}
	for tk.begin+tk.tl < tk.end-tk.tr {
		r, size := utf8.DecodeRuneInString(src[tk.begin+tk.tl : tk.end-tk.tr])
		if typeOf(r)&cBlank == 0 {
			break
		}
		tk.tl += size
	}
	if tk.begin+tk.tl < tk.end-tk.tr && src[tk.begin+tk.tl] == '\n' {
		tk.tl++
	}
}
