// Package evictaudit has the API server write every eviction request (create pods/eviction) to a JSON
// audit log and reads that log back: one record per request, so a duplicate request is counted, where
// Events merge repeats of the same reason and object into one Event with a count. Used by the level-2
// tests (test/e2edisk, test/e2e) and bench/agent. WritesArgs and ReadWrites log every write of pods,
// nodes, ConfigMaps and admission objects instead, with the dry-run ones marked: what a dry run must
// not do (internal/janitor's dry-run test).
package evictaudit
