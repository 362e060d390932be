'use strict'
// A seeded xorshift32 generator, so every benchmark run draws the same data.

/** Returns `rand()`: the next number in [0, 1) of the sequence that `seed` starts. */
function xorshift(seed) {
  let s = seed >>> 0 || 1
  return function rand() {
    s ^= s << 13
    s ^= s >>> 17
    s ^= s << 5
    return (s >>> 0) / 4294967296
  }
}

module.exports = { xorshift }
