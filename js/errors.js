// Errors the JS layer throws, shaped like the native ones: a TypeError or RangeError
// whose message starts with the export's name and the field path, with `code` and
// `path` properties (see ContextEngineErrorCode in the typings).
'use strict'

const CODES = { TypeError: 'ERR_INVALID_ARG_TYPE', RangeError: 'ERR_OUT_OF_RANGE' }

/** A `Kind` error for `path` of export `name`, coded as the native layer codes it. */
function inputError(Kind, name, path, message, code = CODES[Kind.name]) {
  const err = new Kind(`${name}: ${path}: ${message}`)
  err.code = code
  err.path = path
  return err
}

/**
 * What the caller's own code threw while its input was read (a getter, a Proxy trap),
 * or a value V8 cannot handle, as a TypeError of export `name` with the original as its
 * `cause`. Running out of stack stays the RangeError it is.
 */
function unreadable(name, path, err) {
  const msg = err instanceof Error ? String(err.message) : undefined
  if (err instanceof RangeError && /Maximum call stack/.test(msg)) return err
  const out = inputError(TypeError, name, path, `cannot be read (${msg ?? `threw ${typeof err}`})`, 'ERR_UNREADABLE_INPUT')
  out.cause = err
  return out
}

module.exports = { inputError, unreadable }
