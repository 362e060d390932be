'use strict'

// The plugin's config (`plugins.entries.context-engine.config`), read by the schema
// `openclaw.plugin.json` declares. OpenClaw validates it against that schema before the plugin loads; this
// reader still takes any value, keeps what is usable and reports the rest, because an
// engine that throws on construction would be quarantined.

// The schema is the one source of the options: their names, types, ranges and defaults.
const { configSchema } = require('../openclaw.plugin.json')

/** Each option's default: the schema's `default`, else none (`path` is computed from the
 * host's agent directory, `compaction` and `slack` are off). */
const DEFAULTS = Object.freeze(
  Object.fromEntries(Object.entries(configSchema.properties).map(([key, schema]) => [key, 'default' in schema ? schema.default : key === 'compaction' ? undefined : null])),
)

/** A config string OpenClaw could not substitute from the environment. */
const UNRESOLVED = /^\$\{[A-Z_][A-Z0-9_]*\}$/

/** Whether `value` is one `schema` (the subset of JSON Schema the manifest uses) admits. */
function admits(schema, value) {
  switch (schema.type) {
    case 'string':
      if (typeof value !== 'string') return false
      if (schema.minLength !== undefined && value.length < schema.minLength) return false
      if (schema.pattern !== undefined && !new RegExp(schema.pattern).test(value)) return false
      break
    case 'integer':
    case 'number':
      if (schema.type === 'integer' ? !Number.isInteger(value) : typeof value !== 'number' || !Number.isFinite(value)) return false
      if (schema.minimum !== undefined && value < schema.minimum) return false
      if (schema.exclusiveMinimum !== undefined && value <= schema.exclusiveMinimum) return false
      if (schema.maximum !== undefined && value > schema.maximum) return false
      break
    case 'boolean':
      if (typeof value !== 'boolean') return false
      break
    case 'array':
      if (!Array.isArray(value)) return false
      if (schema.maxItems !== undefined && value.length > schema.maxItems) return false
      if (schema.items !== undefined && !value.every((item) => admits(schema.items, item))) return false
      break
    case 'object': {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return false
      const props = schema.properties ?? {}
      if ((schema.required ?? []).some((k) => value[k] === undefined)) return false
      for (const [k, v] of Object.entries(value)) {
        if (!(k in props)) {
          if (schema.additionalProperties === false) return false
          continue
        }
        if (v !== undefined && !admits(props[k], v)) return false
      }
      break
    }
    default:
      return false
  }
  return schema.enum === undefined || schema.enum.includes(value)
}

/** What the schema cannot say: a zone `Intl` knows, a token OpenClaw did substitute. */
const BEYOND_SCHEMA = {
  timeZone: (v) => {
    try {
      return new Intl.DateTimeFormat('en-US', { timeZone: v }).resolvedOptions().timeZone !== undefined
    } catch {
      return false
    }
  },
  // OpenClaw leaves a `${VAR}` it cannot resolve in place.
  slack: (v) => !UNRESOLVED.test(v.botToken),
}

const usable = (key, value) => admits(configSchema.properties[key], value) && (BEYOND_SCHEMA[key]?.(value) ?? true)

/**
 * The usable options of `config`, defaults for the rest, and what was set aside
 * (`problems`, one sentence each).
 */
function readOptions(config) {
  const options = { ...DEFAULTS }
  const problems = []
  if (config === undefined || config === null) return Object.assign(options, { problems })
  if (typeof config !== 'object' || Array.isArray(config)) {
    problems.push(`config: expected an object, got ${Array.isArray(config) ? 'an array' : typeof config}`)
    return Object.assign(options, { problems })
  }
  for (const [key, value] of Object.entries(config)) {
    if (!(key in configSchema.properties)) problems.push(`config.${key}: unknown option (ignored)`)
    else if (value !== undefined && !usable(key, value)) problems.push(`config.${key}: unusable value ${shown(key, value)} (default kept)`)
    else if (value !== undefined) options[key] = value
  }
  return Object.assign(options, { problems })
}

/** A rejected value as a diagnostic shows it: never a token. */
function shown(key, value) {
  if (key === 'slack' && value !== null && typeof value === 'object') {
    const token = value.botToken
    if (typeof token === 'string' && UNRESOLVED.test(token)) return `${JSON.stringify({ ...value })} (${token} is not set in the environment)`
    return JSON.stringify({ ...value, ...(typeof token === 'string' ? { botToken: '(hidden)' } : {}) })
  }
  return JSON.stringify(value)
}

module.exports = { readOptions, DEFAULTS }
