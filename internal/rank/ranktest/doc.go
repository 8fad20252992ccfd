// Package ranktest builds rank.Candidates from the pod lines of the scenario scripts of
// internal/decision and internal/policy (and for other tests): one language, one parser.
package ranktest
