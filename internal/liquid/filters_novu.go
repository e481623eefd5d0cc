package liquid

// The filters Novu registers over LiquidJS's: json (single-quoted JSON),
// digest, toSentence and pluralize (with the npm pluralize package's
// rules).

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/herald-notify/herald/internal/jsvalue"
)

func init() {
	register("json", filterNovuJSON)
	register("digest", filterDigest)
	register("toSentence", filterToSentence)
	register("pluralize", filterPluralize)
}

// json (Novu's, over LiquidJS's): arrays and objects as
// JSON.stringify(value, null, space) with every '"' made "'" and every
// newline "\n"; null and undefined ""; the rest String(value).
func filterNovuJSON(c *Context, v any, args []any) (any, error) {
	return NovuJSON(v, fJSONIndent(fArg(args, 0))), nil
}

// fNovuGet is Novu's keyPath lookup: the path's value as a string ("" for
// null, undefined and "{}"; JSON for arrays and objects).
func fNovuGet(item any, path any) (string, error) {
	p, ok := path.(string)
	if !ok {
		return "", errorf(0, "e.split is not a function")
	}
	v := item
	for _, k := range strings.Split(p, ".") {
		switch t := v.(type) {
		case []any:
			if k == "length" {
				v = float64(len(t))
			} else if i, ok := jsvalue.ArrayIndex(k); ok && i < len(t) {
				v = t[i]
			} else {
				v = nil
			}
		case *Map:
			v, _ = t.Get(k)
		default:
			v = nil
		}
	}
	switch t := v.(type) {
	case nil, nullType:
		return "", nil
	case string:
		return t, nil
	case float64, bool:
		return JSString(t), nil
	case []any, *Map:
		s := JSONStringify(t, "")
		if s == "{}" {
			return "", nil
		}
		return s, nil
	}
	return "", nil
}

// fNovuItems maps the items through keyPath when it is given: an item that
// is not an object is "".
func fNovuItems(arr []any, keyPath any) ([]any, error) {
	if !fTruthyJS(keyPath) {
		return arr, nil
	}
	out := make([]any, len(arr))
	for i, item := range arr {
		out[i] = ""
		switch item.(type) {
		case []any, *Map:
			s, err := fNovuGet(item, keyPath)
			if err != nil {
				return nil, err
			}
			out[i] = s
		}
	}
	return out, nil
}

// fJoinWith is Array.prototype.join(sep) where sep is a JavaScript value
// (undefined: ",").
func fJoinWith(c *Context, a []any, sep any) (string, error) {
	s := ","
	if sep != nil {
		s = fToStringJS(sep)
	}
	if err := fWouldMake(c, len(a)*len(s)); err != nil {
		return "", err
	}
	return arrayJoin(a, s), nil
}

// fSliceTo is a.slice(0, end) with end a JavaScript value.
func fSliceTo(a []any, end any) []any {
	return a[:fRelIndex(end, len(a))]
}

// digest: "a", "a and b", "a, b and c", or "a, b and 3 others" past the
// limit (2 by default); keyPath picks a property of each item.
func filterDigest(c *Context, v any, args []any) (any, error) {
	arr, ok := v.([]any)
	if !ok || len(arr) == 0 {
		return "", nil
	}
	limit := fArg(args, 0)
	if limit == nil {
		limit = 2.0
	}
	sep := fArg(args, 2)
	if sep == nil {
		sep = ", "
	}
	items, err := fNovuItems(arr, fArg(args, 1))
	if err != nil {
		return nil, err
	}
	switch len(items) {
	case 1:
		return items[0], nil
	case 2:
		return fToStringJS(items[0]) + " and " + fToStringJS(items[1]), nil
	}
	if fGreaterEq(limit, float64(len(items))) {
		head, err := fJoinWith(c, items[:len(items)-1], sep)
		return head + " and " + fToStringJS(items[len(items)-1]), err
	}
	rest := float64(len(items)) - fNumber(limit)
	others := "others"
	if rest == 1 {
		others = "other"
	}
	head, err := fJoinWith(c, fSliceTo(items, limit), sep)
	return head + " and " + jsvalue.NumberToString(rest) + " " + others, err
}

