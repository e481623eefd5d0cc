package httpapi_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// specialID is a subscriberId made of characters a subscriberId may hold
// (any 1–256 characters but `.` and `..`) and a URL path has to escape.
const specialID = "user|42:ada@example.com+tag/team a"

func TestSubscriberCreateScenarios(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		h.createSubscriber(t, h.authFor(asDev), map[string]any{"subscriberId": "existing", "firstName": "Ada", "email": "ada@example.com"})

		longName := repeat("é", 1024)
		bigData := map[string]any{"blob": repeat("x", 64<<10)}
		runScenarios(t, h, nil, []scenario{
			{name: "create", method: "POST", url: "/v2/subscribers", body: map[string]any{"subscriberId": "new-1", "firstName": "Grace"},
				status: 201, contains: []string{`"subscriberId":"new-1"`, `"firstName":"Grace"`, `"deleted":false`, `"channels":[]`, `"data":null`}},
			{name: "update of an existing subscriber is a 201 too", method: "POST", url: "/v2/subscribers",
				body: map[string]any{"subscriberId": "existing", "lastName": "Lovelace"}, status: 201,
				contains: []string{`"firstName":"Ada"`, `"lastName":"Lovelace"`, `"email":"ada@example.com"`, `"__v":1`}},
			{name: "failIfExists=true on an existing subscriber", method: "POST", url: "/v2/subscribers?failIfExists=true",
				body: map[string]any{"subscriberId": "existing"}, status: 409, contains: []string{`already exists`}},
			{name: "failIfExists=true on a new subscriber", method: "POST", url: "/v2/subscribers?failIfExists=true",
				body: map[string]any{"subscriberId": "new-2"}, status: 201},
			{name: "failIfExists=false updates", method: "POST", url: "/v2/subscribers?failIfExists=false",
				body: map[string]any{"subscriberId": "existing", "phone": "+331"}, status: 201, contains: []string{`"phone":"+331"`}},
			{name: "failIfExists must be a boolean", method: "POST", url: "/v2/subscribers?failIfExists=banana",
				body: map[string]any{"subscriberId": "new-3"}, status: 422, errorFields: []string{"failIfExists"}, contains: []string{`"value":"banana"`}},

			// subscriberId
			{name: "subscriberId of special characters", method: "POST", url: "/v2/subscribers", body: map[string]any{"subscriberId": specialID},
				status: 201, contains: []string{`"subscriberId":"` + specialID + `"`}},
			{name: "subscriberId of 256 multi-byte characters", method: "POST", url: "/v2/subscribers",
				body: map[string]any{"subscriberId": repeat("用", 256)}, status: 201},
			{name: "subscriberId of emoji and spaces", method: "POST", url: "/v2/subscribers",
				body: map[string]any{"subscriberId": " 🚀 ü "}, status: 201, contains: []string{`"subscriberId":" 🚀 ü "`}},
			{name: "subscriberId of 257 characters", method: "POST", url: "/v2/subscribers",
				body: map[string]any{"subscriberId": repeat("a", 257)}, status: 422, errorFields: []string{"subscriberId"}},
			{name: "subscriberId a dot segment", method: "POST", url: "/v2/subscribers", body: map[string]any{"subscriberId": "."},
				status: 422, errorFields: []string{"subscriberId"}},
			{name: "subscriberId two dots", method: "POST", url: "/v2/subscribers", body: map[string]any{"subscriberId": ".."},
				status: 422, errorFields: []string{"subscriberId"}},
			{name: "subscriberId with dots", method: "POST", url: "/v2/subscribers", body: map[string]any{"subscriberId": "../a/..."},
				status: 201, contains: []string{`"subscriberId":"../a/..."`}},
			{name: "subscriberId empty", method: "POST", url: "/v2/subscribers", body: map[string]any{"subscriberId": ""},
				status: 422, errorFields: []string{"subscriberId"}},
			{name: "subscriberId missing", method: "POST", url: "/v2/subscribers", body: map[string]any{"firstName": "x"},
				status: 422, errorFields: []string{"subscriberId"}},
			{name: "subscriberId null", method: "POST", url: "/v2/subscribers", body: `{"subscriberId":null}`,
				status: 422, errorFields: []string{"subscriberId"}},
			{name: "subscriberId a number", method: "POST", url: "/v2/subscribers", body: `{"subscriberId":42}`,
				status: 422, errorFields: []string{"subscriberId"}, contains: []string{`"value":42`}},

			// PostgreSQL cannot store NUL in text: a 422, never a 500.
			{name: "subscriberId with NUL", method: "POST", url: "/v2/subscribers", body: `{"subscriberId":"a\u0000b"}`,
				status: 422, errorFields: []string{"subscriberId"}},
			{name: "attributes with NUL", method: "POST", url: "/v2/subscribers", body: `{"subscriberId":"nul","firstName":"\u0000","phone":"1\u0000"}`,
				status: 422, errorFields: []string{"firstName", "phone"}},
			{name: "NUL inside data", method: "POST", url: "/v2/subscribers", body: `{"subscriberId":"nul","data":{"k":{"v":"a\u0000"}}}`,
				status: 422, errorFields: []string{"data"}},

			// formats
			{name: "email invalid", method: "POST", url: "/v2/subscribers", body: map[string]any{"subscriberId": "f-1", "email": "not-an-email"},
				status: 422, errorFields: []string{"email"}, contains: []string{`"value":"not-an-email"`}},
			{name: "email with a display name", method: "POST", url: "/v2/subscribers", body: map[string]any{"subscriberId": "f-1", "email": "Ada <ada@example.com>"},
				status: 422, errorFields: []string{"email"}},
			{name: "email valid", method: "POST", url: "/v2/subscribers", body: map[string]any{"subscriberId": "f-1", "email": "a.b+c@sub.example.org"},
				status: 201, contains: []string{`"email":"a.b+c@sub.example.org"`}},
			{name: "timezone not IANA", method: "POST", url: "/v2/subscribers", body: map[string]any{"subscriberId": "f-2", "timezone": "Mars/Olympus_Mons"},
				status: 422, errorFields: []string{"timezone"}},
			{name: "timezone Local is not a zone name", method: "POST", url: "/v2/subscribers", body: map[string]any{"subscriberId": "f-2", "timezone": "Local"},
				status: 422, errorFields: []string{"timezone"}},
			{name: "timezone IANA", method: "POST", url: "/v2/subscribers", body: map[string]any{"subscriberId": "f-2", "timezone": "America/Argentina/Buenos_Aires"},
				status: 201, contains: []string{`"timezone":"America/Argentina/Buenos_Aires"`}},
			{name: "locale not BCP 47", method: "POST", url: "/v2/subscribers", body: map[string]any{"subscriberId": "f-3", "locale": "english please"},
				status: 422, errorFields: []string{"locale"}},
			{name: "locale BCP 47", method: "POST", url: "/v2/subscribers", body: map[string]any{"subscriberId": "f-3", "locale": "zh-Hant-TW"},
				status: 201, contains: []string{`"locale":"zh-Hant-TW"`}},

			// lengths
			{name: "strings of 1024 characters", method: "POST", url: "/v2/subscribers",
				body:   map[string]any{"subscriberId": "len-1", "firstName": longName, "lastName": longName, "phone": longName, "avatar": longName},
				status: 201},
			{name: "strings of 1025 characters", method: "POST", url: "/v2/subscribers",
				body:   map[string]any{"subscriberId": "len-2", "firstName": longName + "x", "lastName": longName + "x", "phone": longName + "x", "avatar": longName + "x"},
				status: 422, errorFields: []string{"firstName", "lastName", "phone", "avatar"}},
			{name: "data over 64 KiB", method: "POST", url: "/v2/subscribers", body: map[string]any{"subscriberId": "len-3", "data": bigData},
				status: 422, errorFields: []string{"data"}},
			{name: "data just under 64 KiB", method: "POST", url: "/v2/subscribers",
				body: map[string]any{"subscriberId": "len-3", "data": map[string]any{"blob": repeat("x", 64<<10-20)}}, status: 201},

			// types
			{name: "wrong types name every field", method: "POST", url: "/v2/subscribers",
				body:        `{"subscriberId":1,"firstName":2,"lastName":true,"email":[],"phone":{},"avatar":3.5,"locale":false,"timezone":[1],"data":"text"}`,
				status:      422,
				errorFields: []string{"subscriberId", "firstName", "lastName", "email", "phone", "avatar", "locale", "timezone", "data"}},
			{name: "data an array", method: "POST", url: "/v2/subscribers", body: `{"subscriberId":"t-1","data":[1,2]}`,
				status: 422, errorFields: []string{"data"}},
			{name: "invalid values name every field", method: "POST", url: "/v2/subscribers",
				body:   map[string]any{"subscriberId": "t-2", "email": "x", "timezone": "Nowhere/Else", "locale": "!!", "firstName": longName + "x"},
				status: 422, errorFields: []string{"email", "timezone", "locale", "firstName"}},

			// not JSON
			{name: "body not JSON", method: "POST", url: "/v2/subscribers", body: `{"subscriberId":`, status: 400},
			{name: "body empty", method: "POST", url: "/v2/subscribers", body: ``, status: 400},
			{name: "body an array", method: "POST", url: "/v2/subscribers", body: `[{"subscriberId":"x"}]`, status: 400},
			{name: "body a string", method: "POST", url: "/v2/subscribers", body: `"x"`, status: 400},
			{name: "body two objects", method: "POST", url: "/v2/subscribers", body: `{"subscriberId":"x"}{}`, status: 400},

			// omitted fields are kept, null clears, data is replaced whole
			{name: "keep: create", method: "POST", url: "/v2/subscribers",
				body:   map[string]any{"subscriberId": "keep", "firstName": "A", "lastName": "B", "email": "k@example.com", "data": map[string]any{"x": 1, "y": 2}},
				status: 201},
			{name: "keep: omitted fields are kept and null clears", method: "POST", url: "/v2/subscribers",
				body: `{"subscriberId":"keep","lastName":null,"email":null}`, status: 201,
				contains: []string{`"firstName":"A"`, `"lastName":null`, `"email":null`, `"data":{"x":1,"y":2}`}},
			{name: "keep: data is replaced as a whole", method: "POST", url: "/v2/subscribers",
				body: map[string]any{"subscriberId": "keep", "data": map[string]any{"z": true}}, status: 201,
				contains: []string{`"data":{"z":true}`, `"firstName":"A"`}, absent: []string{`"x":1`}},
			{name: "keep: data null clears", method: "POST", url: "/v2/subscribers",
				body: `{"subscriberId":"keep","data":null}`, status: 201, contains: []string{`"data":null`, `"firstName":"A"`}},
		})

		// The special subscriber is addressable by its escaped id.
		sub := h.getSubscriber(t, specialID)
		require.Equal(t, specialID, sub["subscriberId"])
		require.Equal(t, " 🚀 ü ", h.getSubscriber(t, " 🚀 ü ")["subscriberId"])
	})
}

