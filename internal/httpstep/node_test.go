package httpstep

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herald-notify/herald/internal/nodetest"
	"github.com/stretchr/testify/require"
)

// nodeOracle is what Novu's worker does with a rendered string body of a
// POST, in Node.js: resolveHttpRequestBody (blank: no body; else JSON.parse,
// an object or array), then buildNovuSignatureHeader(key, body or {})
// (hmac.ts), whose HMAC input is `${t}.${JSON.stringify(payload)}`, the
// same string got sends as the body. It reads [{key, t, body}] and writes
// [{sent (null: no body), sig} | {error}].
const nodeOracle = `
const { createHmac } = require('crypto');
let input = '';
process.stdin.on('data', (d) => (input += d));
process.stdin.on('end', () => {
  const out = JSON.parse(input).map(({ key, t, body }) => {
    try {
      let payload = {};
      let sent = null;
      if (body.trim()) {
        payload = JSON.parse(body);
        if (typeof payload !== 'object' || payload === null) throw new Error('Raw body must be a JSON object or array');
        sent = JSON.stringify(payload);
      }
      const hmac = createHmac('sha256', key).update(t + '.' + JSON.stringify(payload)).digest('hex');
      return { sent, sig: 't=' + t + ',v1=' + hmac };
    } catch (e) {
      return { error: String(e) };
    }
  });
  process.stdout.write(JSON.stringify(out));
});
`

// TestBodyAndSignatureMatchNode sends random JSON bodies through build and
// through Novu's code path in Node.js and wants the same bytes sent and the
// same novu-signature header.
func TestBodyAndSignatureMatchNode(t *testing.T) {
	t.Parallel()
	node := nodetest.RequireTool(t, "node")
	rng := rand.New(rand.NewSource(1))
	type in struct {
		Key  string `json:"key"`
		T    string `json:"t"`
		Body string `json:"body"`
	}
	now := time.UnixMilli(1767225600123)
	var cases []in
	for _, b := range []string{"", " \n\t", "\u00a0\u3000", "\ufeff", "\ufeff{}", "\u0085{}", "{}\u00a0", "\u2028[]\u2029",
		`"str"`, `42`, `null`, `true`, `{"a":01}`, `[1,]`, `{"a":1} x`, `{}`, `[1e999]`} {
		cases = append(cases, in{Key: "sk_edge", T: strconv.FormatInt(now.UnixMilli(), 10), Body: b})
	}
	for i := 0; i < 3000; i++ {
		var sb strings.Builder
		if i%2 == 0 {
			genObject(rng, &sb, 0)
		} else {
			genArray(rng, &sb, 0)
		}
		cases = append(cases, in{Key: fmt.Sprintf("sk_%d_ключ", i), T: strconv.FormatInt(now.UnixMilli(), 10), Body: sb.String()})
	}
	input, err := json.Marshal(cases)
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "-e", nodeOracle)
	cmd.Stdin = strings.NewReader(string(input))
	out, err := cmd.Output()
	require.NoError(t, err)
	var want []struct {
		Sent       *string
		Sig, Error string
	}
	require.NoError(t, json.Unmarshal(out, &want))
	require.Len(t, want, len(cases))

	for i, c := range cases {
		req, sent, fail := build(Request{
			Controls:   map[string]any{"url": "https://hooks.example/x", "body": c.Body},
			SigningKey: c.Key,
			Now:        now,
		})
		if want[i].Error != "" {
			require.NotEmpty(t, fail, "node refused %q: %s", c.Body, want[i].Error)
			continue
		}
		require.Empty(t, fail, c.Body)
		if want[i].Sent == nil {
			require.Nil(t, sent, c.Body)
		} else {
			require.Equal(t, *want[i].Sent, string(sent), c.Body)
		}
		require.Equal(t, want[i].Sig, req.Header.Get(signatureHeader), c.Body)
	}
}

