package httpapi

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/mail"
	"strconv"
	"time"
	"unicode/utf8"

	"golang.org/x/text/language"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
)

const (
	maxSubscriberID = 256
	maxDataBytes    = 64 << 10
)

type subscriberJSON struct {
	ID             string          `json:"_id"`
	FirstName      *string         `json:"firstName"`
	LastName       *string         `json:"lastName"`
	Email          *string         `json:"email"`
	Phone          *string         `json:"phone"`
	Avatar         *string         `json:"avatar"`
	Locale         *string         `json:"locale"`
	Timezone       *string         `json:"timezone"`
	Data           json.RawMessage `json:"data"`
	Channels       []channelJSON   `json:"channels"`
	IsOnline       *bool           `json:"isOnline"`
	LastOnlineAt   *string         `json:"lastOnlineAt"`
	V              int64           `json:"__v"`
	SubscriberID   string          `json:"subscriberId"`
	OrganizationID string          `json:"_organizationId"`
	EnvironmentID  string          `json:"_environmentId"`
	Deleted        bool            `json:"deleted"`
	CreatedAt      string          `json:"createdAt"`
	UpdatedAt      string          `json:"updatedAt"`
}

type channelJSON = store.ChannelSettings

func subscriberOut(s store.Subscriber) subscriberJSON {
	chs := s.Channels
	if chs == nil {
		chs = []store.ChannelSettings{}
	}
	return subscriberJSON{
		ID: s.ID, FirstName: s.FirstName, LastName: s.LastName, Email: s.Email, Phone: s.Phone, Avatar: s.Avatar,
		Locale: s.Locale, Timezone: s.Timezone, Data: json.RawMessage(s.Data), Channels: chs, IsOnline: s.IsOnline,
		LastOnlineAt: formatTimePtr(s.LastOnlineAt), V: s.Version, SubscriberID: s.SubscriberID,
		OrganizationID: s.OrganizationID, EnvironmentID: s.EnvironmentID, Deleted: s.Deleted,
		CreatedAt: formatTime(s.CreatedAt), UpdatedAt: formatTime(s.UpdatedAt),
	}
}

// subscriberAttributes reads the attributes shared by create and update.
func subscriberAttributes(o *object, p *store.SubscriberUpsertParams) {
	p.FirstName = o.str("firstName", maxString)
	p.LastName = o.str("lastName", maxString)
	p.Phone = o.str("phone", maxString)
	p.Avatar = o.str("avatar", maxString)
	p.Email = o.indexed("email")
	if v := p.Email.Value; v != nil {
		if a, err := mail.ParseAddress(*v); err != nil || a.Address != *v {
			o.fail("email", "must be a valid e-mail address", o.raw["email"])
		}
	}
	p.Locale = o.str("locale", 35)
	if v := p.Locale.Value; v != nil {
		if _, err := language.Parse(*v); err != nil {
			o.fail("locale", "must be a BCP 47 language tag", o.raw["locale"])
		}
	}
	p.Timezone = o.str("timezone", 64)
	if v := p.Timezone.Value; v != nil && !validTimezone(*v) {
		o.fail("timezone", "must be an IANA time zone name", o.raw["timezone"])
	}
	p.Data, p.DataSet = o.jsonObject("data", maxDataBytes)
}

// readSubscriber reads a subscriber to create or update: its subscriberId
// and the attributes it sends.
func readSubscriber(o *object) store.SubscriberUpsertParams {
	var p store.SubscriberUpsertParams
	p.SubscriberID = o.requiredText("subscriberId", maxSubscriberID*4)
	if p.SubscriberID != "" && !validSubscriberID(p.SubscriberID) {
		o.fail("subscriberId", subscriberIDRule, o.raw["subscriberId"])
	}
	subscriberAttributes(o, &p)
	return p
}

func validTimezone(tz string) bool {
	if tz == "" || tz == "Local" {
		return false
	}
	_, err := time.LoadLocation(tz)
	return err == nil
}

// subscriberIDRule is the 422 message of an invalid subscriberId.
const subscriberIDRule = `must be 1 to 256 characters, other than "." and ".."`

