// The plugin against the real plugin SDK typings of the `openclaw` package: the engine
// is a `ContextEngine`, the factory is what `registerContextEngine` takes, and the plugin
// definition is an `OpenClawPluginDefinition` whose `register` takes the real API.
import type { HarnessContextEngine } from 'openclaw/plugin-sdk/agent-harness-runtime'
import type { OpenClawPluginApi, OpenClawPluginDefinition } from 'openclaw/plugin-sdk/plugin-entry'
import plugin, { createContextEngine, ENGINE_ID } from '@openclaw/context-engine/openclaw'

type Factory = Parameters<OpenClawPluginApi['registerContextEngine']>[1]

export const engine: HarnessContextEngine = createContextEngine({ path: ':memory:' })
export const factory: Factory = (ctx) => createContextEngine({ summarizer: 'llm' }, { agentDir: ctx.agentDir })
export const definition: OpenClawPluginDefinition = plugin
export function register(api: OpenClawPluginApi): void {
  plugin.register(api)
  api.registerContextEngine(ENGINE_ID, factory)
}

// The recall tools: what the plugin's tool factory returns is what `registerTool` takes.
type ToolFactory = Extract<Parameters<OpenClawPluginApi['registerTool']>[0], (...args: never[]) => unknown>
export const toolFactory: ToolFactory = (ctx) => createContextEngine({ path: ':memory:' }).agentTools(ctx)
