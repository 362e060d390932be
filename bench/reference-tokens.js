'use strict'

// Token counts by `@anthropic-ai/tokenizer` (a devDependency), the only Claude tokenizer
// that runs locally: the reference the engine's estimator is fitted and checked against.
// One tokenizer instance, text normalized to NFKC as the package's own countTokens does.

let tokenizer = null

/** Tokens of `text` by the reference tokenizer. */
function referenceTokens(text) {
  if (tokenizer === null) tokenizer = require('@anthropic-ai/tokenizer').getTokenizer()
  return tokenizer.encode(text.normalize('NFKC'), 'all').length
}

module.exports = { referenceTokens }