// toSentence(keyPath, limit, overflowSuffix, wordsConnector,
// twoWordsConnector, lastWordConnector): "a, b, and 2 others".
func filterToSentence(c *Context, v any, args []any) (any, error) {
	arr, ok := v.([]any)
	if !ok || len(arr) == 0 {
		return "", nil
	}
	def := func(i int, d any) any {
		if a := fArg(args, i); a != nil {
			return a
		}
		return d
	}
	limit := def(1, 2.0)
	suffix := def(2, "other")
	words := def(3, ", ")
	two := def(4, " and ")
	last := def(5, ", and ")
	items, err := fNovuItems(arr, def(0, ""))
	if err != nil {
		return nil, err
	}
	p := len(items)
	switch {
	case p == 1:
		return items[0], nil
	case p == 2:
		return fToStringJS(items[0]) + fToStringJS(two) + fToStringJS(items[1]), nil
	case fGreaterEq(limit, float64(p)):
		head, err := fJoinWith(c, items[:p-1], words)
		return head + fToStringJS(last) + fToStringJS(items[p-1]), err
	}
	rest := float64(p) - fNumber(limit)
	conn := last
	if limit == 1.0 {
		conn = two
	}
	word, err := fPluralizeWord(suffix, rest)
	if err != nil {
		return nil, err
	}
	head, err := fJoinWith(c, fSliceTo(items, limit), words)
	return head + fToStringJS(conn) + jsvalue.NumberToString(rest) + " " + word, err
}

// pluralize(singular, plural, showCount): "" for no or a non-positive
// count; the count of an array or object is its length, of a string or
// other value its number.
func filterPluralize(c *Context, v any, args []any) (any, error) {
	var n float64
	switch t := v.(type) {
	case nil, nullType:
		return "", nil
	case []any:
		n = float64(len(t))
	case *Map:
		n = float64(t.Len())
	case *Forloop:
		n = 3
		if t.table {
			n = 4
		}
	case Drop:
		n = 0
	default:
		n = jsNumber(t)
	}
	if n != n || n <= 0 {
		return "", nil
	}
	singular := fArg(args, 0)
	if singular == nil {
		singular = ""
	}
	plural := fArg(args, 1)
	showCount := fArg(args, 2)
	if showCount == nil {
		showCount = "true"
	}
	var word any
	if fTruthyJS(plural) {
		word = plural
		if n == 1 {
			word = singular
		}
	} else {
		w, err := fPluralizeWord(singular, n)
		if err != nil {
			return nil, err
		}
		word = w
	}
	if showCount == "true" {
		return jsvalue.NumberToString(n) + " " + fToStringJS(word), nil
	}
	return word, nil
}

// The npm pluralize package, version 8.

type fPluralRule struct {
	re   *regexp.Regexp
	repl string
}

var (
	fPluralRules, fSingularRules         []fPluralRule
	fUncountables                        = map[string]bool{}
	fIrregularPlurals, fIrregularSingles = map[string]string{}, map[string]string{}
	fInterpolate                         = regexp.MustCompile(`\$(\d{1,2})`)
)

