#!/usr/bin/env node
// The prompt section of the bundled channel (fixtures/slack-channel.json laid out as a
// Slack export, anchored on the newest reply of its longest thread) in both renderings,
// counted by Claude's reference tokenizer (`@anthropic-ai/tokenizer`): what the JSON
// costs, what the compact form costs for the same messages (all 50 adjacent messages, no
// snapshot budget), and, within the budgets, how many more messages the compact form carries
// (each rendering is budgeted by its own cost).
//
//   node bench/renderings.js [--json]
'use strict'

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const engine = require(path.join(__dirname, '..'))
const { inspect, parseArgs } = require('../bin/inspect.js')
const { writeSlackExport } = require('../fixtures/slack-export.js')
const { referenceTokens } = require('./reference-tokens')

const ANCHOR = '1775736192.817058'

/** The text between a section's opening tag and its closing tag. */
function section(prompt, name) {
  const open = prompt.indexOf(`<${name} `)
  const close = prompt.indexOf(`</${name}>`)
  return open < 0 || close < 0 ? '' : prompt.slice(prompt.indexOf('\n', open) + 1, close)
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'renderings-'))
  try {
    writeSlackExport(dir)
    const rows = []
    const cases = [
      ['50 adjacent, no snapshot budget', ['--adjacent', '50', '--snapshot-budget', '1000000']],
      ['20 adjacent, 1,500-token snapshot budget', []],
      ['2,000-token thread budget', ['--budget', '2000']],
    ]
    for (const [label, args] of cases) {
      const row = { case: label }
      for (const format of ['json', 'compact']) {
        const r = await inspect(engine, parseArgs([dir, '--anchor', ANCHOR, '--format', format, ...args]))
        row[format] = {
          adjacent: r.snapshot.adjacent,
          replies: r.thread ? r.thread.includedReplies : 0,
          snapshot: referenceTokens(section(r.promptSection, 'channel_snapshot')),
          thread: referenceTokens(section(r.promptSection, 'thread_context')),
          whole: referenceTokens(r.promptSection),
          estimatedWhole: r.tokens.total,
        }
      }
      rows.push(row)
    }
    if (process.argv.includes('--json')) {
      console.log(JSON.stringify(rows, null, 2))
      return
    }
    console.log('the bundled channel, anchored on the newest reply of its longest thread; tokens by the reference tokenizer')
    console.log('| case | adjacent / replies: JSON | compact | snapshot: JSON | compact | thread: JSON | compact | whole section: JSON | compact |')
    console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
    const n = (x) => x.toLocaleString('en-US')
    for (const r of rows) {
      const { json: j, compact: c } = r
      // Without a snapshot budget both show all 50; a budget fits more compact messages.
      if (r.case.startsWith('50 adjacent') && j.adjacent !== c.adjacent) throw new Error(`${r.case}: the renderings hold different messages`)
      if (c.adjacent < j.adjacent || c.replies < j.replies) throw new Error(`${r.case}: the compact form holds fewer messages than the JSON`)
      console.log(`| ${r.case} | ${j.adjacent} / ${j.replies} | ${c.adjacent} / ${c.replies} | ${n(j.snapshot)} | ${n(c.snapshot)} | ${n(j.thread)} | ${n(c.thread)} | ${n(j.whole)} | ${n(c.whole)} |`)
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
