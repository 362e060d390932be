//! Turning chat text into search terms, the same way for messages and for queries.
//!
//! - Words are runs of letters and digits (Unicode `alphanumeric`); anything else splits,
//!   apostrophes included (`rollout's` gives `rollout` and `s`).
//! - Lower-cased with Unicode case mapping, then accents folded: compatibility
//!   decomposition (NFKD) with the combining marks dropped, so `Déploiement`, `déploiement`
//!   and `deploiement` are one term, and full-width `ＡＰＩ` is `api`. Letters NFKD does
//!   not split are folded by hand: `ß` -> `ss`, `æ` -> `ae`, `œ` -> `oe`, `ø` -> `o`,
//!   `ł` -> `l`, `đ` -> `d`, `þ` -> `th`, dotless `ı` -> `i`.
//! - Words of one character are dropped, as are words longer than [`MAX_WORD_BYTES`]
//!   (hashes, base64). Stop words (the most frequent function words of English, German,
//!   French and Spanish, see [`is_stop_word`]) are kept: a query's stop words do not find
//!   messages, but among the messages its other words find they count like any word.
//! - Words of ASCII letters get a light English stemmer (plural and possessive `s`,
//!   `-ies`, `-ing`, `-ed`, `-ment`, a final `e`), so `deploying`, `deployed`,
//!   `deployment` and `deploys` all become `deploy`, and `releases`/`released` meet
//!   `release`. Words with digits are kept as they are (`v2`, `p99`, `4pm`).
//! - Chinese, Japanese, Korean and Thai have no spaces between words: a run of Han, kana,
//!   Hangul or Thai characters becomes its overlapping character bigrams (`デプロイ` ->
//!   `デプ`, `プロ`, `ロイ`), a single such character stays a unigram. A query word in
//!   such a script therefore matches inside longer runs (`…のデプロイが完了…`).

use unicode_normalization::char::{decompose_compatible, is_combining_mark};

/// Longest word indexed, in bytes after folding.
pub const MAX_WORD_BYTES: usize = 64;

/// Stop words (already folded): English, German, French, Spanish. Sorted. Reviewed on
/// real chat (the chitchat corpus, `bench/chat-recall.js`): only articles, the commonest
/// prepositions, conjunctions and forms of "to be", each in over 1% of messages in
/// English; modal verbs, pronouns, quantifiers and question words ("would", "some",
/// "those", "why") carry meaning in a query and are not stop words, nor are function
/// words of other languages that are English content words ("war", "die", "hat", "son").
pub const STOP_WORDS: &[&str] = &[
    "al", "an", "and", "are", "as", "at", "au", "auch", "auf", "aus", "aux", "avec", "be", "bei",
    "bis", "by", "ce", "ces", "como", "con", "da", "dans", "das", "dass", "de", "del", "dem",
    "den", "der", "des", "du", "ein", "eine", "einen", "einer", "el", "elle", "en", "er", "es",
    "est", "esta", "este", "et", "for", "from", "ich", "il", "ils", "im", "in", "is", "ist", "it",
    "its", "je", "la", "las", "le", "les", "lo", "los", "mais", "mas", "mit", "nach", "ne",
    "nicht", "noch", "nous", "oder", "of", "on", "or", "ou", "par", "para", "pas", "pero", "por",
    "pour", "qu", "que", "qui", "sa", "se", "ses", "sie", "sind", "su", "sur", "sus", "that",
    "the", "this", "to", "un", "und", "une", "von", "vous", "was", "were", "wie", "wir", "with",
    "zu", "zum", "zur",
];

/// A word of at most 8 bytes as a big-endian number, zero-padded: for words without
/// NUL bytes, numeric order is the words' byte order.
const fn pack(word: &[u8]) -> u64 {
    let mut k = 0u64;
    let mut i = 0;
    while i < 8 {
        k <<= 8;
        if i < word.len() {
            k |= word[i] as u64;
        }
        i += 1;
    }
    k
}

/// [`STOP_WORDS`] packed, in the same (sorted) order: a lookup is a binary search over
/// integers rather than string comparisons, and it runs for every word indexed.
const STOP_KEYS: [u64; STOP_WORDS.len()] = {
    let mut keys = [0u64; STOP_WORDS.len()];
    let mut i = 0;
    while i < keys.len() {
        keys[i] = pack(STOP_WORDS[i].as_bytes());
        i += 1;
    }
    keys
};

