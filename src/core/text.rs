//! Text measurement and truncation in JavaScript string semantics.
//!
//! JavaScript strings are sequences of UTF-16 code units and `String.prototype.length`
//! counts those units, so every length in this module is a UTF-16 length: `"😀"` is 2
//! units. Truncation never cuts between the two halves of a surrogate pair.

pub mod escape;

/// Thread budget in tokens used when the caller gives none.
pub const THREAD_BUDGET_TOKENS: u32 = 8_000;
/// Longest adjacent-message snippet, in UTF-16 code units, ellipsis included.
pub const SNIPPET_MAX_CHARS: usize = 150;
/// A thread reply longer than this many estimated tokens is cut.
pub const REPLY_MAX_TOKENS: u64 = 300;
/// The one-character suffix marking a cut text.
pub const ELLIPSIS: char = '\u{2026}';
/// [`ELLIPSIS`] as a string.
pub const ELLIPSIS_STR: &str = "\u{2026}";
const ELLIPSIS_UNIT: u16 = 0x2026;

/// Number of UTF-16 code units in `s` (what JavaScript's `.length` returns).
pub fn utf16_len(s: &str) -> usize {
    // ASCII (most chat text and all JSON punctuation) is one unit per byte; the check
    // runs a word at a time.
    if s.is_ascii() {
        return s.len();
    }
    // Every char is one unit except those outside the BMP (4 UTF-8 bytes), which are two.
    // Counted in u8 lanes over 127-byte chunks (at most 2 per byte), which vectorizes.
    s.as_bytes()
        .chunks(127)
        .map(|chunk| {
            let n = chunk.iter().fold(0u8, |acc, &b| {
                acc + u8::from((b & 0xC0) != 0x80) + u8::from(b >= 0xF0)
            });
            usize::from(n)
        })
        .sum()
}

/// `s` as UTF-16 code units (what a JS string holds). Handing V8 UTF-16 is much faster
/// than having it decode UTF-8 once a string holds any character beyond Latin-1.
///
/// Text is taken 16 bytes at a time: each block is widened whole (a loop the compiler
/// vectorizes) and kept up to its first byte beyond ASCII, whose character and those
/// right after it are then decoded one by one. A block that is all ASCII advances by 16
/// without waiting for the bit scan, so long ASCII runs stream.
pub fn to_utf16(s: &str) -> Vec<u16> {
    let mut out = Vec::new();
    let n = to_utf16_into(s, &mut out).len();
    out.truncate(n);
    out
}

