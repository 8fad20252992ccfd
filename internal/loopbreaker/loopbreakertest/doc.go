// Package loopbreakertest holds test doubles of the loop breaker's dependencies.
package loopbreakertest
