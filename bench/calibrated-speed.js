#!/usr/bin/env node
// What a calibration by text costs the calls that count with it, against the same calls
// uncalibrated and, with --against, against another build of the package, in one process
// (the builds taking turns, each first in every other round, so neither gets a warmer
// machine):
//   - `tokenEstimate` of a 70-character message, its `upperBound` read by the meter of the
//     observations around it once the model has 300 observations on texts;
//   - warm `ChannelStore.buildContext` of a 200-reply thread with a 40-message snapshot
//     (budgets 2,000 and 800), after the model has been calibrated on 200 of the store's
//     prompt sections: the thread and the snapshot are built with the model's meter, then
//     again with their own while a rebuilt one reads as needing a wider meter.
// The texts are generated from a fixed word list (the cost is in the counting, not the
// words); the calibration's counts are 0.9 of the estimate, so every section it knows is
// counted by a meter of its own. Medians of 8 rounds (tokenEstimate: 100,000 calls a round;
// buildContext: 500).
//
//   node bench/calibrated-speed.js [--against <checkout>] [--json]
//   (--against: a checkout of another commit with its addon built, e.g. a git worktree)
'use strict'

const path = require('node:path')

const arg = (name) => {
  const i = process.argv.indexOf(name)
  return i > 0 ? process.argv[i + 1] : null
}
const AGAINST = arg('--against')
const ROUNDS = 8
const T0 = 1_775_000_000
const WORDS = 'deploy queue logs build cache redis lunch broke config staging prod migration rollback alert'.split(' ')
const MESSAGE = 'sure, I can look at the deploy logs after lunch and tell you what broke'

const ts = (s) => `${s}.000100`
const text = (i) => Array.from({ length: 12 + (i % 20) }, (_, k) => WORDS[(i * 7 + k * 3) % WORDS.length]).join(' ') + (i % 5 === 0 ? ' {"id": 42, "ok": true}' : '.')
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** A calibrated store of `engine` and its build, and the same uncalibrated. */
async function setup(engine, model) {
  const channelId = 'CSPEED'
  const root = ts(T0 + 10_000)
  const author = (i) => ({ userId: `U${i % 5}`, displayName: `user ${i % 5}` })
  const top = Array.from({ length: 120 }, (_, i) => ({ messageId: ts(T0 + i * 60), ts: ts(T0 + i * 60), author: author(i), text: text(i) }))
  top.push({ messageId: root, ts: root, author: author(1), text: 'the release thread', replyCount: 200 })
  const replies = Array.from({ length: 200 }, (_, i) => ({ messageId: ts(T0 + 20_000 + i), ts: ts(T0 + 20_000 + i), author: author(i), text: text(i + 500), threadId: root }))
  const store = new engine.ChannelStore({
    clock: () => (T0 + 30_000) * 1000,
    fetcher: { fetchHistory: async () => ({ messages: top }), fetchThread: async () => ({ messages: [top[top.length - 1], ...replies] }) },
  })
  store.setChannel({ id: channelId, name: 'speed', platform: 'slack' })
  store.ingestMany([...top, ...replies].map((message) => ({ type: 'message', channelId, message })))
  const build = (m) => store.buildContext(channelId, replies[199].messageId, { threadId: root, budgetTokens: 2_000, snapshotBudgetTokens: 800, adjacent: 40, model: m })
  await build(model)
  for (let i = 0; i < 200; i++) {
    const c = await store.buildContext(channelId, replies[100 + (i % 99)].messageId, { threadId: root, budgetTokens: 1_000 + (i % 10) * 100, model })
    engine.calibrate({ model, text: c.promptSection, inputTokens: Math.round(engine.tokenEstimate(c.promptSection).estimate * 0.9) })
  }
  for (let i = 0; i < 100; i++) {
    const t = `${text(i)}\n`.repeat(30)
    engine.calibrate({ model, text: t, inputTokens: Math.round(engine.tokenEstimate(t).estimate * 0.9) })
  }
  return {
    estimate: (m) => {
      const options = { model: m }
      const t = process.hrtime.bigint()
      for (let i = 0; i < 100_000; i++) engine.tokenEstimate(MESSAGE, options)
      return Number(process.hrtime.bigint() - t) / 100_000
    },
    build: async (m) => {
      const t = process.hrtime.bigint()
      for (let i = 0; i < 500; i++) await build(m)
      return Number(process.hrtime.bigint() - t) / 500 / 1000
    },
  }
}

async function main() {
  const builds = [{ name: 'this build', engine: require(path.join(__dirname, '..')) }]
  if (AGAINST) builds.push({ name: path.basename(path.resolve(AGAINST)), engine: require(path.resolve(AGAINST)) })
  const runs = []
  for (const b of builds) runs.push({ ...b, run: await setup(b.engine, 'calibrated'), cal: { estimate: [], build: [] }, plain: { estimate: [], build: [] } })
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? runs : runs.slice().reverse()
    for (const x of order) {
      x.cal.estimate.push(x.run.estimate('calibrated'))
      x.plain.estimate.push(x.run.estimate('uncalibrated'))
      x.cal.build.push(await x.run.build('calibrated'))
      x.plain.build.push(await x.run.build('uncalibrated'))
    }
  }
  const rows = runs.map((x) => ({
    build: x.name,
    tokenEstimateNs: { uncalibrated: median(x.plain.estimate), calibrated: median(x.cal.estimate) },
    buildContextUs: { uncalibrated: median(x.plain.build), calibrated: median(x.cal.build) },
  }))
  if (process.argv.includes('--json')) return console.log(JSON.stringify(rows, null, 2))
  console.log('| build | tokenEstimate, uncalibrated | calibrated | buildContext, uncalibrated | calibrated |')
  console.log('| --- | ---: | ---: | ---: | ---: |')
  for (const r of rows) {
    console.log(
      `| ${r.build} | ${r.tokenEstimateNs.uncalibrated.toFixed(0)} ns | ${r.tokenEstimateNs.calibrated.toFixed(0)} ns | ${r.buildContextUs.uncalibrated.toFixed(1)} µs | ${r.buildContextUs.calibrated.toFixed(1)} µs |`,
    )
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