var genKeys = []string{"a", "b", "id", "0", "1", "2", "10", "01", "-1", "1.5", "4294967294", "4294967295",
	"__proto__", "é", "a b", "", "\u2028", "x\"y"}

func genValue(rng *rand.Rand, sb *strings.Builder, depth int) {
	switch n := rng.Intn(10); {
	case n < 2 && depth < 4:
		genObject(rng, sb, depth+1)
	case n < 3 && depth < 4:
		genArray(rng, sb, depth+1)
	case n < 6:
		sb.WriteString(genNumber(rng))
	case n < 9:
		sb.WriteString(genString(rng))
	default:
		sb.WriteString([]string{"true", "false", "null"}[rng.Intn(3)])
	}
}

func genObject(rng *rand.Rand, sb *strings.Builder, depth int) {
	sb.WriteString("{" + genSpace(rng))
	for i, n := 0, rng.Intn(6); i < n; i++ {
		if i > 0 {
			sb.WriteString("," + genSpace(rng))
		}
		k, _ := json.Marshal(genKeys[rng.Intn(len(genKeys))])
		sb.Write(k)
		sb.WriteString(genSpace(rng) + ":" + genSpace(rng))
		genValue(rng, sb, depth)
	}
	sb.WriteString(genSpace(rng) + "}")
}

func genArray(rng *rand.Rand, sb *strings.Builder, depth int) {
	sb.WriteString("[" + genSpace(rng))
	for i, n := 0, rng.Intn(5); i < n; i++ {
		if i > 0 {
			sb.WriteString("," + genSpace(rng))
		}
		genValue(rng, sb, depth)
	}
	sb.WriteString(genSpace(rng) + "]")
}

func genSpace(rng *rand.Rand) string {
	return []string{"", "", " ", "\n", "\t", "\r\n  "}[rng.Intn(6)]
}

func genNumber(rng *rand.Rand) string {
	switch rng.Intn(9) {
	case 0:
		return strconv.Itoa(rng.Intn(1000) - 500)
	case 1:
		return strconv.FormatFloat(rng.NormFloat64()*1e3, 'f', rng.Intn(8), 64)
	case 2:
		return fmt.Sprintf("%de%d", rng.Intn(100), rng.Intn(60)-30)
	case 3:
		return fmt.Sprintf("%d.%dE+%d", rng.Intn(10), rng.Intn(1000), rng.Intn(400))
	case 4:
		return fmt.Sprintf("-%d.%de-%d", rng.Intn(10), rng.Intn(1000), rng.Intn(340))
	case 5:
		return strconv.FormatUint(rng.Uint64(), 10) + strconv.Itoa(rng.Intn(1000))
	case 6:
		return strconv.FormatFloat(rng.ExpFloat64()*float64(rng.Int63()), 'g', -1, 64)
	case 7:
		return "-0"
	default:
		return "0." + strings.Repeat("0", rng.Intn(9)) + strconv.Itoa(rng.Intn(1000000))
	}
}

func genString(rng *rand.Rand) string {
	var sb strings.Builder
	sb.WriteByte('"')
	for i, n := 0, rng.Intn(8); i < n; i++ {
		switch rng.Intn(8) {
		case 0:
			sb.WriteString([]string{`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`}[rng.Intn(8)])
		case 1:
			r := rng.Intn(0xD800) // an escaped BMP character that is not a surrogate
			fmt.Fprintf(&sb, `\u%04x`, r)
		case 2:
			fmt.Fprintf(&sb, `\u%04X`, 0xE000+rng.Intn(0x2000))
		case 3:
			sb.WriteString([]string{"é", "日本", "😀", "\u2028", "\u2029", "\u007f", "<>&"}[rng.Intn(7)])
		case 4:
			sb.WriteString(`\ud83d\ude00`) // a surrogate pair
		default:
			sb.WriteByte(byte('a' + rng.Intn(26)))
		}
	}
	sb.WriteByte('"')
	return sb.String()
}