func init() {
	rule := func(re string) *regexp.Regexp { return regexp.MustCompile("(?i)" + re) }
	for _, p := range [][2]string{
		{"I", "we"}, {"me", "us"}, {"he", "they"}, {"she", "they"}, {"them", "them"},
		{"myself", "ourselves"}, {"yourself", "yourselves"}, {"itself", "themselves"},
		{"herself", "themselves"}, {"himself", "themselves"}, {"themself", "themselves"},
		{"is", "are"}, {"was", "were"}, {"has", "have"}, {"this", "these"}, {"that", "those"},
		{"echo", "echoes"}, {"dingo", "dingoes"}, {"volcano", "volcanoes"}, {"tornado", "tornadoes"},
		{"torpedo", "torpedoes"}, {"genus", "genera"}, {"viscus", "viscera"}, {"stigma", "stigmata"},
		{"stoma", "stomata"}, {"dogma", "dogmata"}, {"lemma", "lemmata"}, {"schema", "schemata"},
		{"anathema", "anathemata"}, {"ox", "oxen"}, {"axe", "axes"}, {"die", "dice"}, {"yes", "yeses"},
		{"foot", "feet"}, {"eave", "eaves"}, {"goose", "geese"}, {"tooth", "teeth"}, {"quiz", "quizzes"},
		{"human", "humans"}, {"proof", "proofs"}, {"carve", "carves"}, {"valve", "valves"},
		{"looey", "looies"}, {"thief", "thieves"}, {"groove", "grooves"}, {"pickaxe", "pickaxes"},
		{"passerby", "passersby"},
	} {
		single, plural := strings.ToLower(p[0]), strings.ToLower(p[1])
		fIrregularSingles[single] = plural
		fIrregularPlurals[plural] = single
	}
	for _, r := range [][2]string{
		{`s?$`, "s"},
		{`[^\x00-\x7F]$`, "$0"},
		{`([^aeiou]ese)$`, "$1"},
		{`(ax|test)is$`, "$1es"},
		{`(alias|[^aou]us|t[lm]as|gas|ris)$`, "$1es"},
		{`(e[mn]u)s?$`, "$1s"},
		{`([^l]ias|[aeiou]las|[ejzr]as|[iu]am)$`, "$1"},
		{`(alumn|syllab|vir|radi|nucle|fung|cact|stimul|termin|bacill|foc|uter|loc|strat)(?:us|i)$`, "$1i"},
		{`(alumn|alg|vertebr)(?:a|ae)$`, "$1ae"},
		{`(seraph|cherub)(?:im)?$`, "$1im"},
		{`(her|at|gr)o$`, "$1oes"},
		{`(agend|addend|millenni|dat|extrem|bacteri|desiderat|strat|candelabr|errat|ov|symposi|curricul|automat|quor)(?:a|um)$`, "$1a"},
		{`(apheli|hyperbat|periheli|asyndet|noumen|phenomen|criteri|organ|prolegomen|hedr|automat)(?:a|on)$`, "$1a"},
		{`sis$`, "ses"},
		{`(?:(kni|wi|li)fe|(ar|l|ea|eo|oa|hoo)f)$`, "$1$2ves"},
		{`([^aeiouy]|qu)y$`, "$1ies"},
		{`([^ch][ieo][ln])ey$`, "$1ies"},
		{`(x|ch|ss|sh|zz)$`, "$1es"},
		{`(matr|cod|mur|sil|vert|ind|append)(?:ix|ex)$`, "$1ices"},
		{`\b((?:tit)?m|l)(?:ice|ouse)$`, "$1ice"},
		{`(pe)(?:rson|ople)$`, "$1ople"},
		{`(child)(?:ren)?$`, "$1ren"},
		{`eaux$`, "$0"},
		{`m[ae]n$`, "men"},
		{`^thou$`, "you"},
	} {
		fPluralRules = append(fPluralRules, fPluralRule{rule(r[0]), r[1]})
	}
	for _, r := range [][2]string{
		{`s$`, ""},
		{`(ss)$`, "$1"},
		{`(wi|kni|(?:after|half|high|low|mid|non|night|[^\w]|^)li)ves$`, "$1fe"},
		{`(ar|(?:wo|[ae])l|[eo][ao])ves$`, "$1f"},
		{`ies$`, "y"},
		{`\b([pl]|zomb|(?:neck|cross)?t|coll|faer|food|gen|goon|group|lass|talk|goal|cut)ies$`, "$1ie"},
		{`\b(mon|smil)ies$`, "$1ey"},
		{`\b((?:tit)?m|l)ice$`, "$1ouse"},
		{`(seraph|cherub)im$`, "$1"},
		{`(x|ch|ss|sh|zz|tto|go|cho|alias|[^aou]us|t[lm]as|gas|(?:her|at|gr)o|[aeiou]ris)(?:es)?$`, "$1"},
		{`(analy|diagno|parenthe|progno|synop|the|empha|cri|ne)(?:sis|ses)$`, "$1sis"},
		{`(movie|twelve|abuse|e[mn]u)s$`, "$1"},
		{`(test)(?:is|es)$`, "$1is"},
		{`(alumn|syllab|vir|radi|nucle|fung|cact|stimul|termin|bacill|foc|uter|loc|strat)(?:us|i)$`, "$1us"},
		{`(agend|addend|millenni|dat|extrem|bacteri|desiderat|strat|candelabr|errat|ov|symposi|curricul|quor)a$`, "$1um"},
		{`(apheli|hyperbat|periheli|asyndet|noumen|phenomen|criteri|organ|prolegomen|hedr|automat)a$`, "$1on"},
		{`(alumn|alg|vertebr)ae$`, "$1a"},
		{`(cod|mur|sil|vert|ind)ices$`, "$1ex"},
		{`(matr|append)ices$`, "$1ix"},
		{`(pe)(rson|ople)$`, "$1rson"},
		{`(child)ren$`, "$1"},
		{`(eau)x?$`, "$1"},
		{`men$`, "man"},
	} {
		fSingularRules = append(fSingularRules, fPluralRule{rule(r[0]), r[1]})
	}
	for _, w := range strings.Fields(`adulthood advice agenda aid aircraft alcohol ammo analytics anime
		athletics audio bison blood bream buffalo butter carp cash chassis chess clothing cod commerce
		cooperation corps debris diabetes digestion elk energy equipment excretion expertise firmware
		flounder fun gallows garbage graffiti hardware headquarters health herpes highjinks homework
		housework information jeans justice kudos labour literature machinery mackerel mail media mews
		moose music mud manga news only personnel pike plankton pliers police pollution premises rain
		research rice salmon scissors series sewage shambles shrimp software species staff swine tennis
		traffic transportation trout tuna wealth welfare whiting wildebeest wildlife you`) {
		fUncountables[w] = true
	}
	for _, re := range []string{`pok[eé]mon$`, `[^aeiou]ese$`, `deer$`, `fish$`, `measles$`, `o[iu]s$`, `pox$`, `sheep$`} {
		r := fPluralRule{rule(re), "$0"}
		fPluralRules = append(fPluralRules, r)
		fSingularRules = append(fSingularRules, r)
	}
}

