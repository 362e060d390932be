'use strict'

// The OpenClaw plugin: `register(api)` registers the context engine under the id its
// `info.id` carries, so `plugins.slots.contextEngine: "context-engine"` selects it.
// Loaded by OpenClaw from `package.json#openclaw.extensions`; also importable as
// `@openclaw/context-engine/openclaw` to build the engine directly.

const { MemoryContextEngine, ENGINE_ID, ENGINE_NAME, recoveryPreamble, isTurnMessage } = require('./engine.js')
const { placeSession, laneOf } = require('./session-key.js')

/**
 * A context engine over the package's SQLite memory store.
 * @param {object} [options] the plugin's config
 * @param {{ agentDir?: string, logger?: object }} [host]
 */
function createContextEngine(options, host) {
  return new MemoryContextEngine(options, host)
}

const plugin = {
  id: ENGINE_ID,
  name: ENGINE_NAME,
  description:
    'Conversation memory over SQLite for OpenClaw: thread-keyed recent messages, rolling structured summaries, retrieved facts, within the token budget.',
  register(api) {
    const logger = api && api.logger
    api.registerContextEngine(ENGINE_ID, (ctx) =>
      createContextEngine(api.pluginConfig, { agentDir: ctx && ctx.agentDir, logger }),
    )
  },
}

module.exports = plugin
module.exports.default = plugin
module.exports.createContextEngine = createContextEngine
module.exports.MemoryContextEngine = MemoryContextEngine
module.exports.ENGINE_ID = ENGINE_ID
module.exports.placeSession = placeSession
module.exports.laneOf = laneOf
module.exports.recoveryPreamble = recoveryPreamble
module.exports.isTurnMessage = isTurnMessage
