'use strict'

// The chats of bench/long-chats.js reshaped as a user and an assistant whose turns run
// long: every assistant-role turn is followed, in the same message, by the next
// LONG_TURN_DONOR_TURNS turns of another chat of the set (the chat after it, cycling; read
// from the turn of the same index on), so a few hundred tokens of talk that answers none of
// the questions sits in each of its messages, as an assistant's long replies do. The
// questions, their evidence turns (their whole text, as stored) and their answers are
// unchanged; the method does not look at any context builder.
//
// With `{ spread: true }` (the benches' `--spread`), the turn's own text stands at a seeded
// random place among the other chat's turns (before them, between two of them, or after
// them) rather than first: what it says, a question included, is not always where its
// message opens or ends. Written after the question rule of src/memory/message.rs (`asks`),
// to check it on turns it was not written for.

const { xorshift } = require('./rng')

/** How many turns of another chat follow each assistant-role turn. */
const LONG_TURN_DONOR_TURNS = 12

/**
 * Every assistant-role turn followed, in its message, by the next
 * LONG_TURN_DONOR_TURNS turns of the next chat (cycling), from the turn of its own index.
 */
function lengthenAssistantTurns(chats, { spread = false } = {}) {
  const donors = chats.map((c) => c.sessions.flatMap((s) => s.turns).map((t) => t.text))
  const random = xorshift(0x10e6)
  chats.forEach((chat, ci) => {
    const donor = donors[(ci + 1) % chats.length]
    let i = 0
    for (const s of chat.sessions) {
      for (const t of s.turns) {
        if (t.role === 'assistant') {
          const extra = []
          for (let k = 0; k < LONG_TURN_DONOR_TURNS; k++) extra.push(donor[(i + k) % donor.length])
          const at = spread ? Math.floor(random() * (extra.length + 1)) : 0
          extra.splice(at, 0, t.text)
          t.text = extra.join(' ')
        }
        i++
      }
    }
  })
}

module.exports = { lengthenAssistantTurns, LONG_TURN_DONOR_TURNS }
