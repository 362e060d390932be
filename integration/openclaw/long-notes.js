'use strict'

// One conversation of long notes and questions about them, as a user keeps with an agent:
// each note (about 450 to 700 tokens by default) records the state of one workstream with a fact that
// belongs to it alone (an owner, a figure, a date, a vendor); every third turn asks about
// a note several turns back. Drawn by a seeded generator, so every run sends the same turns.

const { xorshift } = require('../../bench/rng.js')

const STREAMS = ['billing migration', 'Halden depot', 'mobile release', 'data retention review', 'support rota', 'search relaunch', 'vendor audit', 'Lisbon office move', 'incident tooling', 'pricing update', 'partner API', 'warehouse scanners']
const PEOPLE = ['Priya', 'Marco', 'Ines', 'Tomasz', 'Aiko', 'Lena', 'Dmitri', 'Sofia', 'Kwame', 'Jonas', 'Mei', 'Rafael']
const VENDORS = ['Kestrel Logistics', 'Norrland Data', 'Bluefin Print', 'Arcadia Cloud', 'Tallis Security', 'Ostra Freight', 'Quill Analytics', 'Maple Systems']
const DAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday']
const MONTHS = ['March', 'April', 'May', 'June', 'July', 'September', 'October']
const OPENERS = [
  'We went through the open items again this morning and most of them moved.',
  'The review ran long, so here is what I want to keep from it.',
  'A quick write-up before I forget the details of the call.',
  'This is the state of things after the last round of feedback.',
]
const FILLER = [
  'The team spent most of the session on the dependencies between the rollout steps, because the order matters more than the dates themselves and nobody wants to discover a missing prerequisite in the middle of a change window.',
  'Several people raised the question of how we communicate the change to customers who do not read the release notes, and we agreed that the account managers will send a short summary to the largest accounts a week ahead.',
  'There was a long discussion about monitoring: the dashboards we have today show the averages, which hide the slow tail, so the on-call engineers asked for percentiles and for an alert that fires on the error budget rather than on single spikes.',
  'We also looked at the costs of running the old and the new systems side by side for a month, which is more than planned but still cheaper than a rollback that loses a week of data.',
  'Finance wants the numbers in the quarterly report, so every estimate in this note should be treated as a commitment unless it is marked as a guess.',
  'Documentation is behind: the runbooks still describe the setup from last year, and the people who wrote them have moved to other teams, so whoever touches a runbook next owns bringing it up to date.',
  'The test environment was unavailable for two days because of a certificate that expired over the weekend, which pushed the load tests back and reminded everyone that the renewal reminders go to a mailbox nobody reads.',
  'Legal has not objected to anything so far, but they asked to see the final wording of the customer notice before it goes out, and they need three working days for that.',
  'On the hiring side we are still one engineer short, which means the stretch goals from the planning session are off the table until the new person has been onboarded.',
  'The support team wants a freeze on changes during the last week of the month, when ticket volume peaks, and we agreed to respect it unless a security fix cannot wait.',
  'A few risks remain open: the vendor contract has a clause about data location that we have not fully read, the old batch jobs have no owner, and the staging database is smaller than production by an order of magnitude.',
  'People liked the idea of a short written decision record for each change, kept next to the code, so that the reasons survive the next reorganisation.',
]

function pick(rand, list) {
  return list[Math.floor(rand() * list.length)]
}

/**
 * The notes and questions of one conversation: `[{ text, fact?, asks? }]`, `turns` of
 * them; each note has `paragraphs[0]` to `paragraphs[1]` paragraphs of its own besides
 * its decision (about 40 tokens each).
 */
function longNotes(turns, { seed = 60, paragraphs = [8, 12] } = {}) {
  const rand = xorshift(seed)
  const notes = []
  const out = []
  for (let t = 1; t <= turns; t++) {
    if (t % 3 === 0 && notes.length >= 2) {
      const n = notes[Math.floor(rand() * Math.max(1, notes.length - 1))]
      out.push({ text: `Turn ${t}: a question about the ${n.stream} note: who owns it, which vendor did we pick, and what was the figure we agreed?`, asks: n })
      continue
    }
    const stream = STREAMS[(t * 7) % STREAMS.length]
    const fact = {
      stream,
      owner: pick(rand, PEOPLE),
      vendor: pick(rand, VENDORS),
      figure: `${10 + Math.floor(rand() * 890)}k euros`,
      date: `${pick(rand, DAYS)} ${1 + Math.floor(rand() * 27)} ${pick(rand, MONTHS)}`,
    }
    notes.push(fact)
    const parts = [`Turn ${t}: note on the ${stream}. ${pick(rand, OPENERS)}`]
    parts.push(`Decision: ${fact.owner} owns the ${stream}, the vendor is ${fact.vendor}, the budget is ${fact.figure} and the go-live is ${fact.date}.`)
    const n = paragraphs[0] + Math.floor(rand() * (paragraphs[1] - paragraphs[0] + 1))
    for (let i = 0; i < n; i++) parts.push(pick(rand, FILLER))
    out.push({ text: parts.join('\n\n'), fact })
  }
  return out
}

module.exports = { longNotes }
