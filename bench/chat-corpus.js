'use strict'

// A real public chat corpus, as a package registry serves it: the BYU PCC lab's
// `chitchat-dataset` 0.9.0 from PyPI (MIT licence), 7,168 conversations between people,
// 258,145 messages with senders and timestamps. The wheel is downloaded once, checked
// against its published SHA-256, and its `dataset.json` cached in `bench/.cache/`.
//
//   const { loadChat } = require('./chat-corpus')
//   const messages = await loadChat() // [{ conversation, sender, ts, text }], in order

const crypto = require('node:crypto')
const fs = require('node:fs')
const path = require('node:path')
const zlib = require('node:zlib')

const WHEEL = {
  name: 'chitchat_dataset-0.9.0-py3-none-any.whl',
  url: 'https://files.pythonhosted.org/packages/cb/49/c6697dfcd1263d36fff35f2889742703553083ed080c95f77dd948eaf578/chitchat_dataset-0.9.0-py3-none-any.whl',
  sha256: '7bf89f36645e2d5ec87d53370c8e851b5a688479c7beb7079cb4c87fc5acea3e',
  entry: 'chitchat_dataset/dataset.json',
}
const CACHE = path.join(__dirname, '.cache')
const DOWNLOAD_TIMEOUT_MS = 120_000

async function download(url) {
  let last
  for (let attempt = 1; attempt <= 3; attempt++) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS) })
      if (!res.ok) throw new Error(`HTTP ${res.status}`)
      return Buffer.from(await res.arrayBuffer())
    } catch (err) {
      last = err
    }
  }
  throw new Error(`could not download ${url}: ${last?.message ?? last}`)
}

/** One file of a zip archive (stored or deflated), found through the central directory. */
function unzipEntry(zip, name) {
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]))
  if (eocd < 0) throw new Error('not a zip archive')
  const entries = zip.readUInt16LE(eocd + 10)
  let at = zip.readUInt32LE(eocd + 16)
  for (let i = 0; i < entries; i++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error('corrupt zip central directory')
    const method = zip.readUInt16LE(at + 10)
    const compressed = zip.readUInt32LE(at + 20)
    const nameLen = zip.readUInt16LE(at + 28)
    const extraLen = zip.readUInt16LE(at + 30)
    const commentLen = zip.readUInt16LE(at + 32)
    const local = zip.readUInt32LE(at + 42)
    const entryName = zip.toString('utf8', at + 46, at + 46 + nameLen)
    if (entryName === name) {
      const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28)
      const data = zip.subarray(start, start + compressed)
      if (method === 0) return data
      if (method === 8) return zlib.inflateRawSync(data)
      throw new Error(`zip method ${method} is not supported`)
    }
    at += 46 + nameLen + extraLen + commentLen
  }
  throw new Error(`${name} is not in the archive`)
}

/** The corpus's dataset.json text, downloading and checking the wheel on first use. */
async function datasetText() {
  const cached = path.join(CACHE, 'chitchat-dataset-0.9.0.json')
  if (fs.existsSync(cached)) return fs.readFileSync(cached, 'utf8')
  const wheel = await download(WHEEL.url)
  const digest = crypto.createHash('sha256').update(wheel).digest('hex')
  if (digest !== WHEEL.sha256) throw new Error(`${WHEEL.name}: sha256 ${digest}, expected ${WHEEL.sha256}`)
  const json = unzipEntry(wheel, WHEEL.entry).toString('utf8')
  fs.mkdirSync(CACHE, { recursive: true })
  fs.writeFileSync(`${cached}.tmp`, json)
  fs.renameSync(`${cached}.tmp`, cached)
  return json
}

/**
 * Every message of the corpus, conversation by conversation in the dataset's order,
 * each conversation's messages in time order.
 * @returns {Promise<Array<{ conversation: string, sender: string, ts: number, text: string }>>}
 */
async function loadChat() {
  const data = JSON.parse(await datasetText())
  const out = []
  for (const [conversation, c] of Object.entries(data)) {
    for (const turn of c.messages) {
      for (const m of turn) {
        if (typeof m.text !== 'string' || m.text.trim() === '') continue
        out.push({ conversation, sender: m.sender, ts: Date.parse(m.timestamp), text: m.text })
      }
    }
  }
  return out
}

/**
 * The corpus as its dataset.json has it: conversation id to `{ messages: turns of
 * `{ text, timestamp, sender }` messages, start, prompt, ratings }`.
 * @returns {Promise<Record<string, object>>}
 */
async function loadDataset() {
  return JSON.parse(await datasetText())
}

module.exports = { loadChat, loadDataset, unzipEntry, WHEEL }