/// [`to_utf16`] into a buffer the caller keeps between calls: the units are written at
/// its start and returned as a slice of it. The buffer only grows (to the UTF-8 length
/// of the longest string converted), and what it held is overwritten, never cleared, so
/// a reused buffer costs neither an allocation nor a fill.
pub fn to_utf16_into<'a>(s: &str, out: &'a mut Vec<u16>) -> &'a [u16] {
    const HIGH_BITS: u128 = u128::from_ne_bytes([0x80; 16]);
    let bytes = s.as_bytes();
    // A string never has more UTF-16 units than UTF-8 bytes, so the output (j) never
    // overtakes the input (i): a block of 16 read at i always has room at j.
    if out.len() < bytes.len() {
        out.resize(bytes.len(), 0);
    }
    let (mut i, mut j) = (0, 0);
    while i < bytes.len() {
        if let (Some(src), Some(dst)) = (
            bytes
                .get(i..i + 16)
                .and_then(|b| <&[u8; 16]>::try_from(b).ok()),
            out.get_mut(j..j + 16)
                .and_then(|d| <&mut [u16; 16]>::try_from(d).ok()),
        ) {
            for (d, &b) in dst.iter_mut().zip(src) {
                *d = u16::from(b);
            }
            let high = u128::from_le_bytes(*src) & HIGH_BITS;
            if high == 0 {
                i += 16;
                j += 16;
                continue;
            }
            let run = (high.trailing_zeros() / 8) as usize;
            i += run;
            j += run;
        } else {
            // Fewer than 16 bytes left.
            let rest = bytes.get(i..).unwrap_or_default();
            let run = rest.iter().position(|&b| b >= 0x80).unwrap_or(rest.len());
            if let (Some(src), Some(dst)) = (rest.get(..run), out.get_mut(j..j + run)) {
                for (d, &b) in dst.iter_mut().zip(src) {
                    *d = u16::from(b);
                }
            }
            i += run;
            j += run;
        }
        // The characters beyond ASCII from here, decoded from valid UTF-8.
        while let Some(&lead) = bytes.get(i).filter(|&&b| b >= 0x80) {
            let cont = |k: usize| u32::from(bytes.get(i + k).copied().unwrap_or(0) & 0x3F);
            let b = u32::from(lead);
            let (unit, low, width) = if lead < 0xE0 {
                (((b & 0x1F) << 6) | cont(1), None, 2)
            } else if lead < 0xF0 {
                (((b & 0x0F) << 12) | (cont(1) << 6) | cont(2), None, 3)
            } else {
                // Beyond the BMP: a surrogate pair.
                let c = ((b & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3);
                let c = c.wrapping_sub(0x1_0000);
                (0xD800 | (c >> 10), Some(0xDC00 | (c & 0x3FF)), 4)
            };
            if let Some(d) = out.get_mut(j) {
                *d = unit as u16;
            }
            j += 1;
            if let Some(low) = low {
                if let Some(d) = out.get_mut(j) {
                    *d = low as u16;
                }
                j += 1;
            }
            i += width;
        }
    }
    out.get(..j).unwrap_or_default()
}

/// The length of the ASCII prefix of `bytes`: 8 bytes are tested at once, and the first
/// byte with its high bit set is located from the word's trailing zeros.
pub fn ascii_prefix(bytes: &[u8]) -> usize {
    const HIGH_BITS: u64 = u64::from_ne_bytes([0x80; 8]);
    let mut run = 0;
    while let Some(word) = bytes
        .get(run..run + 8)
        .and_then(|w| <[u8; 8]>::try_from(w).ok())
    {
        let high = u64::from_le_bytes(word) & HIGH_BITS;
        if high != 0 {
            return run + (high.trailing_zeros() / 8) as usize;
        }
        run += 8;
    }
    let tail = bytes.get(run..).unwrap_or_default();
    run + tail.iter().position(|&b| b >= 0x80).unwrap_or(tail.len())
}

/// Token estimate for a length in UTF-16 units: `ceil(units / 4)`.
pub fn tokens_for_units(units: usize) -> u64 {
    (units as u64).div_ceil(4)
}

/// Token estimate for a text: `ceil(utf16_len / 4)`, 0 for the empty string.
pub fn estimate_tokens(s: &str) -> u64 {
    tokens_for_units(utf16_len(s))
}

/// JavaScript's `\s` class (WhiteSpace and LineTerminator), as used by `/\s+/` and `trim()`.
pub fn is_js_whitespace(u: u16) -> bool {
    matches!(
        u,
        0x0009..=0x000D
            | 0x0020
            | 0x00A0
            | 0x1680
            | 0x2000..=0x200A
            | 0x2028
            | 0x2029
            | 0x202F
            | 0x205F
            | 0x3000
            | 0xFEFF
    )
}

fn is_high_surrogate(u: u16) -> bool {
    (0xD800..=0xDBFF).contains(&u)
}

/// Where to cut `units` so that at most `keep` units remain without splitting a pair.
fn safe_cut(units: &[u16], keep: usize) -> usize {
    if keep == 0 || keep >= units.len() {
        return keep.min(units.len());
    }
    if is_high_surrogate(units[keep - 1]) {
        keep - 1
    } else {
        keep
    }
}

