use super::*;
use proptest::prelude::*;
use std::sync::Mutex;

const CHAT: &[&str] = &[
    "the deploy of the checkout service is rolling out to the canary now",
    "latency p99 went up after the migration, can someone review the schema change?",
    "I think the index on the replica is missing, let me check before we merge",
    "release is blocked on the incident review, flag stays off until tomorrow",
];

/// Chat-like text, `n` bytes or a little more.
fn chat(n: usize, seed: usize) -> String {
    let mut s = String::new();
    let mut i = seed;
    while s.len() < n {
        s.push_str(CHAT[i % CHAT.len()]);
        s.push(' ');
        i = i.wrapping_mul(7).wrapping_add(3);
    }
    s
}

/// One packer that has learned its table, shared by the tests: each table a packer
/// learns is kept for the rest of the process, and a process holds at most 255.
fn trained() -> &'static Mutex<TextPacker> {
    static PACKER: OnceLock<Mutex<TextPacker>> = OnceLock::new();
    PACKER.get_or_init(|| {
        let mut packer = TextPacker::default();
        let mut seed = 0;
        while !packer.is_packing() {
            packer.pack(&mut PackedText::plain(&chat(200, seed)));
            seed += 1;
        }
        Mutex::new(packer)
    })
}

fn packed(text: &str) -> PackedText {
    let mut t = PackedText::plain(text);
    let mut packer = trained()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    packer.pack(&mut t);
    t
}

#[test]
fn learns_its_table_once_sixteen_kilobytes_of_text_are_sampled() {
    assert_eq!(SAMPLE_BYTES, 16 * 1024);
    let mut packer = TextPacker::default();
    let text = "x".repeat(1024);
    for _ in 0..15 {
        let mut t = PackedText::plain(&text);
        assert_eq!(packer.pack(&mut t), None);
        assert!(!t.is_packed() && !packer.is_packing());
    }
    // The sixteenth kilobyte completes the sample: the table is learned, and this
    // text is the first one packed.
    let mut t = PackedText::from_string(text.clone());
    let was = packer.pack(&mut t);
    assert!(packer.is_packing());
    assert!(t.is_packed());
    // The text as it came is handed back, for a reader that wants it undecoded.
    assert!(was.is_some_and(|w| !w.is_packed() && w == *text.as_str()));
    assert_eq!(t, *text.as_str());
    assert!(t.heap_bytes() < 200, "{} B", t.heap_bytes());
}

#[test]
fn chat_text_packs_to_about_half_and_reads_back_exactly() {
    let (mut raw, mut held) = (0, 0);
    for seed in 1000..1100 {
        let text = chat(200, seed);
        let t = packed(&text);
        assert!(t.is_packed());
        assert_eq!(t.as_str(), text);
        raw += text.len();
        held += t.heap_bytes();
    }
    assert!(held * 2 <= raw, "{held} B held for {raw} B of text");
}

#[test]
fn a_text_packing_would_not_shorten_stays_as_it_came() {
    // Characters the table never saw are escaped, two bytes each: longer than plain.
    let text = "ŧ₥ǂǁ¤ ⟁⟂⟃ ⧉⧊⧋ 𝔄𝔅ℭ";
    let t = packed(text);
    assert!(!t.is_packed());
    assert_eq!(t.heap_bytes(), text.len() + 1);
    assert!(matches!(t.as_str(), Cow::Borrowed(s) if s == text));
}

#[test]
fn texts_compare_by_what_they_read() {
    let text = chat(200, 7);
    let (plain, pack) = (PackedText::plain(&text), packed(&text));
    assert!(pack.is_packed() && !plain.is_packed());
    assert_eq!(plain, pack);
    assert_eq!(pack, plain);
    assert_ne!(pack, packed(&chat(200, 8)));
    assert_ne!(PackedText::plain("a"), PackedText::plain("b"));
    assert_eq!(format!("{pack:?}"), format!("{text:?}"));
    // Packing a packed text leaves it alone.
    let mut again = pack.clone();
    trained()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .pack(&mut again);
    assert_eq!(again.0, pack.0);
}

#[test]
fn each_store_has_a_table_of_its_own_and_every_table_stays_readable() {
    let mut other = TextPacker::default();
    let mut first = None;
    let mut n = 0;
    while !other.is_packing() {
        let mut t = PackedText::plain(&"other words entirely ".repeat(10));
        other.pack(&mut t);
        first.get_or_insert(t);
        n += 1;
    }
    assert!(!first.is_some_and(|t| t.is_packed()));
    let mut mine = PackedText::plain(&"other words entirely ".repeat(10));
    other.pack(&mut mine);
    let theirs = packed(&chat(300, 3));
    assert!(mine.is_packed() && theirs.is_packed());
    assert_ne!(mine.id(), theirs.id(), "after {n} texts");
    assert_eq!(mine.as_str(), "other words entirely ".repeat(10));
    assert_eq!(theirs.as_str(), chat(300, 3));
}

#[test]
fn a_text_read_while_another_is_read_is_decoded_apart() {
    let (a, b) = (packed(&chat(200, 11)), packed(&chat(200, 12)));
    assert!(a.is_packed() && b.is_packed());
    let both = a.with_str(|x| b.with_str(|y| format!("{x}|{y}")));
    assert_eq!(both, format!("{}|{}", chat(200, 11), chat(200, 12)));
    assert_eq!(a.with_str(str::len), chat(200, 11).len());
}

#[test]
fn a_decoded_message_text_becomes_a_store_text_in_its_own_buffer() {
    let units: Vec<u16> = "Überprüfung デプロイ 🚀 done".encode_utf16().collect();
    let s = crate::core::input::string_of_units(&units);
    let at = s.as_ptr();
    let t = PackedText::from(s);
    assert_eq!(t.0.as_ptr(), at, "not copied");
    assert_eq!(t.as_str(), "Überprüfung デプロイ 🚀 done");
}

#[test]
fn a_packer_turned_off_keeps_every_text_as_it_came() {
    let mut packer = TextPacker::off();
    for seed in 0..200 {
        let mut t = PackedText::plain(&chat(200, seed));
        assert_eq!(packer.pack(&mut t), None);
        assert!(!t.is_packed());
    }
    assert!(!packer.is_packing());
}

#[test]
fn the_empty_text_reads_back_empty() {
    assert_eq!(packed("").as_str(), "");
    assert_eq!(PackedText::plain("").heap_bytes(), 1);
}

proptest! {
    /// Any text, packed or not, reads back as it was given.
    #[test]
    fn reads_back_what_it_was_given(s in "\\PC{0,400}", words in proptest::collection::vec(0..CHAT.len(), 0..6)) {
        let mut text = s;
        for w in words {
            text.push_str(CHAT[w]);
        }
        let t = packed(&text);
        prop_assert_eq!(t.as_str(), text.as_str());
        prop_assert_eq!(&t, &PackedText::plain(&text));
        prop_assert!(t.heap_bytes() <= text.len() + 1);
    }
}
