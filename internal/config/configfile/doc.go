// Package configfile is what the pressure-agent and pressure-janitor configuration files share: the
// strict loader of a versioned file (YAML or JSON; unknown and duplicate fields, another apiVersion or
// kind are errors naming the file), and the validation problem type FieldError (source, field, value,
// why) with a Validator that collects every problem at once.
package configfile
