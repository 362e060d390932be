// Shapes and rules that live in more than one file, checked against their one source:
// the plugin's options against its manifest schema, OpenClaw's lanes against the store's
// thread keys, the error codes against the union the typings declare.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { MemoryStore } from '@openclaw/context-engine'

const root = join(__dirname, '..')
const require = createRequire(import.meta.url)
const manifest = JSON.parse(readFileSync(join(root, 'openclaw.plugin.json'), 'utf8'))
const { readOptions, DEFAULTS } = require('../openclaw/options.js')
const { placeSession, laneOf } = require('../openclaw/session-key.js')

/** The member names of interface `name` in a declaration file. */
function membersOf(file: string, name: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true)
  let found: string[] | null = null
  source.forEachChild((node) => {
    if (ts.isInterfaceDeclaration(node) && node.name.text === name) {
      found = node.members.flatMap((m) => (m.name && ts.isIdentifier(m.name) ? [m.name.text] : []))
    }
  })
  if (found === null) throw new Error(`no interface ${name} in ${file}`)
  return found
}

function files(dir: string, ext: RegExp): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f)
    return statSync(p).isDirectory() ? files(p, ext) : ext.test(f) ? [p] : []
  })
}

describe('written once', () => {
  it("the plugin's options are its manifest schema: names, typings, defaults, checks", () => {
    const schema = manifest.configSchema.properties
    expect(Object.keys(DEFAULTS).sort()).toEqual(Object.keys(schema).sort())
    expect(membersOf(join(root, 'openclaw', 'index.d.ts'), 'ContextEngineOptions').sort()).toEqual(Object.keys(schema).sort())
    for (const [key, s] of Object.entries<any>(schema)) {
      // A default a description states is the schema's own.
      const said = /\(default ([\w"'.-]+)/.exec(s.description ?? '')
      if (said && 'default' in s) expect(said[1].replace(/["']/g, ''), key).toBe(String(s.default))
      if ('default' in s) expect(readOptions({ [key]: s.default }).problems, key).toEqual([])
    }
    // The schema's ranges are the reader's: each minimum, each enum.
    expect(readOptions({ threadBlockLimit: 0, memories: -1, summarizer: 'gpt' }).problems).toHaveLength(3)
    expect(readOptions({ compaction: { keepRecent: 1, maxRecentMessages: 0 }, slack: { botToken: 'xoxb-1', apiUrl: 'https://slack.test/api' } }).problems).toEqual([])
    expect(readOptions({ slack: { botToken: 'xoxb-1', apiUrl: 'ftp://x' } }).problems).toHaveLength(1)
  })

  it("OpenClaw's lanes are the store's thread keys for the same placement", () => {
    const keys = [
      'agent:main:slack:channel:C0TEAM:thread:1775835600.000100',
      'agent:main:telegram:group:-100123:topic:7',
      'agent:main:telegram:direct:42',
      'agent:ops:discord:channel:998877',
      'custom-session',
      'a:b:thread:',
      'x:y:topic:9',
    ]
    for (const [i, key] of keys.entries()) {
      const place = placeSession(key, `s${i}`)
      const memory = new MemoryStore()
      const [stored] = memory.ingest([
        { sessionId: place.sessionId, chatId: place.chatId, messageId: 'm1', role: 'user', text: 'hi', ts: 1, topicId: place.topicId, replyTo: place.replyTo },
      ])
      expect(stored.threadKey, key).toBe(laneOf(place))
      memory.close()
    }
  })

  it('every error code the package throws is in the union the typings declare, and each there is thrown', () => {
    const header = readFileSync(join(root, 'js', 'header.d.ts'), 'utf8')
    const union = /export type ContextEngineErrorCode =([\s\S]*?)\n\n/.exec(header)![1]
    const declared = new Set([...union.matchAll(/'([A-Z_]+)'/g)].map((m) => m[1]))
    const sources = [...files(join(root, 'src'), /\.rs$/).filter((f) => !/tests?(\.rs|\/)/.test(f)), ...files(join(root, 'js'), /\.js$/), ...files(join(root, 'openclaw'), /\.js$/), join(root, 'scripts', 'gen-loader.js')]
    const used = new Set<string>()
    for (const f of sources) for (const m of readFileSync(f, 'utf8').matchAll(/["'`](ERR_[A-Z_]+|PG_[A-Z_]+|ANCHOR_NOT_FOUND)["'`]/g)) used.add(m[1])
    expect([...used].filter((c) => !declared.has(c)).sort(), 'thrown but not declared').toEqual([])
    expect([...declared].filter((c) => !used.has(c)).sort(), 'declared but never thrown').toEqual([])
  })
})