func TestSubscriberReadUpdateDeleteScenarios(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		first := h.createSubscriber(t, h.authFor(asDev), map[string]any{"subscriberId": specialID, "firstName": "Ada", "email": "ada@example.com"})
		h.createSubscriber(t, h.authFor(asDev), map[string]any{"subscriberId": "plain"})
		vars := map[string]string{"special": strings.TrimPrefix(subPath(specialID), "/v2/subscribers/"), "firstId": first["_id"].(string)}

		runScenarios(t, h, vars, []scenario{
			{name: "get by escaped id", method: "GET", url: "/v2/subscribers/{{special}}", status: 200,
				contains: []string{`"subscriberId":"` + specialID + `"`, `"_id":"{{firstId}}"`}},
			{name: "get unknown", method: "GET", url: "/v2/subscribers/nobody", status: 404, contains: []string{`nobody`}},
			{name: "get an id with NUL", method: "GET", url: "/v2/subscribers/a%00b", status: 422, errorFields: []string{"subscriberId"}},
			{name: "delete an id with NUL", method: "DELETE", url: "/v2/subscribers/%00", status: 422, errorFields: []string{"subscriberId"}},
			{name: "get an id of 257 characters", method: "GET", url: "/v2/subscribers/" + repeat("a", 257), status: 422, errorFields: []string{"subscriberId"}},
			{name: "get accepts an idempotency key", method: "GET", url: "/v2/subscribers/plain", headers: map[string]string{"Idempotency-Key": "k"}, status: 200},

			{name: "patch", method: "PATCH", url: "/v2/subscribers/{{special}}", body: map[string]any{"lastName": "Lovelace", "locale": "en-GB"},
				status: 200, contains: []string{`"firstName":"Ada"`, `"lastName":"Lovelace"`, `"locale":"en-GB"`, `"email":"ada@example.com"`}},
			{name: "patch null clears", method: "PATCH", url: "/v2/subscribers/{{special}}", body: `{"email":null}`,
				status: 200, contains: []string{`"email":null`, `"firstName":"Ada"`}},
			{name: "patch ignores a subscriberId in the body", method: "PATCH", url: "/v2/subscribers/plain", body: map[string]any{"subscriberId": "other", "phone": "1"},
				status: 200, contains: []string{`"subscriberId":"plain"`}},
			{name: "patch invalid values", method: "PATCH", url: "/v2/subscribers/plain",
				body: map[string]any{"email": "nope", "timezone": "Nope/Nope", "locale": "??", "data": "x"}, status: 422,
				errorFields: []string{"email", "timezone", "locale", "data"}},
			{name: "patch wrong types", method: "PATCH", url: "/v2/subscribers/plain",
				body: `{"firstName":1,"lastName":2,"email":3,"phone":4,"avatar":5,"locale":6,"timezone":7,"data":8}`, status: 422,
				errorFields: []string{"firstName", "lastName", "email", "phone", "avatar", "locale", "timezone", "data"}},
			{name: "patch unknown", method: "PATCH", url: "/v2/subscribers/nobody", body: map[string]any{"firstName": "x"}, status: 404},
			{name: "patch not JSON", method: "PATCH", url: "/v2/subscribers/plain", body: `nope`, status: 400},
			{name: "patch empty body", method: "PATCH", url: "/v2/subscribers/plain", body: ``, status: 400},

			{name: "delete", method: "DELETE", url: "/v2/subscribers/{{special}}", status: 200,
				check: func(t *testing.T, res response) {
					require.Equal(t, map[string]any{"acknowledged": true, "status": "deleted"}, res.Object(t))
				}},
			{name: "deleted: get", method: "GET", url: "/v2/subscribers/{{special}}", status: 404},
			{name: "deleted: patch", method: "PATCH", url: "/v2/subscribers/{{special}}", body: map[string]any{"firstName": "x"}, status: 404},
			{name: "deleted: delete again", method: "DELETE", url: "/v2/subscribers/{{special}}", status: 404},
			{name: "deleted: credentials", method: "PATCH", url: "/v1/subscribers/{{special}}/credentials",
				body: map[string]any{"providerId": "fcm", "credentials": map[string]any{"deviceTokens": []string{"t"}}}, status: 404},
			{name: "deleted: gone from search", method: "GET", url: "/v2/subscribers?subscriberId={{special}}", status: 200,
				contains: []string{`"data":[]`, `"totalCount":0`}},
			{name: "deleted: gone from unfiltered search", method: "GET", url: "/v2/subscribers", status: 200,
				contains: []string{`"subscriberId":"plain"`, `"totalCount":1`}, absent: []string{`{{firstId}}`}},
			{name: "deleted: failIfExists create succeeds", method: "POST", url: "/v2/subscribers?failIfExists=true",
				body: map[string]any{"subscriberId": specialID, "lastName": "Again"}, status: 201,
				contains: []string{`"lastName":"Again"`, `"firstName":null`, `"__v":0`}, absent: []string{`{{firstId}}`}},
			{name: "re-created: get", method: "GET", url: "/v2/subscribers/{{special}}", status: 200, contains: []string{`"lastName":"Again"`},
				absent: []string{`{{firstId}}`}},
			{name: "delete unknown", method: "DELETE", url: "/v2/subscribers/nobody", status: 404},
		})
	})
}

