package sqlstore

// emailWordsExpr is the expression of the index subscribers_email_words
// (migration 0004, PostgreSQL); queries must spell it the same to use it.
const emailWordsExpr = "regexp_split_to_array(email, '[^A-Za-z0-9]+')"

// emailWordsPostgres is dialect.emailWords: a condition equal to "email
// contains v" that the e-mail words index answers: the words v encloses
// must be words of the address, and the address must contain v. ok is false
// when v encloses no word: use the plain substring condition.
func emailWordsPostgres(a *args, v string) (cond string, ok bool) {
	words := enclosedWords(v)
	if len(words) == 0 {
		return "", false
	}
	// strpos, not LIKE: the trigram index would answer LIKE too, and
	// intersecting its posting lists is what this condition avoids.
	return "(" + emailWordsExpr + " @> " + a.add(words) + "::text[] AND strpos(email, " + a.add(v) + ") > 0)", true
}

// enclosedWords returns the words of v (maximal runs of ASCII letters and
// digits, as the index splits addresses) with another character on both
// sides within v. Any string that contains v has each of them as a word.
func enclosedWords(v string) []string {
	var words []string
	start := -1 // start of the current word, -1 between words
	for i := 0; i <= len(v); i++ {
		if i < len(v) && isWordByte(v[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start > 0 && i < len(v) {
			words = append(words, v[start:i])
		}
		start = -1
	}
	return words
}

// isWordByte reports whether c is an ASCII letter or digit. Bytes of
// multi-byte UTF-8 characters are not, as PostgreSQL's [^A-Za-z0-9] class
// matches those characters whole.
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