/// Whether a folded word is a stop word.
pub fn is_stop_word(word: &str) -> bool {
    let b = word.as_bytes();
    b.len() <= 8 && !b.contains(&0) && STOP_KEYS.binary_search(&pack(b)).is_ok()
}

/// Scripts written without spaces between words: Han, kana, Hangul and Thai. A search
/// reads a run of them as its overlapping character pairs (the channel's tokenizer here,
/// the memory's index text in `crate::memory::passages::terms`).
pub fn is_unsegmented(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0E7F   // Thai
        | 0x3040..=0x30FF // Hiragana, Katakana (with the prolonged sound mark)
        | 0x31F0..=0x31FF // Katakana phonetic extensions
        | 0x3400..=0x4DBF // CJK extension A
        | 0x4E00..=0x9FFF // CJK unified ideographs
        | 0xAC00..=0xD7AF // Hangul syllables
        | 0x1100..=0x11FF // Hangul jamo
        | 0x3130..=0x318F // Hangul compatibility jamo
        | 0xF900..=0xFAFF // CJK compatibility ideographs
        | 0xFF66..=0xFF9D // half-width Katakana
        | 0x20000..=0x2FA1F)
}

/// Words a question is not searched by besides the [`STOP_WORDS`] (unless it has no
/// other): English pronouns, auxiliaries, question words and chat fillers. They carry
/// meaning inside a channel search's query, where they rank but do not find; a question
/// to the memory names what it asks about in its other words. Sorted.
pub const QUESTION_WORDS: &[&str] = &[
    "a", "about", "after", "again", "all", "also", "am", "any", "because", "been", "before",
    "being", "but", "can", "could", "d", "did", "didn", "do", "does", "doesn", "doing", "don",
    "get", "got", "had", "has", "have", "he", "her", "here", "hers", "him", "his", "how", "i",
    "if", "into", "isn", "just", "let", "ll", "m", "me", "more", "most", "my", "no", "not", "now",
    "ok", "okay", "other", "our", "out", "over", "re", "s", "she", "should", "so", "some", "such",
    "t", "than", "their", "them", "then", "there", "these", "they", "those", "too", "up", "us",
    "ve", "very", "wasn", "we", "what", "whats", "when", "where", "which", "while", "who", "whom",
    "why", "will", "would", "yeah", "yes", "you", "your", "yours",
];

/// Whether a lower-cased word of a question is left out of its search terms: a stop
/// word or a [`QUESTION_WORDS`] word.
pub fn is_question_stop_word(word: &str) -> bool {
    is_stop_word(word) || QUESTION_WORDS.binary_search(&word).is_ok()
}

/// Letters that NFKD leaves whole, folded to their usual Latin spelling.
fn special_fold(c: char) -> Option<&'static str> {
    Some(match c {
        'ß' | 'ẞ' => "ss",
        'æ' | 'Æ' => "ae",
        'œ' | 'Œ' => "oe",
        'ø' | 'Ø' => "o",
        'ł' | 'Ł' => "l",
        'đ' | 'Đ' => "d",
        'þ' | 'Þ' => "th",
        'ı' => "i",
        _ => return None,
    })
}

/// Light English suffix stripping for a word of lowercase ASCII letters. Keeps at
/// least three letters of stem.
pub fn stem(word: &mut String) {
    if word.len() <= 3 || !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return;
    }
    let strip = |w: &mut String, suffix: &str, min_stem: usize| -> bool {
        if w.len() >= suffix.len() + min_stem && w.ends_with(suffix) {
            w.truncate(w.len() - suffix.len());
            true
        } else {
            false
        }
    };
    // Plurals and third person.
    if word.ends_with("ies") && word.len() > 4 {
        word.truncate(word.len() - 3);
        word.push('y');
    } else if word.ends_with("sses") {
        word.truncate(word.len() - 2);
    } else if word.ends_with('s')
        && !word.ends_with("ss")
        && !word.ends_with("us")
        && !word.ends_with("is")
    {
        word.truncate(word.len() - 1);
    }
    // Inflections.
    let inflected = strip(word, "ing", 3) || strip(word, "ed", 3);
    if inflected {
        // "planned" -> "plan", "rolling" keeps its "ll".
        let b = word.as_bytes();
        let n = b.len();
        if n >= 4 && b[n - 1] == b[n - 2] && !matches!(b[n - 1], b'l' | b's' | b'z' | b'e' | b'o') {
            word.truncate(n - 1);
        }
    } else {
        strip(word, "ment", 4);
    }
    // A final silent "e": "release" meets "releas(ed|ing)".
    if word.len() >= 5 && word.ends_with('e') && !word.ends_with("ee") {
        word.truncate(word.len() - 1);
    }
}