// fRestoreCase gives token the case of word.
func fRestoreCase(word, token string) string {
	switch {
	case word == token:
		return token
	case word == fLower(word):
		return fLower(token)
	case word == fUpper(word):
		return fUpper(token)
	}
	// word[0] === word[0].toUpperCase(): half a surrogate pair is.
	r, n := utf8.DecodeRuneInString(word)
	if r >= 0x10000 || word[:n] == fUpper(word[:n]) {
		if token == "" {
			return ""
		}
		r, n := utf8.DecodeRuneInString(token)
		if r >= 0x10000 {
			return token[:n] + fLower(token[n:])
		}
		return fUpper(token[:n]) + fLower(token[n:])
	}
	return fLower(token)
}

// fApplyRule replaces the rule's first match in word, keeping its case.
func fApplyRule(word string, r fPluralRule) string {
	m := r.re.FindStringSubmatchIndex(word)
	if m == nil {
		return word
	}
	group := func(i int) string {
		if 2*i+1 < len(m) && m[2*i] >= 0 {
			return word[m[2*i]:m[2*i+1]]
		}
		return ""
	}
	result := fInterpolate.ReplaceAllStringFunc(r.repl, func(s string) string {
		n := 0
		for _, d := range s[1:] {
			n = n*10 + int(d-'0')
		}
		return group(n)
	})
	match := word[m[0]:m[1]]
	var fixed string
	if match == "" {
		// The case of the character before the (empty) match.
		u := fUnits(word[:m[0]])
		fixed = fRestoreCase(fFromUnits(u[len(u)-1:]), result)
	} else {
		fixed = fRestoreCase(match, result)
	}
	return word[:m[0]] + fixed + word[m[1]:]
}

func fReplaceWord(word string, replace, keep map[string]string, rules []fPluralRule) string {
	token := fLower(word)
	if _, ok := keep[token]; ok {
		return fRestoreCase(word, token)
	}
	if r, ok := replace[token]; ok {
		return fRestoreCase(word, r)
	}
	if token == "" || fUncountables[token] {
		return word
	}
	for i := len(rules) - 1; i >= 0; i-- {
		if rules[i].re.MatchString(word) {
			return fApplyRule(word, rules[i])
		}
	}
	return word
}

// fPluralizeWord is pluralize(word, count): the singular for a count of
// exactly 1, else the plural.
func fPluralizeWord(word any, count float64) (string, error) {
	w, ok := word.(string)
	if !ok {
		if IsNil(word) {
			return "", errorf(0, "Cannot read properties of %s (reading 'toLowerCase')", JSString(word))
		}
		return "", errorf(0, "word.toLowerCase is not a function")
	}
	if count == 1 {
		return fReplaceWord(w, fIrregularPlurals, fIrregularSingles, fSingularRules), nil
	}
	return fReplaceWord(w, fIrregularSingles, fIrregularPlurals, fPluralRules), nil
}
