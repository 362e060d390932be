// The documentation's code blocks, run as Rust runs its doc tests, so that README.md and
// docs/*.md cannot drift from the package:
// - every `ts` / `js` block is a module of its own: TypeScript blocks are type-checked
//   together (`tsc --strict` against the generated typings and the real SDKs), then each
//   block runs in a child process (TypeScript transpiled, `require` blocks as CommonJS),
//   and must exit 0. A `console.log(...)` line ending in `// <text>` says what it prints:
//   the block's n-th printed line must be that text.
// - a block marked `no_run` (```ts no_run) needs the network or credentials: type-checked,
//   not run.
// - setup a reader does not need to see goes in an HTML comment right before the block,
//   `<!-- doctest-prelude ... -->`, and is prepended to it.
// - `sh` blocks: each `npm run <script>` names a script of package.json and each
//   `node <file>` a file of the checkout; `json` / `json5` blocks parse, and a plugin config
//   is read by the plugin's own option reader.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { createRequire } from 'node:module'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const root = join(__dirname, '..')
const require = createRequire(import.meta.url)
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const { readOptions } = require('../openclaw/options.js')

interface Block {
  file: string
  line: number
  lang: string
  noRun: boolean
  prelude: string
  code: string
}

function blocks(file: string): Block[] {
  const lines = readFileSync(file, 'utf8').split('\n')
  const out: Block[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S+)?(.*)$/.exec(lines[i])
    if (!open) continue
    const start = i
    const body: string[] = []
    for (i++; i < lines.length && !lines[i].startsWith('```'); i++) body.push(lines[i])
    // A prelude: the HTML comment that ends on the line before the block.
    let prelude = ''
    if (start > 0 && lines[start - 1].trim() === '-->') {
      let j = start - 2
      while (j >= 0 && !lines[j].startsWith('<!-- doctest-prelude')) j--
      if (j >= 0) prelude = lines.slice(j + 1, start - 1).join('\n')
    }
    out.push({
      file: relative(root, file),
      line: start + 1,
      lang: open[1] ?? '',
      noRun: /\bno_run\b/.test(open[2]),
      prelude,
      code: body.join('\n'),
    })
  }
  return out
}

const files = [join(root, 'README.md'), ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join(root, 'docs', f))]
const all = files.flatMap(blocks)
const code = all.filter((b) => ['ts', 'typescript', 'js', 'javascript'].includes(b.lang))
const name = (b: Block) => `${b.file.replace(/[^a-z0-9]+/gi, '-')}-${b.line}`
const isTs = (b: Block) => b.lang === 'ts' || b.lang === 'typescript'
const isCjs = (b: Block) => !isTs(b) && /\brequire\(/.test(b.code)

// Inside the checkout, so `@openclaw/context-engine` resolves to this package by name.
const work = join(root, 'target', 'doctest')

/** What the block's `console.log(...) // text` lines say it prints, by printed line. */
function expected(b: Block): Map<number, string> {
  const out = new Map<number, string>()
  let n = 0
  for (const l of b.code.split('\n')) {
    if (!/^\s*console\.log\(/.test(l)) continue
    const said = /\)\s*\/\/ (.+)$/.exec(l)
    if (said) out.set(n, said[1].trim())
    n++
  }
  return out
}

describe('the documentation', () => {
  it('has code blocks in README and every guide, and README stays short', () => {
    expect(code.length).toBeGreaterThanOrEqual(10)
    expect(new Set(code.map((b) => b.file)).size).toBeGreaterThanOrEqual(6)
    expect(readFileSync(join(root, 'README.md'), 'utf8').split('\n').length).toBeLessThanOrEqual(300)
  })

  it('type-checks every TypeScript block against the generated typings, strict', () => {
    rmSync(work, { recursive: true, force: true })
    mkdirSync(work, { recursive: true })
    const tsBlocks = code.filter(isTs)
    for (const b of tsBlocks) writeFileSync(join(work, `${name(b)}.mts`), `${b.prelude}\n${b.code}\nexport {}\n`)
    writeFileSync(
      join(work, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', types: ['node'], skipLibCheck: true },
        include: ['*.mts'],
      }),
    )
    const tsc = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', join(work, 'tsconfig.json')], { encoding: 'utf8' })
    // Name the doc and line of each error.
    const located = tsc.stdout.replace(/^([^(\n]+)\.mts\((\d+),(\d+)\)/gm, (whole, f: string, l: string, c: string) => {
      const b = tsBlocks.find((x) => name(x) === f.split('/').pop())
      return b ? `${b.file}:${b.line + Number(l) - b.prelude.split('\n').length}:${c}` : whole
    })
    expect(located, 'tsc on the documentation blocks').toBe('')
    expect(tsc.status).toBe(0)
  }, 120_000)

  for (const b of code.filter((x) => !x.noRun)) {
    it(`runs ${b.file}:${b.line}`, () => {
      mkdirSync(work, { recursive: true })
      const source = `${b.prelude}\n${b.code}\n`
      const js = isTs(b) ? ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText : source
      const file = join(work, `${name(b)}.${isCjs(b) ? 'cjs' : 'mjs'}`)
      writeFileSync(file, js)
      const cwd = join(tmpdir(), `doctest-${name(b)}-${process.pid}`)
      mkdirSync(cwd, { recursive: true })
      try {
        const run = spawnSync(process.execPath, [file], { cwd, encoding: 'utf8', timeout: 60_000 })
        expect(run.stderr, `${b.file}:${b.line} wrote to stderr`).toBe('')
        expect(run.status, `${b.file}:${b.line} exited ${run.status}: ${run.stderr}`).toBe(0)
        const printed = run.stdout.split('\n')
        for (const [n, text] of expected(b)) expect(printed[n], `${b.file}:${b.line}, printed line ${n + 1}`).toBe(text)
      } finally {
        rmSync(cwd, { recursive: true, force: true })
      }
    }, 90_000)
  }

  it('names only npm scripts and files that exist in its shell blocks', () => {
    for (const b of all.filter((x) => x.lang === 'sh')) {
      for (const line of b.code.split('\n')) {
        for (const [, script] of line.matchAll(/\bnpm run (?:--\S+ )*([\w:-]+)/g)) expect(pkg.scripts, `${b.file}:${b.line}: npm run ${script}`).toHaveProperty([script])
        for (const [, path] of line.matchAll(/\bnode ((?:bench|scripts|demo|bin|integration)\/[\w./-]+)/g)) expect(existsSync(join(root, path)), `${b.file}:${b.line}: ${path}`).toBe(true)
      }
    }
  })

  it('parses its JSON blocks, and a plugin config is one the plugin reads', () => {
    for (const b of all.filter((x) => x.lang === 'json' || x.lang === 'json5')) {
      const value = b.lang === 'json' ? JSON.parse(b.code) : new Function(`return (${b.code})`)()
      expect(typeof value, `${b.file}:${b.line}`).toBe('object')
      const config = value?.plugins?.entries?.['context-engine']?.config
      if (config !== undefined) expect(readOptions(config).problems, `${b.file}:${b.line}`).toEqual([])
    }
  })
})