/// Snippet over UTF-16 units: whitespace runs collapsed to one space, trimmed, and when
/// longer than [`SNIPPET_MAX_CHARS`] cut to 149 units plus `…` (148 when the 149th unit
/// would split a surrogate pair). Reads only as much input as the snippet needs.
pub fn snippet_units<I: IntoIterator<Item = u16>>(units: I) -> Vec<u16> {
    let mut out: Vec<u16> = Vec::with_capacity(SNIPPET_MAX_CHARS + 1);
    let mut pending_space = false;
    for u in units {
        if is_js_whitespace(u) {
            pending_space = !out.is_empty();
            continue;
        }
        if pending_space {
            out.push(0x20);
            pending_space = false;
        }
        out.push(u);
        if out.len() > SNIPPET_MAX_CHARS {
            break;
        }
    }
    if out.len() > SNIPPET_MAX_CHARS {
        let cut = safe_cut(&out, SNIPPET_MAX_CHARS - 1);
        out.truncate(cut);
        out.push(ELLIPSIS_UNIT);
    }
    out
}

/// [`snippet_units`] for a Rust string, without leaving UTF-8: the same rule over chars,
/// measuring each in UTF-16 units. Chars are never split, so the cut falls at 149 units,
/// or 148 when the 149th unit would be half of a pair.
pub fn truncate_snippet(s: &str) -> String {
    let mut out = String::with_capacity(s.len().min(SNIPPET_MAX_CHARS * 4 + 4));
    let mut units = 0usize;
    let mut pending_space = false;
    for c in s.chars() {
        if c.len_utf16() == 1 && is_js_whitespace(c as u32 as u16) {
            pending_space = units > 0;
            continue;
        }
        if pending_space {
            out.push(' ');
            units += 1;
            pending_space = false;
        }
        out.push(c);
        units += c.len_utf16();
        if units > SNIPPET_MAX_CHARS {
            break;
        }
    }
    if units > SNIPPET_MAX_CHARS {
        while units > SNIPPET_MAX_CHARS - 1 {
            match out.pop() {
                Some(c) => units -= c.len_utf16(),
                None => break,
            }
        }
        out.push(ELLIPSIS);
    }
    out
}

/// Where a text longer than `max_units` UTF-16 units is cut, in units: `max_units - 1`, or
/// one less when the last unit that would be kept (`unit_at_probe`, the text's unit at
/// [`cut_probe_unit`]) is the high half of a surrogate pair, which is never split. The one
/// rule of [`truncate_units`], for a caller that holds the text's units rather than the
/// text (the drop-in's JavaScript side, which slices the caller's string itself).
pub fn cut_end_units(max_units: usize, unit_at_probe: u16) -> usize {
    let keep = max_units.saturating_sub(1);
    if (0xD800..0xDC00).contains(&unit_at_probe) {
        keep.saturating_sub(1)
    } else {
        keep
    }
}

/// The unit [`cut_end_units`] looks at in a text cut to `max_units`: the last one kept.
pub const fn cut_probe_unit(max_units: usize) -> usize {
    max_units.saturating_sub(2)
}

/// Cuts `s` to `max_units - 1` UTF-16 units plus `…` when it is longer than `max_units`;
/// returns `None` when it already fits. Never splits a surrogate pair ([`cut_end_units`]).
pub fn truncate_units(s: &str, max_units: usize) -> Option<String> {
    if utf16_len(s) <= max_units {
        return None;
    }
    let probe = s.encode_utf16().nth(cut_probe_unit(max_units)).unwrap_or(0);
    let end_units = cut_end_units(max_units, probe);
    let mut used = 0usize;
    let mut end = 0usize;
    for (i, c) in s.char_indices() {
        used += c.len_utf16();
        if used > end_units {
            break;
        }
        end = i + c.len_utf8();
    }
    let mut out = String::with_capacity(end + ELLIPSIS.len_utf8());
    out.push_str(&s[..end]);
    out.push(ELLIPSIS);
    Some(out)
}

/// Cuts a thread reply that is over [`REPLY_MAX_TOKENS`] to 1,199 units plus `…`
/// (so the result is exactly 300 tokens). Returns `None` when the reply fits.
pub fn truncate_reply(s: &str) -> Option<String> {
    truncate_units(s, (REPLY_MAX_TOKENS * 4) as usize)
}

#[cfg(test)]
mod tests;