// validSubscriberID checks a path or body subscriberId. "." and ".." are
// refused: URL clients resolve them as dot segments, so no path could name them.
func validSubscriberID(v string) bool {
	n := utf8.RuneCountInString(v)
	return n >= 1 && n <= maxSubscriberID && v != "." && v != ".."
}

func pathSubscriberID(r *http.Request) (string, error) {
	v := r.PathValue("subscriberId")
	if !validSubscriberID(v) {
		return "", invalid("subscriberId", subscriberIDRule, v)
	}
	return v, nil
}

func queryBool(r *http.Request, name string) (*bool, error) {
	q := r.URL.Query()
	if !q.Has(name) {
		return nil, nil
	}
	switch v := q.Get(name); v {
	case "true":
		b := true
		return &b, nil
	case "false":
		b := false
		return &b, nil
	default:
		return nil, invalid(name, "must be true or false", v)
	}
}

func (s *Server) subscriberCreate(w http.ResponseWriter, r *http.Request) error {
	failIfExists, err := queryBool(r, "failIfExists")
	if err != nil {
		return err
	}
	o, err := readObject(r)
	if err != nil {
		return err
	}
	p := readSubscriber(o)
	p.Scope, p.FailIfExists, p.Now = callerFrom(r.Context()).Scope, failIfExists != nil && *failIfExists, s.now()
	if err := o.errs.err(); err != nil {
		return err
	}
	sub, _, err := s.store.SubscriberUpsert(r.Context(), &p)
	if errors.Is(err, store.ErrConflict) {
		return errorf(http.StatusConflict, "Subscriber "+strconv.Quote(p.SubscriberID)+" already exists")
	}
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusCreated, subscriberOut(sub))
	return nil
}

func (s *Server) subscriberGet(w http.ResponseWriter, r *http.Request) error {
	sid, err := pathSubscriberID(r)
	if err != nil {
		return err
	}
	sub, err := s.store.SubscriberGet(r.Context(), callerFrom(r.Context()).Scope, sid)
	if err != nil {
		return subscriberNotFound(err, sid)
	}
	s.writeJSON(w, http.StatusOK, subscriberOut(sub))
	return nil
}

func subscriberNotFound(err error, sid string) error {
	if errors.Is(err, store.ErrNotFound) {
		return errorf(http.StatusNotFound, "Subscriber "+strconv.Quote(sid)+" was not found")
	}
	return err
}

func (s *Server) subscriberPatch(w http.ResponseWriter, r *http.Request) error {
	sid, err := pathSubscriberID(r)
	if err != nil {
		return err
	}
	o, err := readObject(r)
	if err != nil {
		return err
	}
	p := store.SubscriberUpsertParams{Scope: callerFrom(r.Context()).Scope, SubscriberID: sid, UpdateOnly: true, Now: s.now()}
	subscriberAttributes(o, &p)
	if err := o.errs.err(); err != nil {
		return err
	}
	sub, _, err := s.store.SubscriberUpsert(r.Context(), &p)
	if err != nil {
		return subscriberNotFound(err, sid)
	}
	s.writeJSON(w, http.StatusOK, subscriberOut(sub))
	return nil
}

func (s *Server) subscriberDelete(w http.ResponseWriter, r *http.Request) error {
	sid, err := pathSubscriberID(r)
	if err != nil {
		return err
	}
	if err := s.store.SubscriberDelete(r.Context(), &store.SubscriberDeleteParams{Scope: callerFrom(r.Context()).Scope,
		SubscriberID: sid, Now: s.now()}); err != nil {
		return subscriberNotFound(err, sid)
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"acknowledged": true, "status": "deleted"})
	return nil
}

type searchJSON struct {
	Data             []subscriberJSON `json:"data"`
	Next             *string          `json:"next"`
	Previous         *string          `json:"previous"`
	TotalCount       int              `json:"totalCount"`
	TotalCountCapped bool             `json:"totalCountCapped"`
}

