'use strict'

// The OpenClaw plugin: `register(api)` registers the context engine under the id its
// `info.id` carries, so `plugins.slots.contextEngine: "context-engine"` selects it.
// Loaded by OpenClaw from `package.json#openclaw.extensions`; also importable as
// `@openclaw/context-engine/openclaw` to build the engine directly.
//
// The engine needs the package's native addon. This module loads without it: when the
// addon cannot load (a platform package not installed), `register` says so once and
// registers nothing, and OpenClaw goes on with its own context engine.

const path = require('node:path')
const { placeSession, laneOf } = require('./session-key.js')
const { ENGINE_ID, ENGINE_NAME } = require('./ids.js')

let loaded = null

/** The engine module, loaded once: `{ engine }`, or `{ error }` when the addon cannot load. */
function engineModule() {
  if (loaded === null) {
    try {
      loaded = { engine: require('./engine.js') }
    } catch (error) {
      loaded = { error }
    }
  }
  return loaded
}

/** The engine module, or the load error thrown (for a direct caller). */
function engineOrThrow() {
  const m = engineModule()
  if (m.error) throw m.error
  return m.engine
}

/** What to tell an OpenClaw user whose plugin install lacks the addon, in one message. */
function missingAddonAdvice(error) {
  const dir = path.resolve(__dirname, '..')
  const { version } = require('../package.json')
  const first = String(error && error.message).split('\n')[0]
  const pkg = error && error.prebuilt ? `${error.prebuilt}@${version}` : null
  const fix = pkg
    ? `install the platform package into the plugin: npm install --prefix "${dir}" ${pkg} (or build it from source there: cd "${dir}" && npx context-engine build; or, from a checkout, install the archive \`npm run pack:plugin\` writes, which carries the addon built there)`
    : `reinstall the plugin (${first})`
  return `[${ENGINE_ID}] not registered: ${first} OpenClaw goes on with its own context engine. To use this one, ${fix}.`
}

/**
 * A context engine over the package's SQLite memory store.
 * @param {object} [options] the plugin's config
 * @param {{ agentDir?: string, logger?: object }} [host]
 */
function createContextEngine(options, host) {
  const { MemoryContextEngine } = engineOrThrow()
  return new MemoryContextEngine(options, host)
}

let warned = false

const plugin = {
  id: ENGINE_ID,
  name: ENGINE_NAME,
  description:
    'Conversation memory over SQLite for OpenClaw: thread-keyed recent messages, rolling structured summaries, retrieved facts, within the token budget.',
  register(api) {
    const logger = api && api.logger
    const m = engineModule()
    if (m.error) {
      if (!warned) {
        warned = true
        const advice = missingAddonAdvice(m.error)
        try {
          if (logger && typeof logger.error === 'function') logger.error(advice)
          else if (logger && typeof logger.warn === 'function') logger.warn(advice)
          else console.warn(advice)
        } catch {
          // A logger that throws changes nothing.
        }
      }
      return
    }
    const config = api.pluginConfig
    // The host's config tells the engine each model's window and reply size.
    api.registerContextEngine(ENGINE_ID, (ctx) => createContextEngine(config, { agentDir: ctx && ctx.agentDir, logger, config: (ctx && ctx.config) || api.config }))
    // The model's recall tools, over the same file as the engine (one store per agent
    // directory, opened on first use), scoped per call to the session OpenClaw names.
    if (config && config.recallTools === false) return
    if (typeof api.registerTool !== 'function') return
    const toolEngines = new Map()
    api.registerTool(
      (ctx) => {
        const agentDir = ctx && typeof ctx.agentDir === 'string' ? ctx.agentDir : ''
        let e = toolEngines.get(agentDir)
        if (e === undefined) {
          e = createContextEngine(config, { agentDir: agentDir || undefined, logger })
          toolEngines.set(agentDir, e)
        }
        return e.agentTools(ctx)
      },
      { names: [...m.engine.TOOL_NAMES] },
    )
  },
}

module.exports = plugin
module.exports.default = plugin
module.exports.createContextEngine = createContextEngine
module.exports.ENGINE_ID = ENGINE_ID
module.exports.placeSession = placeSession
module.exports.laneOf = laneOf
// These need the addon: read on use, so loading this module never does.
for (const name of ['MemoryContextEngine', 'recoveryPreamble', 'isTurnMessage', 'TOOL_NAMES']) {
  Object.defineProperty(module.exports, name, { enumerable: true, get: () => engineOrThrow()[name] })
}
