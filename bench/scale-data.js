// The scale benchmarks' data (bench/memory.js, bench/memory-pg.js): messages of 120
// characters in one of two vocabularies, in batches of two shapes, seeded, so every store
// and every run gets the same. See bench/memory.js for what each shape and vocabulary is.
'use strict'

const WORDS = 'deploy rollout canary latency checkout service migration schema index replica review release flag incident budget offsite candidate interview decided prefer failed fixed'.split(' ')
/**
 * The scale part's vocabulary: VOCABULARY words whose frequencies follow Zipf's law
 * (rank r drawn with weight 1/r), as a language's do: the 22 WORDS first, then made-up
 * words. With the 22 words alone every word was in half of all messages, which no chat
 * is, and a search for two of them read doclists of 500,000 rows.
 */
const VOCABULARY = 20_000
const ZIPF = (() => {
  const cum = new Float64Array(VOCABULARY)
  let total = 0
  for (let r = 0; r < VOCABULARY; r++) cum[r] = total += 1 / (r + 1)
  return cum
})()
/** The scale part's two vocabularies: a word (seeded `rand`) and a question (`i`-th). */
const VOCABULARIES = {
  zipf: {
    name: "Zipf's law over 20,000 words",
    word: (rand) => zipfWord(rand),
    question: (rand) => `what did we decide about the ${zipfWord(rand)} ${zipfWord(rand)}?`,
  },
  tiny: {
    name: 'the 22 words alone (each in half of all messages)',
    word: (rand) => WORDS[Math.floor(rand() * WORDS.length)],
    question: (rand, i) => `what did we decide about the ${WORDS[i % WORDS.length]} review?`,
  },
}
function zipfWord(rand) {
  const x = rand() * ZIPF[VOCABULARY - 1]
  let lo = 0
  let hi = VOCABULARY - 1
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (ZIPF[mid] < x) lo = mid + 1
    else hi = mid
  }
  return lo < WORDS.length ? WORDS[lo] : `w${lo.toString(36)}`
}

/** The batches of one shape, the same for every implementation (seeded). */
function* batches({ messages, sessions, batch: size }, shape, vocabulary) {
  const rand = require('./rng').xorshift(0x2545f491)
  const sentence = () => {
    let s = ''
    while (s.length < 120) s += `${vocabulary.word(rand)} `
    return `${s.trim()}.`
  }
  let id = 0
  for (let done = 0; done < messages; done += size) {
    const batch = []
    let s = 0
    for (let i = 0; i < size; i++) {
      if (shape === 'scattered' || i % 20 === 0) s = Math.floor(rand() * sessions)
      const lane = Math.floor(rand() * 4)
      batch.push({
        sessionId: `telegram:chat:${s}`,
        chatId: String(s),
        messageId: String(++id),
        role: i % 2 === 0 ? 'user' : 'assistant',
        text: sentence(),
        ts: 1_775_835_600_000 + id,
        topicId: lane === 0 ? null : String(lane),
      })
    }
    yield batch
  }
}

module.exports = { WORDS, VOCABULARIES, batches }
