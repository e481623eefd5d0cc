package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestHTMLToText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "Hello Ada", "Hello Ada"},
		{"paragraphs", "<p>Hello <b>Ada</b></p><p>Second&nbsp;line &amp; more</p>", "Hello Ada\n\nSecond line & more"},
		{"breaks", "one<br>two<br/>three", "one\ntwo\nthree"},
		{"list", "<ul><li>a</li><li>b</li></ul>", "- a\n- b"},
		{"link", `<a href="https://x.test/a?b=1&amp;c=2">Open</a>`, "Open (https://x.test/a?b=1&c=2)"},
		{"link text is the url", `<a href='https://x.test'>https://x.test</a>`, "https://x.test"},
		{"scripts and styles dropped", "<style>p{color:red}</style><script>alert('<p>')</script>Hi", "Hi"},
		{"comments dropped", "a<!-- <p>hidden</p> -->b", "ab"},
		{"quoted >", `<img alt="a>b" src="x">after`, "after"},
		{"lone lt", "1 < 2 and 3 > 2", "1 < 2 and 3 > 2"},
		{"whole document", "<html><head><title>T</title></head><body><h1>Title</h1><table><tr><td>a</td><td>b</td></tr></table></body></html>", "Title\n\na b"},
		{"unterminated tag", "text <b", "text <b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, htmlToText(tc.in))
		})
	}
}

func FuzzHTMLToText(f *testing.F) {
	f.Add("<p>Hello <b>Ada</b></p>")
	f.Add(`<a href="x">y</a><script>`)
	f.Fuzz(func(t *testing.T, s string) {
		out := htmlToText(s)
		if !strings.Contains(s, "&") && !strings.Contains(s, "<!") {
			// Tags come only from the input's own '<': none is made.
			require.LessOrEqual(t, strings.Count(out, "<"), strings.Count(s, "<"))
		}
	})
}

// TestHTMLToTextLinear: hostile markup (a body is up to 1 MiB) stays linear.
func TestHTMLToTextLinear(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		strings.Repeat("<style>x</style>", 65_000),
		strings.Repeat(`<a href="u">`, 70_000) + strings.Repeat("</a>", 70_000),
		strings.Repeat("<script>", 100_000),
		strings.Repeat("<", 500_000),
	} {
		start := time.Now()
		htmlToText(in)
		require.Less(t, time.Since(start), 2*time.Second, "%.20s…", in) // quadratic: tens of seconds
	}
}
