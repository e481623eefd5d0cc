package liquid

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/herald-notify/herald/internal/jsvalue"
)

// The expected values in this file are what LiquidJS 10.30.1, configured
// by Novu (@novu/framework's createLiquidEngine), gave for the same filter
// call under node 20 with TZ=UTC and Date.now() fixed at fTestNow; each is
// written as fRepr writes the filter's result (n: for numbers, undefined
// and null told apart, ERR and the message for a thrown error).

var fTestNow = time.UnixMilli(1709632029123) // 2024-03-05T09:47:09.123Z

// fObj builds an object from key, value pairs, keeping their order.
func fObj(kv ...any) *Map {
	m := NewMap(len(kv) / 2)
	for i := 0; i+1 < len(kv); i += 2 {
		m.Set(kv[i].(string), kv[i+1])
	}
	return m
}

// fRepr writes a value unambiguously: strings as JSON.stringify quotes
// them, numbers as n:String(n), objects with their keys in order.
func fRepr(v any) string {
	switch t := v.(type) {
	case nil:
		return "undefined"
	case nullType:
		return "null"
	case float64:
		return "n:" + jsvalue.NumberToString(t)
	case bool:
		return fmt.Sprint(t)
	case string:
		return JSONStringify(t, "")
	case []any:
		parts := make([]string, len(t))
		for i, x := range t {
			parts[i] = fRepr(x)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case *Map:
		parts := make([]string, 0, t.Len())
		for _, k := range t.Keys() {
			x, _ := t.Get(k)
			parts = append(parts, fRepr(k)+": "+fRepr(x))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprintf("?%#v", v)
}

func fCall(t *testing.T, c *Context, name string, in any, args []any) string {
	t.Helper()
	fn := filters[name]
	if fn == nil {
		t.Fatalf("filter %s is not registered", name)
	}
	out, err := fn(c, in, args)
	if err != nil {
		return "ERR " + err.Error()
	}
	return fRepr(out)
}

var filterCases = []struct {
	name, filter string
	in           any
	args         []any
	want         string
}{
	{"divided_by float", "divided_by", 1999.0, []any{100.0}, "n:19.99"},
	{"divided_by half", "divided_by", 7.0, []any{2.0}, "n:3.5"},
	{"divided_by integer arithmetic", "divided_by", 7.0, []any{2.0, true}, "n:3"},
	{"divided_by falsy third", "divided_by", 7.0, []any{2.0, false}, "n:3.5"},
	{"divided_by zero", "divided_by", 10.0, []any{0.0}, "n:Infinity"},
	{"divided_by negative zero", "divided_by", -10.0, []any{0.0}, "n:-Infinity"},
	{"divided_by zero by zero", "divided_by", 0.0, []any{0.0}, "n:NaN"},
	{"divided_by strings", "divided_by", "10", []any{"4"}, "n:2.5"},
	{"divided_by non-numeric divisor", "divided_by", 5.0, []any{"abc"}, "n:Infinity"},
	{"divided_by missing divisor", "divided_by", 5.0, nil, "n:NaN"},
	{"divided_by floor negative", "divided_by", -7.0, []any{2.0, 1.0}, "n:-4"},
	{"plus big integer prints plainly", "plus", 1000000.0, []any{191.0}, "n:1000191"},
	{"plus float noise", "plus", 0.1, []any{0.2}, "n:0.30000000000000004"},
	{"plus strings", "plus", "3", []any{"4"}, "n:7"},
	{"plus missing", "plus", 3.0, nil, "n:NaN"},
	{"plus null", "plus", Null, []any{2.0}, "n:2"},
	{"times 1e21", "times", 1e+20, []any{10.0}, "n:1e+21"},
	{"times tiny", "times", 1e-08, []any{10.0}, "n:1e-7"},
	{"times fraction", "times", 3.0, []any{1.5}, "n:4.5"},
	{"minus", "minus", 4.0, []any{6.5}, "n:-2.5"},
	{"minus array input", "minus", []any{5.0}, []any{1.0}, "n:4"},
	{"modulo negative dividend", "modulo", -7.0, []any{3.0}, "n:2"},
	{"modulo negative divisor", "modulo", 7.0, []any{-3.0}, "n:-2"},
	{"modulo fraction", "modulo", 5.5, []any{2.0}, "n:1.5"},
	{"modulo zero", "modulo", 5.0, []any{0.0}, "n:NaN"},
	{"round 1.005 to 2", "round", 1.005, []any{2.0}, "n:1.01"},
	{"round -2.5", "round", -2.5, nil, "n:-3"},
	{"round 2.5", "round", 2.5, nil, "n:3"},
	{"round 1.45 to 1", "round", 1.45, []any{1.0}, "n:1.5"},
	{"round negative digits", "round", 1234.5678, []any{-2.0}, "n:1200"},
	{"round string digits", "round", 2.675, []any{"2"}, "n:2.68"},
	{"round huge stays", "round", 1e+21, []any{2.0}, "n:1e+21"},
	{"round tiny exponent", "round", 5e-07, []any{6.0}, "n:0.000001"},
	{"round fractional digits", "round", 1.5, []any{1.5}, "n:1.5"},
	{"round string input", "round", "3.7", nil, "n:4"},
	{"abs", "abs", "-3", nil, "n:3"},
	{"ceil", "ceil", 1.2, nil, "n:2"},
	{"ceil negative", "ceil", -0.5, nil, "n:0"},
	{"floor", "floor", -1.2, nil, "n:-2"},
	{"at_least", "at_least", 5.0, []any{10.0}, "n:10"},
	{"at_least many", "at_least", 5.0, []any{1.0, 7.0}, "n:7"},
	{"at_least no arg", "at_least", 5.0, nil, "n:5"},
	{"at_most", "at_most", 5.0, []any{"3"}, "n:3"},
	{"at_most NaN-ish", "at_most", "abc", []any{3.0}, "n:0"},
	{"capitalize", "capitalize", "hELLO wORLD", nil, "\"Hello world\""},
	{"capitalize sharp s", "capitalize", "ßtraße", nil, "\"SStraße\""},
	{"capitalize astral first", "capitalize", "𐐨abc", nil, "\"𐐨abc\""},
	{"upcase sharp s", "upcase", "straße", nil, "\"STRASSE\""},
	{"upcase ligature", "upcase", "ﬁne ŉ", nil, "\"FINE ʼN\""},
	{"downcase final sigma", "downcase", "ΟΔΟΣ ΣΑΣ", nil, "\"οδος σας\""},
	{"downcase dotted I", "downcase", "İstanbul", nil, "\"i\u0307stanbul\""},
	{"downcase number", "downcase", 12.0, nil, "\"12\""},
	{"append", "append", "a", []any{"b"}, "\"ab\""},
	{"append number", "append", 1.0, []any{2.0}, "\"12\""},
	{"append nil", "append", Null, []any{nil}, "\"\""},
	{"append missing argument", "append", "a", nil, "ERR append expect 2 arguments"},
	{"append two arguments", "append", "a", []any{"b", "c"}, "ERR append expect 2 arguments"},
	{"prepend", "prepend", "a", []any{"b"}, "\"ba\""},
	{"lstrip", "lstrip", " \t\u00a0a ", nil, "\"a \""},
	{"rstrip", "rstrip", " a \u3000\n", nil, "\" a\""},
	{"strip", "strip", "\ufeff a b \u2028", nil, "\"a b\""},
	{"strip chars", "strip", "xxhixyx", []any{"xy"}, "\"hi\""},
	{"lstrip chars", "lstrip", "😀😀a😀", []any{"😀"}, "\"a😀\""},
	{"rstrip chars", "rstrip", "abcba", []any{"ab"}, "\"abc\""},
	{"strip nil literal chars", "strip", " a ", []any{nilDrop{}}, "\" a \""},
	{"strip zero chars", "strip", " a ", []any{0.0}, "\"a\""},
	{"remove", "remove", "a-b-c", []any{"-"}, "\"abc\""},
	{"remove empty", "remove", "abc", []any{""}, "\"abc\""},
	{"remove_first", "remove_first", "a-b-c", []any{"-"}, "\"ab-c\""},
	{"remove_last", "remove_last", "a-b-c", []any{"-"}, "\"a-bc\""},
	{"replace", "replace", "a.b.c", []any{".", "::"}, "\"a::b::c\""},
	{"replace empty pattern", "replace", "abc", []any{"", "-"}, "\"a-b-c\""},
	{"replace missing replacement", "replace", "abc", []any{"b"}, "\"ac\""},
	{"replace_first", "replace_first", "aaa", []any{"a", "$&b"}, "\"$&baa\""},
	{"replace_first empty", "replace_first", "abc", []any{"", "X"}, "\"Xabc\""},
	{"replace_last", "replace_last", "a1a1", []any{"a", "b"}, "\"a1b1\""},
	{"replace_last empty", "replace_last", "abc", []any{"", "X"}, "\"abcX\""},
	{"split drops trailing empties", "split", "a,b,,c,,", []any{","}, "[\"a\", \"b\", \"\", \"c\"]"},
	{"split empty separator", "split", "abc", []any{""}, "[\"a\", \"b\", \"c\"]"},
	{"split empty string", "split", "", []any{","}, "[]"},
	{"split no separator", "split", "ab c", nil, "[\"a\", \"b\", \" \", \"c\"]"},
	{"split only separators", "split", ",,", []any{","}, "[]"},
	{"strip_newlines", "strip_newlines", "a\r\nb\nc\rd", nil, "\"abc\\rd\""},
	{"newline_to_br", "newline_to_br", "a\r\nb\nc\rd", nil, "\"a<br />\\nb<br />\\nc\\rd\""},
	{"squish", "squish", "  a \t\n b\u00a0 c  ", nil, "\"a b c\""},
	{"normalize_whitespace", "normalize_whitespace", "  a \t\n b  ", nil, "\" a b \""},
	{"truncate", "truncate", "Ground control to Major Tom.", []any{20.0}, "\"Ground control to...\""},
	{"truncate custom ellipsis", "truncate", "Ground control to Major Tom.", []any{25.0, ", and so on"}, "\"Ground control, and so on\""},
	{"truncate empty ellipsis", "truncate", "Ground control to Major Tom.", []any{20.0, ""}, "\"Ground control to Ma\""},
	{"truncate code points", "truncate", "😀😀😀😀😀😀", []any{5.0}, "\"😀😀...\""},
	{"truncate returns input unchanged", "truncate", 123.0, []any{5.0}, "n:123"},
	{"truncate default 50", "truncate", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", nil, "\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...\""},
	{"truncate non-numeric length", "truncate", "hello", []any{"abc"}, "\"...\""},
	{"truncate string length", "truncate", "hello world", []any{"8"}, "\"hello...\""},
	{"truncatewords", "truncatewords", "Ground control to Major Tom.", []any{3.0}, "\"Ground control to...\""},
	{"truncatewords exact count adds ellipsis", "truncatewords", "a b c", []any{3.0}, "\"a b c...\""},
	{"truncatewords zero", "truncatewords", "a b c", []any{0.0}, "\"a...\""},
	{"truncatewords custom", "truncatewords", "  a\tb\nc d", []any{2.0, "--"}, "\"a b--\""},
	{"number_of_words", "number_of_words", "Hello  world, 世界 !", nil, "n:4"},
	{"number_of_words cjk", "number_of_words", "Hello  world, 世界 !", []any{"cjk"}, "n:5"},
	{"number_of_words auto", "number_of_words", "Hello 世界", []any{"auto"}, "n:3"},
	{"number_of_words auto without cjk", "number_of_words", "Hello world", []any{"auto"}, "n:2"},
	{"number_of_words empty", "number_of_words", "   ", nil, "n:0"},
	{"array_to_sentence_string", "array_to_sentence_string", []any{"a", "b", "c"}, nil, "\"a, b, and c\""},
	{"array_to_sentence_string two", "array_to_sentence_string", []any{"a", Null}, []any{"or"}, "\"a or null\""},
	{"array_to_sentence_string one keeps type", "array_to_sentence_string", []any{5.0}, nil, "n:5"},
	{"array_to_sentence_string nested", "array_to_sentence_string", []any{[]any{1.0, 2.0}, Null, fObj("a", 1.0)}, nil, "\"1,2, , and [object Object]\""},
	{"size string utf16", "size", "😀a", nil, "n:3"},
	{"size array", "size", []any{1.0, 2.0, 3.0}, nil, "n:3"},
	{"size object", "size", fObj("a", 1.0, "b", 2.0), nil, "n:0"},
	{"size object with length", "size", fObj("length", "abc"), nil, "\"abc\""},
	{"size number", "size", 12345.0, nil, "n:0"},
	{"escape", "escape", "<a href=\"x\">'&'</a>", nil, "\"&lt;a href=&#34;x&#34;&gt;&#39;&amp;&#39;&lt;/a&gt;\""},
	{"xml_escape", "xml_escape", "a<b", nil, "\"a&lt;b\""},
	{"escape_once", "escape_once", "&lt;b&gt; & <i>", nil, "\"&lt;b&gt; &amp; &lt;i&gt;\""},
	{"escape nil", "escape", nil, nil, "\"\""},
	{"strip_html", "strip_html", "<p>Hi <b>there</b></p><!-- c --><script>var x = '<b>';</script><style>p{}</style>end", nil, "\"Hi thereend\""},
	{"strip_html unclosed", "strip_html", "a <b c", nil, "\"a <b c\""},
	{"strip_html unclosed script", "strip_html", "a<script>b<i>c</i>", nil, "\"abc\""},
	{"url_encode", "url_encode", "a b&c=d/é!~*'()", nil, "\"a+b%26c%3Dd%2F%C3%A9!~*'()\""},
	{"cgi_escape", "cgi_escape", "a b!'()*é", nil, "\"a+b%21%27%28%29%2A%C3%A9\""},
	{"uri_escape", "uri_escape", "http://x.y/a b/[1]?q=é#f", nil, "\"http://x.y/a%20b/[1]?q=%C3%A9#f\""},
	{"url_decode", "url_decode", "a+b%20c%E4%B8%AD%2B", nil, "\"a b c中+\""},
	{"url_decode malformed", "url_decode", "%E4%B8", nil, "ERR URI malformed"},
	{"url_decode bad escape", "url_decode", "100%", nil, "ERR URI malformed"},
	{"slugify", "slugify", "  Hello, World! Ça va?  ", nil, "\"hello-world-ça-va\""},
	{"slugify raw", "slugify", "Hello  World!", []any{"raw"}, "\"hello-world!\""},
	{"slugify pretty", "slugify", "Hello (World)!@x.y", []any{"pretty"}, "\"hello-(world)!@x.y\""},
	{"slugify ascii", "slugify", "Ça va, très bien", []any{"ascii"}, "\"a-va-tr-s-bien\""},
	{"slugify latin", "slugify", "Ça va, très bien ß Þ", []any{"latin"}, "\"ça-va-tres-bien-ss-th\""},
	{"slugify none", "slugify", "Ça Va", []any{"none"}, "\"ça va\""},
	{"slugify cased", "slugify", "Hello World", []any{"default", true}, "\"Hello-World\""},
	{"base64_encode", "base64_encode", "héllo", nil, "\"aMOpbGxv\""},
	{"base64_decode", "base64_decode", "aOl sbG8=", nil, "\"h�llo\""},
	{"base64_decode unpadded", "base64_decode", "YQ", nil, "\"a\""},
	{"base64_decode invalid", "base64_decode", "YQ=", nil, "ERR invalid base64 provided to base64_decode"},
	{"base64_decode invalid char", "base64_decode", "a-b_", nil, "ERR invalid base64 provided to base64_decode"},
	{"base64_decode bad utf8", "base64_decode", "/+JC", nil, "\"��B\""},
	{"sha256", "sha256", "abc", nil, "\"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\""},
	{"sha256 unicode", "sha256", "é", nil, "\"4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c\""},
	{"hmac_sha256", "hmac_sha256", "abc", []any{"key"}, "\"9c196e32dc0175f86f4b1cb89289d6619de6bee699e4c378e68309ed97a1a6ab\""},
	{"default nil", "default", nil, []any{"d"}, "\"d\""},
	{"default null", "default", Null, []any{"d"}, "\"d\""},
	{"default false", "default", false, []any{"d"}, "\"d\""},
	{"default false allow_false", "default", false, []any{"d", KV{"allow_false", true}}, "false"},
	{"default false allow_false falsy", "default", false, []any{"d", KV{"allow_false", 0.0}}, "\"d\""},
	{"default empty string", "default", "", []any{"d"}, "\"d\""},
	{"default empty array", "default", []any{}, []any{"d"}, "\"d\""},
	{"default zero stays", "default", 0.0, []any{"d"}, "n:0"},
	{"default non-entry argument", "default", false, []any{"d", 2.0}, "ERR Iterator value 2 is not an entry object"},
	{"default keyword as default", "default", false, []any{KV{"allow_false", true}}, "[\"allow_false\", true]"},
	{"default empty object stays", "default", fObj(), []any{"d"}, "{}"},
	{"to_integer", "to_integer", "12.5", nil, "n:12.5"},
	{"to_integer junk", "to_integer", "x", nil, "n:NaN"},
	{"to_integer undefined", "to_integer", nil, nil, "n:NaN"},
	{"jsonify", "jsonify", fObj("a", []any{1.0, "x", Null}, "b", "q\"\n"), nil, "\"{\\\"a\\\":[1,\\\"x\\\",null],\\\"b\\\":\\\"q\\\\\\\"\\\\n\\\"}\""},
	{"jsonify indent", "jsonify", fObj("a", []any{1.0}), []any{2.0}, "\"{\\n  \\\"a\\\": [\\n    1\\n  ]\\n}\""},
	{"jsonify undefined", "jsonify", nil, nil, "undefined"},
	{"inspect", "inspect", []any{1.0, fObj("a", true)}, nil, "\"[1,{\\\"a\\\":true}]\""},
	{"join", "join", []any{1.0, Null, "a", []any{2.0, 3.0}}, []any{"-"}, "\"1--a-2,3\""},
	{"join default separator", "join", []any{"a", "b"}, nil, "\"a b\""},
	{"join non-array", "join", "abc", []any{","}, "\"abc\""},
	{"first string", "first", "abc", nil, "\"a\""},
	{"last array", "last", []any{1.0, 2.0, 3.0}, nil, "n:3"},
	{"first empty array", "first", []any{}, nil, "undefined"},
	{"first number", "first", 5.0, nil, "\"\""},
	{"last object with length", "last", fObj("0", "z", "1", "y", "length", 2.0), nil, "\"y\""},
	{"reverse", "reverse", []any{1.0, "a", Null}, nil, "[null, \"a\", n:1]"},
	{"sort mixed with nulls last", "sort", []any{3.0, Null, 1.0, 10.0, 2.0}, nil, "[n:1, n:2, n:3, n:10, null]"},
	{"sort strings by code unit", "sort", []any{"b", "a", "B", "é", "😀", "Z"}, nil, "[\"B\", \"Z\", \"a\", \"b\", \"é\", \"😀\"]"},
	{"sort by property", "sort", []any{fObj("n", "b"), fObj("n", "a"), fObj(), fObj("n", "c")}, []any{"n"}, "[{\"n\": \"a\"}, {\"n\": \"b\"}, {\"n\": \"c\"}, {}]"},
	{"sort inconsistent mixed types", "sort", []any{10.0, "9", "a", 1.0, "b", 2.0, "10", Null}, nil, "[n:1, n:2, \"9\", n:10, \"10\", \"a\", \"b\", null]"},
	{"sort_natural", "sort_natural", []any{"b", "A", "c", "B", Null, "a"}, nil, "[\"A\", \"a\", \"b\", \"B\", \"c\", null]"},
	{"sort_natural by property", "sort_natural", []any{fObj("n", "b"), fObj("n", "A")}, []any{"n"}, "[{\"n\": \"A\"}, {\"n\": \"b\"}]"},
	{"map", "map", []any{fObj("a", fObj("b", 1.0)), fObj("a", fObj("b", 2.0)), fObj("c", 3.0)}, []any{"a.b"}, "[n:1, n:2, undefined]"},
	{"map non-array", "map", fObj("a", 1.0), []any{"a"}, "[n:1]"},
	{"sum", "sum", []any{1.0, "2", "x", Null, 3.5}, nil, "n:6.5"},
	{"sum property", "sum", []any{fObj("a", 1.0), fObj("a", "2"), fObj("b", 3.0)}, []any{"a"}, "n:3"},
	{"compact", "compact", []any{0.0, Null, false, "", 1.0}, nil, "[n:0, false, \"\", n:1]"},
	{"concat", "concat", []any{1.0, 2.0}, []any{[]any{3.0, []any{4.0}}}, "[n:1, n:2, n:3, [n:4]]"},
	{"concat scalar", "concat", 1.0, []any{"x"}, "[n:1, \"x\"]"},
	{"push", "push", []any{1.0}, []any{[]any{2.0}}, "[n:1, [n:2]]"},
	{"push undefined", "push", []any{1.0}, []any{nil}, "[n:1, undefined]"},
	{"unshift", "unshift", []any{1.0}, []any{0.0}, "[n:0, n:1]"},
	{"pop", "pop", []any{1.0, 2.0, 3.0}, nil, "[n:1, n:2]"},
	{"shift", "shift", []any{1.0, 2.0, 3.0}, nil, "[n:2, n:3]"},
	{"pop empty", "pop", []any{}, nil, "[]"},
	{"uniq", "uniq", []any{1.0, "1", 1.0, true, "a", "a", Null, Null, 2.0}, nil, "[n:1, \"1\", true, \"a\", null, n:2]"},
	{"uniq objects by reference", "uniq", []any{fObj("a", 1.0), fObj("a", 1.0)}, nil, "[{\"a\": n:1}, {\"a\": n:1}]"},
	{"slice string", "slice", "hello", []any{1.0, 3.0}, "\"ell\""},
	{"slice negative", "slice", "hello", []any{-3.0, 2.0}, "\"ll\""},
	{"slice array", "slice", []any{1.0, 2.0, 3.0, 4.0}, []any{1.0, 2.0}, "[n:2, n:3]"},
	{"slice code points", "slice", "😀a😀b", []any{1.0, 2.0}, "\"a😀\""},
	{"slice string no args", "slice", "abc", nil, "\"a\""},
	{"slice array no args", "slice", []any{1.0, 2.0, 3.0}, nil, "[]"},
	{"slice negative length", "slice", []any{1.0, 2.0, 3.0}, []any{1.0, -1.0}, "[]"},
	{"slice string begin", "slice", []any{1.0, 2.0, 3.0, 4.0, 5.0}, []any{"1", 2.0}, "[n:2, n:3, n:4, n:5]"},
	{"slice too negative", "slice", "abc", []any{-5.0}, "\"\""},
	{"slice number", "slice", 12345.0, []any{1.0, 2.0}, "\"23\""},
	{"where", "where", []any{fObj("a", 1.0, "n", "x"), fObj("a", 2.0, "n", "y"), fObj("a", 1.0, "n", "z")}, []any{"a", 1.0}, "[{\"a\": n:1, \"n\": \"x\"}, {\"a\": n:1, \"n\": \"z\"}]"},
	{"where truthy", "where", []any{fObj("ok", true), fObj("ok", false), fObj("ok", 0.0), fObj()}, []any{"ok"}, "[{\"ok\": true}, {\"ok\": n:0}]"},
	{"where nested path", "where", []any{fObj("a", fObj("b", []any{5.0})), fObj("a", fObj("b", []any{6.0}))}, []any{"a.b[0]", 6.0}, "[{\"a\": {\"b\": [n:6]}}]"},
	{"where string vs number", "where", []any{fObj("a", "1"), fObj("a", 1.0)}, []any{"a", 1.0}, "[{\"a\": n:1}]"},
	{"where empty literal", "where", []any{fObj("t", []any{}), fObj("t", []any{1.0})}, []any{"t", emptyDrop{}}, "[{\"t\": []}]"},
	{"where bad path", "where", []any{}, []any{"["}, "ERR [ not closed"},
	{"reject", "reject", []any{fObj("a", 1.0), fObj("a", 2.0)}, []any{"a", 1.0}, "[{\"a\": n:2}]"},
	{"where_exp", "where_exp", []any{fObj("a", 1.0), fObj("a", 5.0), fObj("a", 3.0)}, []any{"x", "x.a > 2"}, "[{\"a\": n:5}, {\"a\": n:3}]"},
	{"where_exp non-boolean is not true", "where_exp", []any{fObj("a", 1.0), fObj("a", 0.0)}, []any{"x", "x.a"}, "[]"},
	{"reject_exp", "reject_exp", []any{1.0, 2.0, 3.0}, []any{"n", "n == 2"}, "[n:1, n:3]"},
	{"where_exp invalid expression", "where_exp", []any{}, []any{"x", ""}, "ERR invalid value expression: \"\""},
	{"find", "find", []any{fObj("a", 1.0, "n", "x"), fObj("a", 2.0, "n", "y")}, []any{"a", 2.0}, "{\"a\": n:2, \"n\": \"y\"}"},
	{"find none", "find", []any{fObj("a", 1.0)}, []any{"a", 3.0}, "undefined"},
	{"find_index", "find_index", []any{fObj("a", 1.0), fObj("a", 2.0)}, []any{"a", 2.0}, "n:1"},
	{"find_index none", "find_index", []any{fObj("a", 1.0)}, []any{"a", 3.0}, "undefined"},
	{"has", "has", []any{fObj("a", 1.0), fObj("a", 2.0)}, []any{"a", 2.0}, "true"},
	{"has none", "has", []any{fObj("a", 1.0)}, []any{"a", 5.0}, "false"},
	{"find_exp", "find_exp", []any{fObj("a", 1.0), fObj("a", 2.0)}, []any{"x", "x.a > 1"}, "{\"a\": n:2}"},
	{"find_exp zero is falsy", "find_exp", []any{0.0, 1.0}, []any{"x", "x"}, "n:1"},
	{"find_index_exp", "find_index_exp", []any{5.0, 6.0, 7.0}, []any{"x", "x > 5"}, "n:1"},
	{"has_exp", "has_exp", []any{5.0, 6.0, 7.0}, []any{"x", "x > 6"}, "true"},
	{"group_by", "group_by", []any{fObj("t", "a", "v", 1.0), fObj("t", "b", "v", 2.0), fObj("t", "a", "v", 3.0), fObj("v", 4.0)}, []any{"t"}, "[{\"name\": \"a\", \"items\": [{\"t\": \"a\", \"v\": n:1}, {\"t\": \"a\", \"v\": n:3}]}, {\"name\": \"b\", \"items\": [{\"t\": \"b\", \"v\": n:2}]}, {\"name\": undefined, \"items\": [{\"v\": n:4}]}]"},
	{"group_by numbers and strings", "group_by", []any{fObj("k", 1.0), fObj("k", "1"), fObj("k", 1.0)}, []any{"k"}, "[{\"name\": n:1, \"items\": [{\"k\": n:1}, {\"k\": n:1}]}, {\"name\": \"1\", \"items\": [{\"k\": \"1\"}]}]"},
	{"group_by object entries", "group_by", fObj("x", 1.0, "y", 2.0), []any{"1"}, "[{\"name\": n:1, \"items\": [[\"x\", n:1]]}, {\"name\": n:2, \"items\": [[\"y\", n:2]]}]"},
	{"group_by_exp", "group_by_exp", []any{1.0, 2.0, 3.0, 4.0, 5.0}, []any{"n", "n | modulo: 2"}, "[{\"name\": n:1, \"items\": [n:1, n:3, n:5]}, {\"name\": n:0, \"items\": [n:2, n:4]}]"},
	{"date ISO Z", "date", "2024-03-05T22:07:09.123Z", []any{"%Y-%m-%d %H:%M:%S.%L %z %Z"}, "\"2024-03-05 22:07:09.123 +0000 UTC\""},
	{"date default format", "date", "2024-03-05T22:07:09.123Z", nil, "\"Tuesday, March 5, 2024 at 10:07 pm +0000\""},
	{"date nil format is default", "date", "2024-03-05T22:07:09.123Z", []any{Null}, "\"Tuesday, March 5, 2024 at 10:07 pm +0000\""},
	{"date date-only is UTC", "date", "2024-03-05", []any{"%Y-%m-%d %H:%M %z"}, "\"2024-03-05 00:00 +0000\""},
	{"date date-time without offset is local (UTC)", "date", "2024-03-05T10:00:00", []any{"%H:%M"}, "\"10:00\""},
	{"date with space separator", "date", "2024-03-05 10:00", []any{"%Y-%m-%d %H:%M"}, "\"2024-03-05 10:00\""},
	{"date offset", "date", "2024-03-05T10:00:00+05:30", []any{"%Y-%m-%d %H:%M"}, "\"2024-03-05 04:30\""},
	{"date offset hhmm", "date", "2024-03-05T10:00:00-0800", []any{"%Y-%m-%d %H:%M"}, "\"2024-03-05 18:00\""},
	{"date fraction digits", "date", "2024-03-05T10:00:00.98765Z", []any{"%L"}, "\"987\""},
	{"date long month name", "date", "March 5, 2024", []any{"%Y-%m-%d"}, "\"2024-03-05\""},
	{"date short month and time", "date", "Mar 5 2024 10:00", []any{"%Y-%m-%d %H:%M"}, "\"2024-03-05 10:00\""},
	{"date day month year", "date", "5 March 2024", []any{"%Y-%m-%d"}, "\"2024-03-05\""},
	{"date rfc 2822", "date", "Tue, 05 Mar 2024 10:00:00 GMT", []any{"%Y-%m-%d %H:%M"}, "\"2024-03-05 10:00\""},
	{"date rfc 2822 zone", "date", "Tue, 05 Mar 2024 10:00:00 +0100", []any{"%Y-%m-%d %H:%M"}, "\"2024-03-05 09:00\""},
	{"date slashes ymd", "date", "2024/03/05", []any{"%Y-%m-%d"}, "\"2024-03-05\""},
	{"date slashes mdy", "date", "03/05/2024", []any{"%Y-%m-%d"}, "\"2024-03-05\""},
	{"date month day without year", "date", "March 5", []any{"%Y-%m-%d"}, "\"2001-03-05\""},
	{"date two-digit year", "date", "3/5/49", []any{"%Y-%m-%d"}, "\"2049-03-05\""},
	{"date pm", "date", "Mar 5 2024 10:30 pm", []any{"%H:%M"}, "\"22:30\""},
	{"date day overflow", "date", "2024-02-31", []any{"%Y-%m-%d"}, "\"2024-03-02\""},
	{"date invalid month", "date", "2024-13-01", []any{"%Y-%m-%d"}, "\"2024-13-01\""},
	{"date invalid returns input", "date", "not a date", []any{"%Y"}, "\"not a date\""},
	{"date seconds number", "date", 1709632029.0, []any{"%Y-%m-%d %H:%M:%S"}, "\"2024-03-05 09:47:09\""},
	{"date seconds string", "date", "1709632029", []any{"%Y-%m-%d %H:%M:%S"}, "\"2024-03-05 09:47:09\""},
	{"date fractional seconds", "date", 1.5, []any{"%s %L"}, "\"1 500\""},
	{"date negative seconds", "date", -86400.0, []any{"%Y-%m-%d"}, "\"1969-12-31\""},
	{"date now", "date", "now", []any{"%Y-%m-%d %H:%M:%S"}, "\"2024-03-05 09:47:09\""},
	{"date today", "date", "today", []any{"%Y-%m-%d"}, "\"2024-03-05\""},
	{"date nil input", "date", Null, []any{"%Y"}, "null"},
	{"date true is 1ms", "date", true, []any{"%Y %L"}, "\"1970 001\""},
	{"date out of range", "date", 8640000000001.0, []any{"%Y"}, "n:8640000000001"},
	{"strftime flags", "date", "2024-03-05T22:07:09.123Z", []any{"%-d|%_m|%010Y|%^a|%#B|%:z|%-H|%05e|%^p|%#p"}, "\"5| 3|0000002024|TUE|MARCH|+00:00|22|00005|PM|pm\""},
	{"strftime numbers", "date", "2024-03-05T22:07:09.123Z", []any{"%j|%U|%W|%u|%w|%y|%C|%e|%k|%l|%I|%p|%P|%q|%s"}, "\"065|09|10|2|2|24|20| 5|22|10|10|PM|pm|th|1709676429\""},
	{"strftime nanoseconds", "date", "2024-03-05T22:07:09.123Z", []any{"%N|%3N|%6N|%12N|%1N"}, "\"123000000|123|123000|123000000000|1\""},
	{"strftime locale", "date", "2024-03-05T22:07:09.123Z", []any{"%c|%x|%X"}, "\"3/5/2024, 10:07:09 PM|3/5/2024|10:07:09 PM\""},
	{"strftime names", "date", "2024-03-05T22:07:09.123Z", []any{"%a %A %b %B %h"}, "\"Tue Tuesday Mar March Mar\""},
	{"strftime literal", "date", "2024-03-05T22:07:09.123Z", []any{"%% %t%n %Q %E %Oy %Ey %"}, "\"% \\t\\n %Q %E 24 24 %\""},
	{"strftime widths", "date", "2024-03-05T22:07:09.123Z", []any{"%10A|%3d|%-5d|%_3S|%1Y"}, "\"   Tuesday|005|5|  9|2024\""},
	{"strftime ordinal", "date", "2024-03-22", []any{"%e%q %-e"}, "\"22nd 22\""},
	{"date timezone name", "date", "2024-03-05T22:07:09.123Z", []any{"%Y-%m-%d %H:%M %Z %z", "America/New_York"}, "\"2024-03-05 17:07 America/New_York -0500\""},
	{"date timezone name lower case", "date", "2024-03-05T22:07:09.123Z", []any{"%H:%M %Z", "asia/kolkata"}, "\"03:37 asia/kolkata\""},
	{"date timezone minutes", "date", "2024-03-05T22:07:09.123Z", []any{"%H:%M %Z %z", 60.0}, "\"21:07 -0100 -0100\""},
	{"date timezone negative minutes", "date", "2024-03-05T22:07:09.123Z", []any{"%H:%M %Z %:z", -330.0}, "\"03:37 +0530 +05:30\""},
	{"date timezone historical", "date", "1800-03-05T22:07:09Z", []any{"%H:%M:%S %z", "America/New_York"}, "\"17:11:07 -0456.03333333333336\""},
	{"date bad timezone", "date", "2024-03-05T22:07:09.123Z", []any{"%H", "Bogus/Zone"}, "ERR Invalid time zone specified: Bogus/Zone"},
	{"date bad timezone invalid date", "date", "x", []any{"%H", "Bogus/Zone"}, "\"x\""},
	{"date_to_xmlschema", "date_to_xmlschema", "2024-03-05T22:07:09.123Z", nil, "\"2024-03-05T22:07:09+00:00\""},
	{"date_to_rfc822", "date_to_rfc822", "2024-03-05T22:07:09.123Z", nil, "\"Tue, 05 Mar 2024 22:07:09 +0000\""},
	{"date_to_string", "date_to_string", "2024-03-05T22:07:09.123Z", nil, "\"05 Mar 2024\""},
	{"date_to_string ordinal", "date_to_string", "2024-03-01", []any{"ordinal"}, "\"1st Mar 2024\""},
	{"date_to_string ordinal US", "date_to_string", "2024-03-02", []any{"ordinal", "US"}, "\"Mar 2nd, 2024\""},
	{"date_to_long_string", "date_to_long_string", "2024-03-13", []any{"ordinal"}, "\"13th March 2024\""},
	{"json object single quotes", "json", fObj("a", "b\"c", "d", []any{1.0, Null}), nil, "\"{'a':'b\\\\'c','d':[1,null]}\""},
	{"json indent escapes newlines", "json", fObj("a", []any{1.0}), []any{2.0}, "\"{\\\\n  'a': [\\\\n    1\\\\n  ]\\\\n}\""},
	{"json string as is", "json", "a\"b", nil, "\"a\\\"b\""},
	{"json number", "json", 1e+21, nil, "\"1e+21\""},
	{"json null", "json", Null, nil, "\"\""},
	{"json undefined", "json", nil, nil, "\"\""},
	{"digest", "digest", []any{"a", "b", "c", "d"}, nil, "\"a, b and 2 others\""},
	{"digest fits", "digest", []any{"a", "b", "c"}, []any{3.0}, "\"a, b and c\""},
	{"digest one keeps type", "digest", []any{5.0}, nil, "n:5"},
	{"digest two", "digest", []any{"a", Null}, nil, "\"a and null\""},
	{"digest key path", "digest", []any{fObj("n", "Ann"), fObj("n", "Bob"), fObj("n", "Cy")}, []any{1.0, "n"}, "\"Ann and 2 others\""},
	{"digest separator", "digest", []any{"a", "b", "c", "d"}, []any{3.0, Null, " | "}, "\"a | b | c and 1 other\""},
	{"digest one other", "digest", []any{"a", "b", "c"}, []any{2.0}, "\"a, b and 1 other\""},
	{"digest not array", "digest", "abc", nil, "\"\""},
	{"toSentence", "toSentence", []any{"a", "b", "c", "d"}, nil, "\"a, b, and 2 others\""},
	{"toSentence fits", "toSentence", []any{"a", "b", "c"}, nil, "\"a, b, and 1 other\""},
	{"toSentence two", "toSentence", []any{"a", "b"}, nil, "\"a and b\""},
	{"toSentence limit one", "toSentence", []any{"a", "b", "c"}, []any{"", 1.0}, "\"a and 2 others\""},
	{"toSentence suffix pluralized", "toSentence", []any{"a", "b", "c", "d"}, []any{"", 2.0, "person"}, "\"a, b, and 2 people\""},
	{"toSentence connectors", "toSentence", []any{"a", "b", "c"}, []any{"", 3.0, "x", "; ", " & ", "; & "}, "\"a; b; & c\""},
	{"toSentence key path", "toSentence", []any{fObj("n", fObj("m", "A")), fObj("n", fObj("m", "B")), fObj("x", 1.0)}, []any{"n.m", 5.0}, "\"A, B, and \""},
	{"toSentence key path object", "toSentence", []any{fObj("n", fObj("m", "A")), fObj("n", fObj())}, []any{"n"}, "\"{\\\"m\\\":\\\"A\\\"} and \""},
	{"pluralize", "pluralize", 2.0, []any{"item"}, "\"2 items\""},
	{"pluralize one", "pluralize", 1.0, []any{"item"}, "\"1 item\""},
	{"pluralize zero", "pluralize", 0.0, []any{"item"}, "\"\""},
	{"pluralize fraction", "pluralize", 1.5, []any{"Person"}, "\"1.5 People\""},
	{"pluralize array count", "pluralize", []any{1.0, 2.0, 3.0}, []any{"box"}, "\"3 boxes\""},
	{"pluralize object count", "pluralize", fObj("a", 1.0), []any{"child"}, "\"1 child\""},
	{"pluralize string count", "pluralize", "3", []any{"mouse"}, "\"3 mice\""},
	{"pluralize explicit plural", "pluralize", 2.0, []any{"child", "kids"}, "\"2 kids\""},
	{"pluralize explicit singular", "pluralize", 1.0, []any{"child", "kids"}, "\"1 child\""},
	{"pluralize no count", "pluralize", 2.0, []any{"item", "", "false"}, "\"items\""},
	{"pluralize boolean showCount", "pluralize", 2.0, []any{"item", "", true}, "\"items\""},
	{"pluralize uncountable", "pluralize", 2.0, []any{"sheep"}, "\"2 sheep\""},
	{"pluralize case kept", "pluralize", 2.0, []any{"QUIZ"}, "\"2 QUIZZES\""},
	{"pluralize title case", "pluralize", 2.0, []any{"Knife"}, "\"2 Knives\""},
	{"pluralize irregular", "pluralize", 3.0, []any{"Person"}, "\"3 People\""},
	{"pluralize singular of plural", "pluralize", 1.0, []any{"women"}, "\"1 woman\""},
	{"pluralize rule y", "pluralize", 2.0, []any{"city"}, "\"2 cities\""},
	{"pluralize rule ss", "pluralize", 2.0, []any{"class"}, "\"2 classes\""},
	{"pluralize non-ascii", "pluralize", 2.0, []any{"café"}, "\"2 café\""},
	{"pluralize non-string word", "pluralize", 2.0, []any{5.0}, "ERR word.toLowerCase is not a function"},
	{"pluralize nil", "pluralize", Null, []any{"item"}, "\"\""},
	{"sort 90 mixed items (TimSort merges)", "sort", []any{"0", 37.0, 74.0, "10", 47.0, 84.0, "20", 57.0, 94.0, "30", 67.0, 3.0, "40", 77.0, 13.0, "50", 87.0, Null, "60", 97.0, 33.0, "70", 6.0, 43.0, "80", 16.0, 53.0, "90", 26.0, 63.0, "100", 36.0, 73.0, "9", Null, 83.0, "19", 56.0, 93.0, "29", 66.0, 2.0, "39", 76.0, 12.0, "49", 86.0, 22.0, "59", 96.0, 32.0, "69", 5.0, 42.0, "79", 15.0, 52.0, "89", 25.0, 62.0, "99", 35.0, 72.0, "8", 45.0, 82.0, "18", 55.0, Null, "28", 65.0, 1.0, "38", 75.0, 11.0, "48", 85.0, 21.0, "58", 95.0, 31.0, "68", 4.0, 41.0, "78", Null, 51.0, "88", 24.0, 61.0}, nil, "[\"0\", n:1, n:2, n:3, n:4, n:5, n:6, \"10\", n:11, n:12, n:13, n:15, n:16, \"18\", \"19\", \"20\", n:21, n:22, n:24, n:25, n:26, \"28\", \"29\", \"30\", n:31, n:32, n:33, n:35, n:36, n:37, \"38\", \"39\", \"40\", \"9\", n:41, n:42, n:43, n:45, n:47, \"48\", \"49\", \"50\", n:51, n:52, n:53, n:55, n:56, n:57, \"58\", \"59\", \"60\", n:62, \"68\", \"69\", \"8\", n:61, n:63, n:65, n:66, n:67, \"70\", n:72, n:73, n:74, n:75, n:76, n:77, n:83, n:93, \"100\", \"78\", \"79\", \"80\", n:82, n:84, n:85, n:86, n:87, \"88\", \"89\", \"90\", n:94, n:95, n:96, n:97, \"99\", null, null, null, null]"},
}

func TestFilters(t *testing.T) {
	for _, tc := range filterCases {
		t.Run(tc.name, func(t *testing.T) {
			c := newContext(NewNovu(), nil, nil, fTestNow)
			if got := fCall(t, c, tc.filter, tc.in, tc.args); got != tc.want {
				t.Errorf("%s %s %s:\n got %s\nwant %s", fRepr(tc.in), tc.filter, fRepr(tc.args), got, tc.want)
			}
		})
	}
}

// TestFilterNames checks that every filter of LiquidJS (but raw, which
// the engine does, and sample, which is random) and Novu's are there.
func TestFilterNames(t *testing.T) {
	want := strings.Fields(`escape xml_escape escape_once newline_to_br strip_html abs at_least
		at_most ceil divided_by floor minus plus modulo times round url_decode url_encode cgi_escape
		uri_escape slugify join last first reverse sort sort_natural size map sum compact concat push
		unshift pop shift slice where reject where_exp reject_exp group_by group_by_exp has has_exp
		find_index find_index_exp find find_exp uniq date date_to_xmlschema date_to_rfc822
		date_to_string date_to_long_string append prepend lstrip downcase upcase remove remove_first
		remove_last rstrip split strip strip_newlines squish capitalize replace replace_first
		replace_last truncate truncatewords normalize_whitespace number_of_words
		array_to_sentence_string base64_encode base64_decode sha256 hmac_sha256 default jsonify
		to_integer json inspect digest toSentence pluralize`)
	for _, n := range want {
		if filters[n] == nil {
			t.Errorf("filter %s is missing", n)
		}
	}
	got := FilterNames()
	sort.Strings(got)
	if len(got) < len(want) {
		t.Errorf("%d filters registered, want at least %d: %v", len(got), len(want), got)
	}
}

// fTestBudget refuses to make more than limit bytes at once.
type fTestBudget struct{ limit int }

func (fTestBudget) Tick() error    { return nil }
func (fTestBudget) Made(int) error { return nil }
func (b fTestBudget) WouldMake(n int) error {
	if n > b.limit {
		return errors.New("too big")
	}
	return nil
}

// TestFilterWouldMake checks that what an argument makes big is asked
// for before it is made.
func TestFilterWouldMake(t *testing.T) {
	c := newContext(NewNovu(), nil, fTestBudget{1 << 20}, fTestNow)
	for _, tc := range []struct {
		filter string
		in     any
		args   []any
	}{
		{"date", "2024-03-05", []any{"%100000000Y"}},
		{"date", "2024-03-05", []any{"%100000000N"}},
		{"join", []any{"a", "b", "c"}, []any{strings.Repeat("x", 1<<20)}},
		{"replace", strings.Repeat("a", 1000), []any{"a", strings.Repeat("x", 1<<11)}},
		{"replace", strings.Repeat("a", 1000), []any{"", strings.Repeat("x", 1<<11)}},
	} {
		if _, err := filters[tc.filter](c, tc.in, tc.args); err == nil || err.Error() != "too big" {
			t.Errorf("%s: err %v, want the budget's", tc.filter, err)
		}
	}
	// Widths JavaScript cannot make at all.
	c = newContext(NewNovu(), nil, nil, fTestNow)
	if _, err := filters["date"](c, "2024-03-05", []any{"%99999999999Y"}); err == nil {
		t.Error("a width past the longest string: no error")
	}
}

// TestFilterJSSortStable checks the sort against a plain stable sort where
// the order is consistent.
func TestFilterJSSortStable(t *testing.T) {
	for _, n := range []int{0, 1, 2, 63, 64, 65, 200, 1000, 5000} {
		keys := make([]any, n)
		for i := range keys {
			keys[i] = float64((i * 7919) % 97)
		}
		idx := fJSSort(keys, fOrderedCompare)
		want := make([]int, n)
		for i := range want {
			want[i] = i
		}
		sort.SliceStable(want, func(i, j int) bool { return keys[want[i]].(float64) < keys[want[j]].(float64) })
		for i := range want {
			if idx[i] != want[i] {
				t.Fatalf("n=%d: at %d got index %d want %d", n, i, idx[i], want[i])
			}
		}
	}
}

// TestFilterRoundTrip checks numbers that go through round and shift.
func TestFilterRoundTrip(t *testing.T) {
	if got := fShiftDecimal(1.005, 2); got != 100.5 {
		t.Errorf("shift 1.005 by 2 = %v", got)
	}
	if got := fShiftDecimal(math.Inf(1), 2); !math.IsNaN(got) {
		t.Errorf("shift Infinity = %v, want NaN", got)
	}
}
