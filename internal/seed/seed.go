// Package seed generates realistic subscribers for benchmarks and demos and
// bulk-loads them into a store. Generation is deterministic: subscriber n of
// a given seed is always the same, whatever order or batch it is made in, so
// a benchmark can compute what to query without reading the database.
//
// The scheme: subscriber n (counting from 0) has subscriberId
// SubscriberID(n) ("sub-00000042"), the e-mail first.last.n@domain in lower
// case (unique), an _id whose time part is its creation time, and a creation
// time of Epoch + n×Spacing, so _id, createdAt and n sort alike.
package seed

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/herald-notify/herald/internal/store"
)

// Epoch is the creation time of subscriber 0.
var Epoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// Spacing is the time between the creation of two consecutive subscribers.
const Spacing = 30 * time.Second

// DefaultSeed is the seed `herald seed` and the benchmarks use unless told otherwise.
const DefaultSeed = 1

// SubscriberID is the subscriberId of subscriber n.
func SubscriberID(n int) string { return fmt.Sprintf("sub-%08d", n) }

// Generator makes the subscribers of one environment from one seed.
type Generator struct {
	scope store.Scope
	seed  uint64
	// idMiddle is the 5 bytes of an _id between its time and its counter,
	// fixed per seed as they are fixed per process in package id.
	idMiddle [5]byte
}

// New returns the generator of seed for the environment of scope.
func New(scope store.Scope, seed uint64) *Generator {
	g := &Generator{scope: scope, seed: seed}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], rand.New(rand.NewPCG(seed, 0x5eed)).Uint64())
	copy(g.idMiddle[:], b[:5])
	return g
}

// Subscriber returns subscriber n.
func (g *Generator) Subscriber(n int) store.Subscriber {
	r := rand.New(rand.NewPCG(g.seed, uint64(n)))
	first := firstNames[r.IntN(len(firstNames))]
	last := lastNames[r.IntN(len(lastNames))]
	domain := domains[r.IntN(len(domains))]
	created := Epoch.Add(time.Duration(n) * Spacing)
	updated := created.Add(time.Duration(r.IntN(90*24*60)) * time.Minute)
	email := ascii(first) + "." + ascii(last) + "." + strconv.Itoa(n) + "@" + domain

	s := store.Subscriber{
		ID:             g.objectID(created, n),
		OrganizationID: g.scope.OrganizationID,
		EnvironmentID:  g.scope.EnvironmentID,
		SubscriberID:   SubscriberID(n),
		FirstName:      &first,
		LastName:       &last,
		Email:          &email,
		Locale:         ptr(locales[r.IntN(len(locales))]),
		Timezone:       ptr(timezones[r.IntN(len(timezones))]),
		CreatedAt:      created,
		UpdatedAt:      updated,
	}
	if r.IntN(100) < 80 { // most people leave a phone number
		s.Phone = ptr(fmt.Sprintf("+1%03d555%04d", 200+r.IntN(800), r.IntN(10000)))
	}
	if r.IntN(100) < 30 {
		s.Avatar = ptr("https://avatars.example.com/" + strconv.Itoa(n) + ".png")
	}
	if r.IntN(100) < 70 {
		s.Data = store.JSON(fmt.Sprintf(`{"plan":%q,"signupSource":%q,"score":%d,"beta":%t}`,
			plans[r.IntN(len(plans))], sources[r.IntN(len(sources))], r.IntN(1000), r.IntN(4) == 0))
	}
	return s
}

// Batch appends subscribers from (inclusive) to to (exclusive) to dst.
func (g *Generator) Batch(dst []store.Subscriber, from, to int) []store.Subscriber {
	for n := from; n < to; n++ {
		dst = append(dst, g.Subscriber(n))
	}
	return dst
}

// objectID is an _id of the shape package id makes: 4 bytes of Unix seconds,
// 5 bytes fixed per seed, 3 bytes of n. Creation times are Spacing apart,
// so the ids are unique and ordered like n.
func (g *Generator) objectID(t time.Time, n int) string {
	var b [12]byte
	binary.BigEndian.PutUint32(b[0:4], uint32(t.Unix()))
	copy(b[4:9], g.idMiddle[:])
	b[9], b[10], b[11] = byte(n>>16), byte(n>>8), byte(n)
	return hex.EncodeToString(b[:])
}

func ptr(s string) *string { return &s }

// ascii lower-cases a name and drops its diacritics for the e-mail address.
func ascii(name string) string { return strings.ToLower(asciiReplacer.Replace(name)) }

var asciiReplacer = strings.NewReplacer("é", "e", "è", "e", "ë", "e", "á", "a", "ã", "a", "ä", "a", "í", "i",
	"ó", "o", "ö", "o", "ø", "o", "ú", "u", "ü", "u", "ñ", "n", "ç", "c", "ß", "ss", "ł", "l", "ą", "a", "'", "", " ", "")

