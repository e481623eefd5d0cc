package jsvalue

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestUTF16(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]int{"": 0, "abc": 3, "é": 1, "日本": 2, "a😀b": 4} {
		require.Equal(t, want, Len16(s), "%q", s)
	}
	require.True(t, IsASCII("abc~\x7f"))
	require.False(t, IsASCII("abé"))
	require.Equal(t, "bc", Substring("abcd", 1, 3))
	require.Equal(t, "😀", Substring("a😀b", 1, 3))
	require.Equal(t, "\ufffd", Substring("a😀b", 1, 2), "half a surrogate pair")
	require.Equal(t, "b", Substring("a😀b", 3, 4))
}

func TestSpace(t *testing.T) {
	t.Parallel()
	require.Equal(t, "a b", TrimSpace("\t\n\v\f\r \u00a0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000\ufeffa b\u3000"))
	require.Equal(t, "\u0085a\u200b", TrimSpace("\u0085a\u200b"), "NEL and ZWSP are not JavaScript white space")
	require.False(t, isWhiteSpace('\n'))
	require.False(t, isWhiteSpace(0x2028))
	require.True(t, isWhiteSpace(0xfeff))
}

func TestArrayIndex(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]int{"0": 0, "7": 7, "17": 17, "4294967294": 4294967294} {
		got, ok := ArrayIndex(key)
		require.True(t, ok, key)
		require.Equal(t, want, got, key)
	}
	for _, key := range []string{"", "01", "-1", "+1", "1.0", "1e3", " 1", "4294967295", "99999999999", "a"} {
		_, ok := ArrayIndex(key)
		require.False(t, ok, key)
	}
}
