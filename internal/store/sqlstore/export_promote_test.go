package sqlstore

import "github.com/herald-notify/herald/internal/store"

// FailPublishInto makes every publish into the target environment call
// fault before it writes each resource (nil removes it).
func FailPublishInto(targetEnvironmentID string, fault func(store.ResourceRef) error) {
	if fault == nil {
		promoteFaults.Delete(targetEnvironmentID)
		return
	}
	promoteFaults.Store(targetEnvironmentID, fault)
}