// parseSearch reads the search query; it is its own function for fuzzing.
func parseSearch(q map[string][]string, scope store.Scope) (store.SubscriberSearchParams, error) {
	get := func(name string) (string, bool) {
		v, ok := q[name]
		if !ok || len(v) == 0 {
			return "", false
		}
		return v[0], true
	}
	p := store.SubscriberSearchParams{Scope: scope, OrderBy: store.OrderByID, Descending: true, Limit: 10}
	errs := fieldErrors{}
	if v, ok := get("limit"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			errs.add("limit", "must be an integer from 1 to 100", v)
		}
		p.Limit = n
	}
	if v, ok := get("orderBy"); ok {
		switch o := store.SubscriberOrder(v); o {
		case store.OrderByID, store.OrderByCreatedAt, store.OrderByUpdatedAt:
			p.OrderBy = o
		default:
			errs.add("orderBy", "must be one of _id, createdAt, updatedAt", v)
		}
	}
	if v, ok := get("orderDirection"); ok {
		switch v {
		case "ASC":
			p.Descending = false
		case "DESC":
		default:
			errs.add("orderDirection", "must be ASC or DESC", v)
		}
	}
	if v, ok := get("includeCursor"); ok {
		switch v {
		case "true":
			p.IncludeCursor = true
		case "false":
		default:
			errs.add("includeCursor", "must be true or false", v)
		}
	}
	for _, f := range []struct {
		name string
		dst  **string
	}{{"subscriberId", &p.SubscriberID}, {"email", &p.Email}, {"phone", &p.Phone}, {"name", &p.Name}} {
		if v, ok := get(f.name); ok && v != "" {
			if utf8.RuneCountInString(v) > maxString {
				errs.add(f.name, "must be at most 1024 characters", v)
				continue
			}
			*f.dst = &v
		}
	}
	after, hasAfter := get("after")
	before, hasBefore := get("before")
	if hasAfter && hasBefore && after != "" && before != "" {
		errs.add("before", "cannot be combined with after", before)
	}
	for _, c := range []struct {
		name, v string
		dst     **store.Cursor
	}{{"after", after, &p.After}, {"before", before, &p.Before}} {
		if c.v == "" {
			continue
		}
		cur, err := decodeCursor(c.v)
		if err != nil {
			errs.add(c.name, "is not a valid cursor", c.v)
			continue
		}
		if errs["orderBy"].Messages == nil && cur.Order != p.OrderBy {
			errs.add(c.name, "was made for orderBy="+string(cur.Order), c.v)
			continue
		}
		*c.dst = &cur
	}
	return p, errs.err()
}

func (s *Server) subscriberSearch(w http.ResponseWriter, r *http.Request) error {
	p, err := parseSearch(r.URL.Query(), callerFrom(r.Context()).Scope)
	if err != nil {
		return err
	}
	res, err := s.store.SubscriberSearch(r.Context(), &p)
	if err != nil {
		return err
	}
	out := searchJSON{Data: make([]subscriberJSON, 0, len(res.Subscribers)), TotalCount: res.TotalCount,
		TotalCountCapped: res.TotalCountCapped, Next: encodeCursor(res.Next), Previous: encodeCursor(res.Previous)}
	for _, sub := range res.Subscribers {
		out.Data = append(out.Data, subscriberOut(sub))
	}
	s.writeJSON(w, http.StatusOK, out)
	return nil
}

type cursorJSON struct {
	O string `json:"o"`
	K int64  `json:"k,omitempty"`
	I string `json:"i"`
}

// encodeCursor makes an opaque cursor: base64url of the sort key and _id.
func encodeCursor(c *store.Cursor) *string {
	if c == nil {
		return nil
	}
	b, _ := json.Marshal(cursorJSON{O: string(c.Order), K: c.Key, I: c.ID})
	s := base64.RawURLEncoding.EncodeToString(b)
	return &s
}

func decodeCursor(v string) (store.Cursor, error) {
	errBad := errors.New("bad cursor")
	if len(v) > 256 {
		return store.Cursor{}, errBad
	}
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil {
		return store.Cursor{}, errBad
	}
	var c cursorJSON
	if err := json.Unmarshal(b, &c); err != nil || !id.Valid(c.I) {
		return store.Cursor{}, errBad
	}
	o := store.SubscriberOrder(c.O)
	switch o {
	case store.OrderByID:
		if c.K != 0 {
			return store.Cursor{}, errBad
		}
	case store.OrderByCreatedAt, store.OrderByUpdatedAt:
	default:
		return store.Cursor{}, errBad
	}
	return store.Cursor{Order: o, Key: c.K, ID: c.I}, nil
}
