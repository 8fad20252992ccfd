// Package sourcetest holds test helpers around the node readers of package source: AfterFirstRead
// makes a change to the node right after a snapshot's first read, to test what a reader sees when the
// node moves between its reads.
package sourcetest
