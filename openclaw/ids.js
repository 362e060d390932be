'use strict'

// The engine's names, which OpenClaw's config and manifest refer to (no addon needed).

/** The engine's id: the plugin id, the registered id and `info.id`. */
const ENGINE_ID = 'context-engine'
const ENGINE_NAME = 'Context Engine (SQLite memory)'

module.exports = { ENGINE_ID, ENGINE_NAME }
