'use strict'

// The plugin's config (`plugins.entries.context-engine.config`), as `openclaw.plugin.json`
// declares it. OpenClaw validates it against that schema before the plugin loads; this
// reader still takes any value, keeps what is usable and reports the rest, because an
// engine that throws on construction would be quarantined.

const DEFAULTS = Object.freeze({
  path: null,
  policy: '',
  personality: '',
  summarizer: 'extractive',
  summarizerTimeoutMs: 20_000,
  memories: 5,
  memoryBudgetTokens: 2_000,
  recallTokens: 2_000,
  recallTools: true,
  reattachMedia: true,
  compactWhenTrimming: true,
  compaction: undefined,
  history: true,
  threadStatus: true,
  historyTokens: 30_000,
  timeZone: 'UTC',
  threadBlock: true,
  threadBlockLimit: 15,
  slack: null,
})

/** A config string OpenClaw could not substitute from the environment. */
const UNRESOLVED = /^\$\{[A-Z_][A-Z0-9_]*\}$/

const CHECKS = {
  path: (v) => typeof v === 'string' && v !== '',
  policy: (v) => typeof v === 'string',
  personality: (v) => typeof v === 'string',
  summarizer: (v) => v === 'extractive' || v === 'llm',
  summarizerTimeoutMs: (v) => Number.isInteger(v) && v > 0,
  memories: (v) => Number.isInteger(v) && v >= 0,
  memoryBudgetTokens: (v) => Number.isInteger(v) && v >= 0,
  recallTokens: (v) => Number.isInteger(v) && v >= 0,
  recallTools: (v) => typeof v === 'boolean',
  reattachMedia: (v) => typeof v === 'boolean',
  compactWhenTrimming: (v) => typeof v === 'boolean',
  history: (v) => typeof v === 'boolean',
  threadStatus: (v) => typeof v === 'boolean',
  historyTokens: (v) => Number.isInteger(v) && v >= 0,
  timeZone: (v) => {
    try {
      return typeof v === 'string' && new Intl.DateTimeFormat('en-US', { timeZone: v }).resolvedOptions().timeZone !== undefined
    } catch {
      return false
    }
  },
  threadBlock: (v) => typeof v === 'boolean',
  threadBlockLimit: (v) => Number.isInteger(v) && v >= 1,
  slack: (v) =>
    v !== null &&
    typeof v === 'object' &&
    typeof v.botToken === 'string' &&
    v.botToken !== '' &&
    // OpenClaw leaves a `${VAR}` it cannot resolve in place.
    !UNRESOLVED.test(v.botToken) &&
    Object.entries(v).every(([k, x]) =>
      k === 'botToken' ||
      (k === 'apiUrl' && typeof x === 'string' && /^https?:\/\/\S+$/.test(x)) ||
      (k === 'rateLimit' && (x === 'default' || x === 'slack-non-marketplace')),
    ),
  compaction: (v) =>
    v !== null &&
    typeof v === 'object' &&
    Object.entries(v).every(
      ([k, n]) => ['maxRecentMessages', 'maxRecentTokens', 'maxSummaryAgeMs', 'keepRecent'].includes(k) && Number.isInteger(n) && n >= (k === 'keepRecent' ? 1 : 0),
    ),
}

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
    const check = CHECKS[key]
    if (!check) problems.push(`config.${key}: unknown option (ignored)`)
    else if (value !== undefined && !check(value)) problems.push(`config.${key}: unusable value ${shown(key, value)} (default kept)`)
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