// LastNames are the last names subscribers get, each about equally often:
// a name-substring benchmark picks among them.
func LastNames() []string { return append([]string(nil), lastNames...) }

var firstNames = []string{
	"Ada", "Alan", "Alice", "Amara", "Amelia", "Ana", "André", "Anna", "Arjun", "Astrid", "Ayesha", "Ben",
	"Björn", "Camille", "Carlos", "Charlotte", "Chen", "Chloé", "Daniel", "David", "Diego", "Dmitri", "Elena",
	"Elif", "Ella", "Emil", "Emma", "Eva", "Fatima", "Felix", "Finn", "Freya", "Gabriel", "Grace", "Hana",
	"Hannah", "Hiro", "Hugo", "Ibrahim", "Ines", "Isabel", "Ivan", "Jack", "Jakob", "James", "Javier", "Jin",
	"Johan", "José", "Julia", "Kai", "Karim", "Kenji", "Laila", "Lars", "Laura", "Leila", "Leo", "Lina",
	"Lucas", "Lucía", "Luis", "Maja", "Marco", "Maria", "Mateo", "Maya", "Mei", "Mia", "Miguel", "Mohammed",
	"Nadia", "Nia", "Nikolai", "Noah", "Nora", "Olga", "Oliver", "Omar", "Oscar", "Paula", "Pedro", "Priya",
	"Rafael", "Ravi", "Rosa", "Ruth", "Sakura", "Samuel", "Sara", "Sofia", "Sven", "Tariq", "Thomas", "Tomás",
	"Uma", "Valentina", "Wei", "Yara", "Yusuf", "Zara", "Zoë",
}

var lastNames = []string{
	"Abbott", "Adeyemi", "Ahmed", "Alvarez", "Andersen", "Bauer", "Becker", "Bergström", "Bianchi", "Brown",
	"Campbell", "Castillo", "Chen", "Clark", "Costa", "Dąbrowski", "Davies", "Dubois", "Dupont", "Eriksson",
	"Fernández", "Fischer", "Fontaine", "García", "Gonzalez", "Gupta", "Hansen", "Hernández", "Hoffmann",
	"Horvat", "Ibrahim", "Ivanova", "Jansen", "Jensen", "Johansson", "Johnson", "Jones", "Kaur", "Kim",
	"Kowalski", "Kumar", "Larsen", "Laurent", "Lee", "Lefebvre", "Li", "Lindqvist", "Lopez", "Martin",
	"Martínez", "Meyer", "Moreau", "Müller", "Murphy", "Nakamura", "Nguyen", "Nielsen", "Novak", "O'Brien",
	"Okafor", "Olsen", "Park", "Patel", "Pereira", "Petrov", "Popescu", "Rahman", "Ramos", "Ricci", "Roberts",
	"Rodríguez", "Romano", "Rossi", "Sánchez", "Santos", "Sato", "Schmidt", "Schneider", "Silva", "Singh",
	"Smith", "Sokolov", "Suzuki", "Tanaka", "Taylor", "Thomas", "Van Dijk", "Virtanen", "Wagner", "Walker",
	"Wang", "Weber", "Williams", "Wilson", "Wójcik", "Yamamoto", "Yilmaz", "Zhang", "Zimmermann",
}

var domains = []string{
	"example.com", "example.org", "example.net", "mail.example.com", "inbox.example.org", "acme.test",
	"globex.test", "initech.test", "umbrella.test", "hooli.test", "stark.test", "wayne.test",
}

var locales = []string{
	"en-US", "en-GB", "en-IN", "de-DE", "fr-FR", "es-ES", "es-MX", "pt-BR", "it-IT", "nl-NL", "sv-SE", "pl-PL",
	"tr-TR", "ja-JP", "ko-KR", "zh-CN", "ar-EG", "hi-IN",
}

var timezones = []string{
	"America/New_York", "America/Chicago", "America/Denver", "America/Los_Angeles", "America/Sao_Paulo",
	"America/Mexico_City", "Europe/London", "Europe/Berlin", "Europe/Paris", "Europe/Madrid", "Europe/Warsaw",
	"Europe/Stockholm", "Europe/Istanbul", "Africa/Cairo", "Africa/Lagos", "Asia/Kolkata", "Asia/Tokyo",
	"Asia/Seoul", "Asia/Shanghai", "Asia/Singapore", "Australia/Sydney", "Pacific/Auckland", "UTC",
}

var plans = []string{"free", "free", "free", "starter", "pro", "enterprise"}

var sources = []string{"web", "ios", "android", "import", "api"}
