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

/**
 * The same input error as export `name` reports it: `err` was thrown by export `from`
 * (its message is `${from}: ${err.path}: detail`, as every coded error of this package
 * is), and the caller knows the field as `mapPath(err.path)`. Code, kind and cause are
 * kept. Anything else (an uncoded error, another export's) is returned unchanged.
 */
function asExport(err, from, name, mapPath = (path) => path) {
  if (!(err instanceof TypeError || err instanceof RangeError)) return err
  if (typeof err.code !== 'string' || typeof err.path !== 'string') return err
  const prefix = `${from}: ${err.path}: `
  const message = String(err.message)
  if (!message.startsWith(prefix)) return err
  const out = inputError(err.constructor, name, mapPath(err.path), message.slice(prefix.length), err.code)
  if (err.cause !== undefined) out.cause = err.cause
  return out
}

module.exports = { asExport, inputError, unreadable }
