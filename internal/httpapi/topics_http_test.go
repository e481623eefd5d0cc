package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTopicsCRUD(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev, prod := h.authFor(asDev), h.authFor(asProd)

		res := h.call(t, dev, "POST", "/v2/topics", map[string]any{"key": "team:ops", "name": "Ops"}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		first := res.Object(t)
		require.Equal(t, "team:ops", first["key"])
		require.Equal(t, "Ops", first["name"])

		res = h.call(t, dev, "POST", "/v2/topics", map[string]any{"key": "team:ops", "name": "Operations"}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "an upsert answers 201 for an existing key too")
		require.Equal(t, first["_id"], res.Object(t)["_id"], "the same topic")
		require.Equal(t, "Operations", res.Object(t)["name"])

		res = h.call(t, dev, "POST", "/v2/topics?failIfExists=true", map[string]any{"key": "team:ops", "name": "X"}, nil)
		require.Equal(t, http.StatusConflict, res.Status)
		res = h.call(t, dev, "GET", "/v2/topics/team:ops", nil, nil)
		require.Equal(t, http.StatusOK, res.Status)
		require.Equal(t, "Operations", res.Object(t)["name"], "failIfExists changed nothing")

		for _, bad := range []string{"", "has space", "émoji✓", string(make([]byte, 101))} {
			res = h.call(t, dev, "POST", "/v2/topics", map[string]any{"key": bad}, nil)
			require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%q: %s", bad, res.Raw)
		}
		res = h.call(t, dev, "POST", "/v2/topics", map[string]any{"key": "ada@example.com"}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "an e-mail address is a key")

		res = h.call(t, dev, "PATCH", "/v2/topics/team:ops", map[string]any{"name": "Renamed"}, nil)
		require.Equal(t, http.StatusOK, res.Status)
		require.Equal(t, "Renamed", res.Object(t)["name"])
		require.Equal(t, http.StatusNotFound, h.call(t, dev, "PATCH", "/v2/topics/nope", map[string]any{"name": "x"}, nil).Status)

		// Another environment sees none of it.
		require.Equal(t, http.StatusNotFound, h.call(t, prod, "GET", "/v2/topics/team:ops", nil, nil).Status)
		require.Equal(t, http.StatusNotFound, h.call(t, prod, "DELETE", "/v2/topics/team:ops", nil, nil).Status)

		res = h.call(t, dev, "DELETE", "/v2/topics/team:ops", nil, nil)
		require.Equal(t, http.StatusOK, res.Status)
		require.Equal(t, true, res.Object(t)["acknowledged"])
		require.Equal(t, http.StatusNotFound, h.call(t, dev, "GET", "/v2/topics/team:ops", nil, nil).Status)
	})
}

func TestTopicSubscriptionsHTTP(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev, prod := h.authFor(asDev), h.authFor(asProd)
		for _, sid := range []string{"ada", "bob"} {
			h.createSubscriber(t, dev, map[string]any{"subscriberId": sid, "firstName": sid, "email": sid + "@example.com"})
		}

		// The topic is created by its first subscription; unknown subscribers are reported, the rest succeed.
		res := h.call(t, dev, "POST", "/v2/topics/watchers/subscriptions",
			map[string]any{"subscriptions": []any{"ada", map[string]any{"subscriberId": "bob", "identifier": "bob-mobile"}, "ghost"}}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		out := res.Object(t)
		require.Equal(t, map[string]any{"totalCount": 3.0, "successful": 2.0, "failed": 1.0}, out["meta"])
		require.Equal(t, "SUBSCRIBER_NOT_FOUND", objects(t, out["errors"])[0]["code"])
		data := objects(t, out["data"])
		require.Len(t, data, 2)
		require.Equal(t, "watchers", data[0]["topic"].(map[string]any)["key"])
		require.Equal(t, "ada", data[0]["subscriber"].(map[string]any)["subscriberId"])
		require.Equal(t, "bob-mobile", data[1]["identifier"])
		adaSub := data[0]["_id"]

		// Again, with the deprecated subscriberIds: the same subscription, no duplicate.
		res = h.call(t, dev, "POST", "/v2/topics/watchers/subscriptions", map[string]any{"subscriberIds": []string{"ada"}}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		require.Equal(t, adaSub, objects(t, res.Object(t)["data"])[0]["_id"])

		// Every subscriber failed: 400 with the result and the error shape.
		res = h.call(t, dev, "POST", "/v2/topics/watchers/subscriptions", map[string]any{"subscriptions": []string{"ghost", "nobody"}}, nil)
		require.Equal(t, http.StatusBadRequest, res.Status)
		require.EqualValues(t, 2, res.Object(t)["meta"].(map[string]any)["failed"])
		require.EqualValues(t, 400, res.Object(t)["statusCode"])
		require.Equal(t, http.StatusUnprocessableEntity,
			h.call(t, dev, "POST", "/v2/topics/watchers/subscriptions", map[string]any{"subscriptions": []any{}}, nil).Status)

		// Membership.
		res = h.call(t, dev, "GET", "/v1/topics/watchers/subscribers/ada", nil, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		require.Equal(t, "ada", res.Object(t)["externalSubscriberId"])
		require.Equal(t, "watchers", res.Object(t)["topicKey"])
		require.Equal(t, http.StatusNotFound, h.call(t, prod, "GET", "/v1/topics/watchers/subscribers/ada", nil, nil).Status)

		// Removal: a subscriberId alone removes all its subscriptions; not a member is reported.
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "eve"})
		res = h.call(t, dev, "DELETE", "/v2/topics/watchers/subscriptions", map[string]any{"subscriptions": []string{"bob", "eve"}}, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		require.Len(t, objects(t, res.Object(t)["data"]), 1)
		require.Equal(t, "SUBSCRIPTION_NOT_FOUND", objects(t, res.Object(t)["errors"])[0]["code"])
		require.Equal(t, http.StatusNotFound, h.call(t, dev, "GET", "/v1/topics/watchers/subscribers/bob", nil, nil).Status)
		require.Equal(t, http.StatusNotFound,
			h.call(t, dev, "DELETE", "/v2/topics/missing/subscriptions", map[string]any{"subscriptions": []string{"ada"}}, nil).Status)
	})
}

