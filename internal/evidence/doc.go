// Package evidence is the wire format of the evidence pressure-janitor keeps about the pods it
// deletes, written by internal/janitor and read back by `kubectl pressure why` (internal/cli,
// internal/why):
//
//   - an Event with reason EventReason, source Component, named EventName(owner UID) (bare pod) or
//     EventName(owner UID).<window start> (workload), whose annotation Annotation holds a Window as
//     JSON: the owner, the count of deleted pods and the first MaxWindowRecords Records;
//   - a Record per pod: phase, reason, message, eviction time and its source, QoS class, requests and
//     limits (ListText: "cpu=100m,memory=128Mi"), also the message of the Event and the fields of the
//     janitor's log line.
//
// Decode reads an annotation back (a Window, or a single Record as janitors before windows wrote it);
// Verified says whether an Event's name and source are those only the janitor may write.
//
// Pure: the standard library only, no I/O, no clock (times are arguments).
package evidence
