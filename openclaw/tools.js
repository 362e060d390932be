'use strict'

// The model's tools over the engine's memory, as OpenClaw's agent tools: search the
// stored conversation, expand a message or a summary back into its messages. The tools
// themselves (names, schemas, answers) are the addon's `MemoryStore.tools`; this module
// gives them OpenClaw's shape and the prompt guidance that goes with them.

const { memoryToolDefinitions } = require('../index.js')

const DEFINITIONS = Object.freeze(memoryToolDefinitions())
const [SEARCH, EXPAND] = DEFINITIONS.map((d) => d.name)
/** The names the plugin registers (and declares in its manifest's `contracts.tools`). */
const TOOL_NAMES = Object.freeze(DEFINITIONS.map((d) => d.name))
const LABELS = { [SEARCH]: 'Conversation Search', [EXPAND]: 'Conversation Expand' }

/**
 * What the prompt says about the tools (OpenClaw leaves its own memory-recall section
 * out when another context engine is selected). Stable text: it is part of the cached
 * system prompt.
 */
const RECALL_GUIDANCE = [
  '## Conversation recall',
  `Older turns of this chat are summarized or out of your context. Before answering about something said earlier that you do not see here, run ${SEARCH} with words it would contain; ${EXPAND} shows the turns around a result's id, or the messages a record: id summarizes.`,
  'If nothing is found, say that you checked.',
].join('\n')

/**
 * The tools of one OpenClaw session, as `api.registerTool` factories return them.
 * @param {() => import('../index').MemoryStore} memory the engine's store (opened on use)
 * @param {{ sessionId: string, threadKey: string, speakers?: object } | (() => object)} scope
 *   the tools' scope, or a function giving it at each call (the speakers known by then)
 * @param {(method: string, err: unknown) => void} note reports a fault
 * @param {import('./embedder').Embedder | null} [embedder] the host's model: a search's
 *   query gets its vector, and the messages nearest it join the words' matches
 */
function agentTools(memory, scope, note, embedder = null) {
  return DEFINITIONS.map((def) => ({
    name: def.name,
    label: LABELS[def.name] ?? def.name,
    description: def.description,
    parameters: def.input_schema,
    // Offered to the model as they are, not behind OpenClaw's tool-search catalog: the
    // guidance names them, and the model calls them in the turn it needs them.
    catalogMode: 'direct-only',
    async execute(_toolCallId, params) {
      let text
      // Only a search has a query to embed; a failed embedding is noted by the embedder.
      const query = def.name === SEARCH && typeof params?.query === 'string' ? params.query : null
      const vector = embedder !== null && query !== null ? await embedder.query(query) : null
      try {
        const tools = await (await memory()).tools(typeof scope === 'function' ? scope() : scope)
        text = await tools.execute(def.name, params ?? {}, vector)
      } catch (err) {
        // The store could not be opened: an answer the model can read, never a throw.
        note('tools', err)
        const message = err instanceof Error ? err.message : String(err)
        text = JSON.stringify({ error: { code: 'internal', tool: def.name, message } })
      }
      return { content: [{ type: 'text', text }], details: { tool: def.name } }
    },
  }))
}

module.exports = { agentTools, RECALL_GUIDANCE, TOOL_NAMES }