// walk follows next cursors from a first page and returns every item's _id.
func walk(t *testing.T, h *harness, path string) (ids []string, pages []map[string]any) {
	t.Helper()
	url := path
	for range 20 {
		res := h.call(t, h.authFor(asDev), "GET", url, nil, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		page := res.Object(t)
		pages = append(pages, page)
		for _, it := range objects(t, page["data"]) {
			ids = append(ids, it["_id"].(string))
		}
		next, ok := page["next"].(string)
		if !ok {
			return ids, pages
		}
		url = path + "&after=" + next
	}
	t.Fatal("the cursors never ended")
	return nil, nil
}

func TestTopicListsPage(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		var made []string
		for i := range 7 {
			res := h.call(t, dev, "POST", "/v2/topics", map[string]any{"key": "page-" + string(rune('a'+i)), "name": "Page Topic"}, nil)
			require.Equal(t, http.StatusCreated, res.Status)
			made = append(made, res.Object(t)["_id"].(string))
		}
		h.call(t, dev, "POST", "/v2/topics", map[string]any{"key": "other", "name": "Else"}, nil)

		ids, pages := walk(t, h, "/v2/topics?key=page-&limit=3&orderDirection=ASC")
		require.Equal(t, made, ids, "every topic once, in order")
		require.Len(t, pages, 3)
		require.Nil(t, pages[0]["previous"], "no previous on the first page")
		require.EqualValues(t, 7, pages[0]["totalCount"])
		require.Equal(t, false, pages[0]["totalCountCapped"])

		// Back from the last page with previous.
		last := pages[2]
		res := h.call(t, dev, "GET", "/v2/topics?key=page-&limit=3&orderDirection=ASC&before="+last["previous"].(string), nil, nil)
		require.Equal(t, http.StatusOK, res.Status)
		var back []string
		for _, it := range objects(t, res.Object(t)["data"]) {
			back = append(back, it["_id"].(string))
		}
		require.Equal(t, made[3:6], back)

		desc, _ := walk(t, h, "/v2/topics?name=Page&limit=4")
		require.Len(t, desc, 7)
		require.Equal(t, made[6], desc[0], "newest first by default")
		none := h.call(t, dev, "GET", "/v2/topics?name=page", nil, nil).Object(t)
		require.Empty(t, objects(t, none["data"]), "the name filter is case-sensitive on both stores")
		require.Equal(t, http.StatusUnprocessableEntity, h.call(t, dev, "GET", "/v2/topics?after=zz", nil, nil).Status)

		// A topic's subscriptions page the same way.
		var sids []string
		for i := range 5 {
			sid := "member-" + string(rune('a'+i))
			h.createSubscriber(t, dev, map[string]any{"subscriberId": sid})
			sids = append(sids, sid)
		}
		res = h.call(t, dev, "POST", "/v2/topics/page-a/subscriptions", map[string]any{"subscriptions": sids}, nil)
		require.Equal(t, http.StatusCreated, res.Status)
		subs, subPages := walk(t, h, "/v2/topics/page-a/subscriptions?limit=2&orderDirection=ASC")
		require.Len(t, subs, 5)
		require.Len(t, subPages, 3)
		require.EqualValues(t, 5, subPages[0]["totalCount"])
		first := objects(t, subPages[0]["data"])[0]
		require.Equal(t, "member-a", first["subscriber"].(map[string]any)["subscriberId"])
		one := h.call(t, dev, "GET", "/v2/topics/page-a/subscriptions?subscriberId=member-c", nil, nil).Object(t)
		require.Len(t, objects(t, one["data"]), 1)
		require.Equal(t, http.StatusNotFound, h.call(t, dev, "GET", "/v2/topics/missing/subscriptions", nil, nil).Status)

		// A subscriber's topics.
		for _, key := range []string{"page-b", "page-c", "other"} {
			require.Equal(t, http.StatusCreated, h.call(t, dev, "POST", "/v2/topics/"+key+"/subscriptions",
				map[string]any{"subscriptions": []string{"member-a"}}, nil).Status)
		}
		mine, _ := walk(t, h, "/v2/subscribers/member-a/subscriptions?limit=2&orderDirection=ASC")
		require.Len(t, mine, 4)
		onlyPage := h.call(t, dev, "GET", "/v2/subscribers/member-a/subscriptions?key=page-", nil, nil).Object(t)
		require.EqualValues(t, 3, onlyPage["totalCount"])
		for _, it := range objects(t, onlyPage["data"]) {
			require.Contains(t, it["topic"].(map[string]any)["key"], "page-")
			require.Equal(t, "member-a", it["subscriber"].(map[string]any)["subscriberId"])
		}
		require.Equal(t, http.StatusNotFound, h.call(t, dev, "GET", "/v2/subscribers/nobody/subscriptions", nil, nil).Status)
	})
}
