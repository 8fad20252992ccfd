// Package cmdlinetest holds, for the daemons' tests, the user-facing contract of the flags both daemons
// take: their names, shorthands, types and defaults (CommonFlags), and CheckCommonFlags.
package cmdlinetest
