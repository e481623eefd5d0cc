package engine_test

import (
	"time"

	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/store/sqlstore"
)

func engineWithRealClock(db *sqlstore.DB) *engine.Engine {
	return engine.New(engine.Options{Store: db, Poll: 200 * time.Millisecond, Listen: db.ListenJobs})
}