/// Splits text into terms. Reuses its buffers across calls.
#[derive(Debug, Default)]
pub struct Tokenizer {
    /// The word being read (folded, lower case).
    word: String,
    /// The run of CJK characters being read.
    cjk: Vec<char>,
    term: String,
    /// A CJK run as a string, handed to the caller as the word of its bigrams.
    run: String,
}

impl Tokenizer {
    pub fn new() -> Self {
        Tokenizer::default()
    }

    /// Calls `f(term, word)` for each term of `text`, in order, repeats included.
    /// `word` is the folded word the term came from (before stemming; for CJK, the
    /// whole run).
    pub fn terms(&mut self, text: &str, mut f: impl FnMut(&str, &str)) {
        self.word.clear();
        self.cjk.clear();
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if b.is_ascii_alphanumeric() {
                // A run of ASCII letters and digits is copied and lower-cased at once.
                self.flush_cjk(&mut f);
                let start = i;
                while i < bytes.len() && bytes[i].is_ascii_alphanumeric() {
                    i += 1;
                }
                let from = self.word.len();
                self.word.push_str(&text[start..i]);
                self.word[from..].make_ascii_lowercase();
                continue;
            }
            if b.is_ascii() {
                self.flush_word(&mut f);
                self.flush_cjk(&mut f);
                i += 1;
                continue;
            }
            let Some(c) = text[i..].chars().next() else {
                break;
            };
            i += c.len_utf8();
            self.fold(c, &mut f);
        }
        self.flush_word(&mut f);
        self.flush_cjk(&mut f);
    }

    /// Reads one character that is not ASCII.
    fn fold(&mut self, c: char, f: &mut impl FnMut(&str, &str)) {
        if is_unsegmented(c) {
            self.flush_word(f);
            self.cjk.push(c);
            return;
        }
        if let Some(s) = special_fold(c) {
            self.flush_cjk(f);
            self.word.push_str(s);
            return;
        }
        decompose_compatible(c, |d| {
            if is_combining_mark(d) {
                return;
            }
            if is_unsegmented(d) {
                self.flush_word(f);
                self.cjk.push(d);
            } else if d.is_alphanumeric() {
                self.flush_cjk(f);
                for l in d.to_lowercase() {
                    self.word.push(l);
                }
            } else {
                self.flush_word(f);
                self.flush_cjk(f);
            }
        });
    }

    fn flush_word(&mut self, f: &mut impl FnMut(&str, &str)) {
        if self.word.is_empty() {
            return;
        }
        let two_chars = self.word.chars().nth(1).is_some();
        if two_chars && self.word.len() <= MAX_WORD_BYTES {
            self.term.clear();
            self.term.push_str(&self.word);
            stem(&mut self.term);
            f(&self.term, &self.word);
        }
        self.word.clear();
    }

    #[inline]
    fn flush_cjk(&mut self, f: &mut impl FnMut(&str, &str)) {
        if !self.cjk.is_empty() {
            self.emit_cjk(f);
        }
    }

    fn emit_cjk(&mut self, f: &mut impl FnMut(&str, &str)) {
        self.run.clear();
        self.run.extend(self.cjk.iter());
        if self.cjk.len() == 1 {
            f(&self.run, &self.run);
        } else {
            for w in self.cjk.windows(2) {
                self.term.clear();
                self.term.push(w[0]);
                self.term.push(w[1]);
                f(&self.term, &self.run);
            }
        }
        self.cjk.clear();
    }
}

/// The terms of `text` (a convenience for tests and queries).
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    Tokenizer::new().terms(text, |t, _| out.push(t.to_string()));
    out
}

#[cfg(test)]
mod tests;
