// Package janitor holds the pressure-janitor configuration: the versioned file type
// JanitorConfiguration (apiVersion pressure.kube-pressure.io/v1alpha1), its loader (strict: unknown
// fields are rejected), defaults, command-line overrides (Overrides: the daemons' common flags of
// internal/config/cmdline and the janitor's own) and Validate, which returns every problem at
// once, each naming the source (file or "flags"), the field and the value.
//
// Config flows one way: Load (or an empty JanitorConfiguration) → Overrides.Apply → SetDefaults →
// Validate → Convert, which yields the typed Config the janitor runs with. Absent is not zero: every
// optional field of the file type is a pointer, so "ttl: 0s" (delete as soon as seen) differs from an
// unset ttl (the default).
package janitor
