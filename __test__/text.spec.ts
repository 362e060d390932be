import { describe, expect, it } from 'vitest'
import { estimateTokens, SNIPPET_MAX_CHARS, truncateSnippet } from '@openclaw/context-engine'
import { thrown } from './helpers'

describe('estimateTokens', () => {
  it('is ceil(length / 4) over UTF-16 code units', () => {
    expect(estimateTokens('')).toBe(0)
    expect(estimateTokens('a')).toBe(1)
    expect(estimateTokens('abcd')).toBe(1)
    expect(estimateTokens('abcde')).toBe(2)
    expect(estimateTokens('x'.repeat(8000))).toBe(2000)
  })

  it('counts an emoji outside the BMP as 2 units, like String#length', () => {
    expect('😀'.length).toBe(2)
    expect(estimateTokens('😀')).toBe(1)
    expect(estimateTokens('😀😀😀')).toBe(2) // 6 units
    expect(estimateTokens('👩‍💻')).toBe(Math.ceil('👩‍💻'.length / 4))
    expect(estimateTokens('日本語のテキスト')).toBe(2) // 8 BMP units
  })

  it('rejects a non-string with a TypeError naming the argument', () => {
    for (const bad of [undefined, null, 42, {}, ['a'], Symbol('s')]) {
      const e = thrown(() => estimateTokens(bad as never))
      expect(e).toBeInstanceOf(TypeError)
      expect(e.message).toMatch(/^estimateTokens: text: expected a string, got /)
    }
  })
})

describe('truncateSnippet', () => {
  it('collapses whitespace runs and trims', () => {
    expect(truncateSnippet('  hello \n\n\t world  ')).toBe('hello world')
    expect(truncateSnippet('a\u00a0\u2003b\u3000\u2028c')).toBe('a b c')
    expect(truncateSnippet('   ')).toBe('')
    expect(truncateSnippet('')).toBe('')
  })

  it('keeps texts of exactly 150 units and cuts longer ones to 149 + one-character ellipsis', () => {
    expect(SNIPPET_MAX_CHARS).toBe(150)
    const exact = 'x'.repeat(150)
    expect(truncateSnippet(exact)).toBe(exact)
    const cut = truncateSnippet('y'.repeat(151))
    expect(cut).toHaveLength(150)
    expect(cut).toBe('y'.repeat(149) + '…')
    expect('…'.length).toBe(1)
  })

  it('measures the length after collapsing whitespace', () => {
    const spaced = Array.from({ length: 75 }, () => 'a').join('      ') // 149 units once collapsed
    expect(truncateSnippet(spaced)).toHaveLength(149)
  })

  it('never splits a surrogate pair', () => {
    // 148 ASCII then an emoji at units 148-149: the 149-unit cut would split it.
    const text = 'a'.repeat(148) + '😀' + 'tail'
    const cut = truncateSnippet(text)
    expect(cut).toBe('a'.repeat(148) + '…')
    for (let i = 0; i < cut.length; i++) {
      const c = cut.charCodeAt(i)
      if (c >= 0xd800 && c <= 0xdbff) expect(cut.charCodeAt(i + 1)).toBeGreaterThanOrEqual(0xdc00)
    }
    // Emoji fully inside the kept part survive.
    const emoji = '😀'.repeat(100)
    const cutEmoji = truncateSnippet(emoji)
    expect(cutEmoji).toBe('😀'.repeat(74) + '…')
    expect(cutEmoji.isWellFormed?.() ?? true).toBe(true)
  })

  it('rejects a non-string with a TypeError', () => {
    const e = thrown(() => truncateSnippet(12 as never))
    expect(e).toBeInstanceOf(TypeError)
    expect(e.message).toBe('truncateSnippet: text: expected a string, got number')
  })
})