func TestSubscriberSearchScenarios(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		for _, s := range []map[string]any{
			{"subscriberId": "s-1", "firstName": "Ada", "lastName": "Lovelace", "email": "ada@example.com", "phone": "+441111"},
			{"subscriberId": "s-2", "firstName": "Alan", "lastName": "Turing", "email": "alan@example.com", "phone": "+442222"},
			{"subscriberId": "s-3", "firstName": "Grace", "lastName": "Hopper", "email": "grace@navy.mil", "phone": "+13333"},
			{"subscriberId": "s-4", "firstName": "ada", "lastName": "King", "email": "ADA@EXAMPLE.COM"},
			{"subscriberId": "s-5"},
			{"subscriberId": "s-gone", "firstName": "Ada", "email": "gone@example.com"},
		} {
			h.createSubscriber(t, dev, s)
		}
		require.Equal(t, 200, h.call(t, dev, "DELETE", "/v2/subscribers/s-gone", nil, nil).Status)

		// Cursors for the malformed-cursor scenarios.
		page := h.call(t, dev, "GET", "/v2/subscribers?limit=1", nil, nil).Object(t)
		idCursor := page["next"].(string)
		page = h.call(t, dev, "GET", "/v2/subscribers?limit=1&orderBy=createdAt", nil, nil).Object(t)
		b64 := base64.RawURLEncoding.EncodeToString
		vars := map[string]string{
			"idCursor": idCursor, "createdCursor": page["next"].(string),
			"badIDCursor":        b64([]byte(`{"o":"_id","i":"zz"}`)),
			"unknownOrderCursor": b64([]byte(`{"o":"email","i":"655c1b2a3f1d2e0000000000"}`)),
			"idWithKeyCursor":    b64([]byte(`{"o":"_id","k":5,"i":"655c1b2a3f1d2e0000000000"}`)),
			"fractionKeyCursor":  b64([]byte(`{"o":"createdAt","k":1.5,"i":"655c1b2a3f1d2e0000000000"}`)),
		}

		ids := func(want ...string) func(t *testing.T, res response) {
			return func(t *testing.T, res response) {
				var got []string
				for _, s := range res.Object(t)["data"].([]any) {
					got = append(got, s.(map[string]any)["subscriberId"].(string))
				}
				require.Equal(t, want, got, "%s", res.Raw)
				require.EqualValues(t, len(want), res.Object(t)["totalCount"])
			}
		}
		runScenarios(t, h, vars, []scenario{
			{name: "no filter, newest first", method: "GET", url: "/v2/subscribers", status: 200,
				check: ids("s-5", "s-4", "s-3", "s-2", "s-1"), contains: []string{`"next":null`, `"previous":null`, `"totalCountCapped":false`}},
			{name: "subscriberId is exact", method: "GET", url: "/v2/subscribers?subscriberId=s-1", status: 200, check: ids("s-1")},
			{name: "subscriberId is not a prefix", method: "GET", url: "/v2/subscribers?subscriberId=s-", status: 200, check: ids()},
			{name: "email substring, case-sensitive", method: "GET", url: "/v2/subscribers?email=example.com", status: 200, check: ids("s-2", "s-1")},
			{name: "email upper case", method: "GET", url: "/v2/subscribers?email=EXAMPLE", status: 200, check: ids("s-4")},
			{name: "phone substring", method: "GET", url: "/v2/subscribers?phone=%2B44", status: 200, check: ids("s-2", "s-1")},
			{name: "name is first name", method: "GET", url: "/v2/subscribers?name=Ada", status: 200, check: ids("s-1")},
			{name: "name spans first and last name", method: "GET", url: "/v2/subscribers?name=a%20Love", status: 200, check: ids("s-1")},
			{name: "name substring of last name", method: "GET", url: "/v2/subscribers?name=ing", status: 200, check: ids("s-4", "s-2")},
			{name: "filters combine with AND", method: "GET", url: "/v2/subscribers?email=example.com&name=Alan", status: 200, check: ids("s-2")},
			{name: "like wildcards are literal: %", method: "GET", url: "/v2/subscribers?name=%25", status: 200, check: ids()},
			{name: "like wildcards are literal: _", method: "GET", url: "/v2/subscribers?email=_", status: 200, check: ids()},
			{name: "like escape is literal", method: "GET", url: "/v2/subscribers?email=%5C", status: 200, check: ids()},
			{name: "empty filter is no filter", method: "GET", url: "/v2/subscribers?email=", status: 200, check: ids("s-5", "s-4", "s-3", "s-2", "s-1")},
			{name: "unknown parameters are ignored", method: "GET", url: "/v2/subscribers?colour=blue&subscriberId=s-3", status: 200, check: ids("s-3")},
			{name: "ascending by createdAt", method: "GET", url: "/v2/subscribers?orderBy=createdAt&orderDirection=ASC", status: 200,
				check: ids("s-1", "s-2", "s-3", "s-4", "s-5")},
			{name: "descending by updatedAt", method: "GET", url: "/v2/subscribers?orderBy=updatedAt&orderDirection=DESC", status: 200,
				check: ids("s-5", "s-4", "s-3", "s-2", "s-1")},
			{name: "ascending by _id", method: "GET", url: "/v2/subscribers?orderBy=_id&orderDirection=ASC&limit=2", status: 200,
				contains: []string{`"totalCount":5`, `"previous":null`}, absent: []string{`"next":null`}},
			{name: "limit 1", method: "GET", url: "/v2/subscribers?limit=1", status: 200, contains: []string{`"totalCount":5`}},
			{name: "limit 100", method: "GET", url: "/v2/subscribers?limit=100", status: 200, contains: []string{`"totalCount":5`, `"next":null`}},

			{name: "limit 0", method: "GET", url: "/v2/subscribers?limit=0", status: 422, errorFields: []string{"limit"}},
			{name: "limit 101", method: "GET", url: "/v2/subscribers?limit=101", status: 422, errorFields: []string{"limit"}},
			{name: "limit negative", method: "GET", url: "/v2/subscribers?limit=-1", status: 422, errorFields: []string{"limit"}},
			{name: "limit not a number", method: "GET", url: "/v2/subscribers?limit=ten", status: 422, errorFields: []string{"limit"}},
			{name: "limit a fraction", method: "GET", url: "/v2/subscribers?limit=1.5", status: 422, errorFields: []string{"limit"}},
			{name: "limit huge", method: "GET", url: "/v2/subscribers?limit=99999999999999999999", status: 422, errorFields: []string{"limit"}},
			{name: "orderBy unknown", method: "GET", url: "/v2/subscribers?orderBy=email", status: 422, errorFields: []string{"orderBy"}},
			{name: "orderDirection lower case", method: "GET", url: "/v2/subscribers?orderDirection=asc", status: 422, errorFields: []string{"orderDirection"}},
			{name: "includeCursor not a boolean", method: "GET", url: "/v2/subscribers?includeCursor=yes", status: 422, errorFields: []string{"includeCursor"}},
			{name: "every bad parameter is named", method: "GET", url: "/v2/subscribers?limit=0&orderBy=x&orderDirection=y&includeCursor=z&after=%21",
				status: 422, errorFields: []string{"limit", "orderBy", "orderDirection", "includeCursor", "after"}},
			{name: "filter over 1024 characters", method: "GET", url: "/v2/subscribers?email=" + repeat("a", 1025), status: 422, errorFields: []string{"email"}},
			{name: "filter not UTF-8", method: "GET", url: "/v2/subscribers?name=%FF", status: 422, errorFields: []string{"name"}},
			{name: "filters with NUL", method: "GET", url: "/v2/subscribers?name=%00&subscriberId=a%00&email=%00&phone=%00", status: 422,
				errorFields: []string{"name", "subscriberId", "email", "phone"}},

			{name: "cursor not base64", method: "GET", url: "/v2/subscribers?after=%21%21%21", status: 422, errorFields: []string{"after"}},
			{name: "cursor base64 of garbage", method: "GET", url: "/v2/subscribers?before=Z2FyYmFnZQ", status: 422, errorFields: []string{"before"}},
			{name: "cursor with a bad id", method: "GET", url: "/v2/subscribers?after={{badIDCursor}}", status: 422, errorFields: []string{"after"}},
			{name: "cursor with an unknown order", method: "GET", url: "/v2/subscribers?after={{unknownOrderCursor}}", status: 422, errorFields: []string{"after"}},
			{name: "cursor of _id with a key", method: "GET", url: "/v2/subscribers?after={{idWithKeyCursor}}", status: 422, errorFields: []string{"after"}},
			{name: "cursor with a fractional key", method: "GET", url: "/v2/subscribers?orderBy=createdAt&before={{fractionKeyCursor}}", status: 422, errorFields: []string{"before"}},
			{name: "cursor of another order", method: "GET", url: "/v2/subscribers?after={{createdCursor}}", status: 422, errorFields: []string{"after"}},
			{name: "cursor too long", method: "GET", url: "/v2/subscribers?after=" + repeat("A", 300), status: 422, errorFields: []string{"after"}},
			{name: "after with before", method: "GET", url: "/v2/subscribers?after={{idCursor}}&before={{idCursor}}", status: 422, errorFields: []string{"before"}},
			{name: "cursor of the same order", method: "GET", url: "/v2/subscribers?orderBy=createdAt&after={{createdCursor}}", status: 200,
				contains: []string{`"totalCount":5`}, absent: []string{`"previous":null`}},
		})

		t.Run("paging forwards and backwards", func(t *testing.T) {
			get := func(q string) map[string]any {
				res := h.call(t, dev, "GET", "/v2/subscribers?"+q, nil, nil)
				require.Equal(t, 200, res.Status, "%s", res.Raw)
				return res.Object(t)
			}
			subIDs := func(p map[string]any) []string {
				var out []string
				for _, s := range p["data"].([]any) {
					out = append(out, s.(map[string]any)["subscriberId"].(string))
				}
				return out
			}
			p1 := get("limit=2")
			require.Equal(t, []string{"s-5", "s-4"}, subIDs(p1))
			require.Nil(t, p1["previous"])
			require.IsType(t, "", p1["next"])
			require.EqualValues(t, 5, p1["totalCount"])

			p2 := get("limit=2&after=" + p1["next"].(string))
			require.Equal(t, []string{"s-3", "s-2"}, subIDs(p2))
			require.IsType(t, "", p2["previous"])
			require.IsType(t, "", p2["next"])
			require.EqualValues(t, 5, p2["totalCount"])

			p3 := get("limit=2&after=" + p2["next"].(string))
			require.Equal(t, []string{"s-1"}, subIDs(p3))
			require.Nil(t, p3["next"])
			require.IsType(t, "", p3["previous"])
			require.EqualValues(t, 5, p3["totalCount"])

			back := get("limit=2&before=" + p3["previous"].(string))
			require.Equal(t, []string{"s-3", "s-2"}, subIDs(back))
			back = get("limit=2&before=" + back["previous"].(string))
			require.Equal(t, []string{"s-5", "s-4"}, subIDs(back))
			require.Nil(t, back["previous"])

			incl := get("limit=2&includeCursor=true&after=" + p1["next"].(string))
			require.Equal(t, []string{"s-4", "s-3"}, subIDs(incl))
			incl = get("limit=2&includeCursor=false&after=" + p1["next"].(string))
			require.Equal(t, []string{"s-3", "s-2"}, subIDs(incl))

			// Paging by createdAt ascending with a filter.
			a1 := get("limit=1&orderBy=createdAt&orderDirection=ASC&email=example.com")
			require.Equal(t, []string{"s-1"}, subIDs(a1))
			a2 := get("limit=1&orderBy=createdAt&orderDirection=ASC&email=example.com&after=" + a1["next"].(string))
			require.Equal(t, []string{"s-2"}, subIDs(a2))
			require.Nil(t, a2["next"])
			require.EqualValues(t, 2, a2["totalCount"])
		})
	})
}

// TestSubscriberResponseShape checks the wire format (docs/api-behaviour.md,
// "Wire format") on a subscriber.
func TestSubscriberResponseShape(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		sub := h.createSubscriber(t, h.authFor(asDev), map[string]any{"subscriberId": "shape", "data": map[string]any{"plan": "pro", "n": 1.5}})
		for _, k := range []string{"firstName", "lastName", "email", "phone", "avatar", "locale", "timezone", "isOnline", "lastOnlineAt"} {
			v, ok := sub[k]
			require.True(t, ok, "a T | null field is always present: %s", k)
			require.Nil(t, v, k)
		}
		require.Regexp(t, `^[0-9a-f]{24}$`, sub["_id"])
		require.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`, sub["createdAt"])
		require.Equal(t, map[string]any{"plan": "pro", "n": 1.5}, sub["data"])
		res := h.call(t, h.authFor(asDev), "POST", "/v2/subscribers", map[string]any{"subscriberId": "shape"}, nil)
		require.Equal(t, http.StatusCreated, res.Status)
		require.Equal(t, sub["_id"], res.Object(t)["_id"], "an update keeps the _id")
	})
}
