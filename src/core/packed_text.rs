//! The text of held messages, kept compressed when the store is asked to
//! (`packText`). A store learns a table of the byte sequences its chat repeats (FSST:
//! up to 255 symbols of 1 to 8 bytes, each written as one byte) from the first texts it
//! holds, then packs every text it takes in with that table. Real chat text shrinks to
//! about half; a text the table does not shorten is kept as it came. Reading a packed
//! text decodes it (a fifth of a microsecond for 200 bytes), so the store reads texts
//! only where it must: first renderings, snippets, saving, re-indexing and handing a
//! message to JS.
//!
//! A text names its table by a one-byte id, and the tables live for the whole process
//! (a table is 2.3 KB): a process can hold [`MAX_TABLES`] of them. The stores created
//! after that keep their texts unpacked, with the same behaviour and more memory.

use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use fsst::{Compressor, Decompressor, Symbol};

/// Text bytes a store collects from the texts it takes in before it learns its table
/// (some 80 messages of 200 bytes). The texts taken in meanwhile stay unpacked.
pub const SAMPLE_BYTES: usize = 16 * 1024;

/// Tables one process can hold, one per store that learned one.
pub const MAX_TABLES: usize = 255;

/// The id byte of a text kept as it came.
const PLAIN: u8 = 0;

/// A learned table, as decoding needs it.
struct Table {
    symbols: [Symbol; 255],
    lengths: [u8; 255],
}

static TABLES: [OnceLock<Table>; MAX_TABLES] = [const { OnceLock::new() }; MAX_TABLES];
static TABLES_TAKEN: AtomicUsize = AtomicUsize::new(0);

/// Keeps `compressor`'s table for the rest of the process; its id (1 to
/// [`MAX_TABLES`]), or `None` when every id is taken.
fn register(compressor: &Compressor) -> Option<u8> {
    let slot = TABLES_TAKEN
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
            (n < MAX_TABLES).then_some(n + 1)
        })
        .ok()?;
    let parts = compressor.clone().into_parts();
    let cell = TABLES.get(slot)?;
    cell.set(Table {
        symbols: parts.symbols,
        lengths: parts.lengths,
    })
    .ok()?;
    u8::try_from(slot + 1).ok()
}

fn table(id: u8) -> Option<&'static Table> {
    TABLES.get(usize::from(id).checked_sub(1)?)?.get()
}

thread_local! {
    /// Where texts are decoded (decoding writes whole 8-byte words, past the text's
    /// end, so a text read as a string is then copied out at its exact length).
    static DECODED: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// A message's text as the store holds it: one allocation, the text or its codes
/// followed by one byte naming the table it is packed with (0: kept as it came). The
/// byte goes last so that a string taken in with a byte to spare becomes a text without
/// being copied. Read it with [`PackedText::as_str`] or [`PackedText::with_str`].
#[derive(Clone)]
pub struct PackedText(Box<[u8]>);

impl PackedText {
    /// `text` kept as it came; a store packs it when it takes the message in.
    pub fn plain(text: &str) -> Self {
        let mut bytes = Vec::with_capacity(text.len() + 1);
        bytes.extend_from_slice(text.as_bytes());
        PackedText::with_id(bytes, PLAIN)
    }

    /// [`PackedText::plain`], keeping `text`'s own buffer.
    pub fn from_string(text: String) -> Self {
        PackedText::with_id(text.into_bytes(), PLAIN)
    }

    fn with_id(mut body: Vec<u8>, id: u8) -> Self {
        body.push(id);
        PackedText(body.into_boxed_slice())
    }

    fn id(&self) -> u8 {
        self.0.last().copied().unwrap_or(PLAIN)
    }

    fn body(&self) -> &[u8] {
        self.0.split_last().map_or(&[][..], |(_, body)| body)
    }

    pub fn is_packed(&self) -> bool {
        self.id() != PLAIN
    }

    /// The text: borrowed when kept as it came, decoded when packed.
    pub fn as_str(&self) -> Cow<'_, str> {
        match self.id() {
            PLAIN => Cow::Borrowed(self.plain_str()),
            _ => Cow::Owned(self.with_str(str::to_owned)),
        }
    }

    /// Calls `f` with the text. A packed text is decoded into a buffer kept per thread
    /// rather than into a new string (the index reads texts this way).
    pub fn with_str<R>(&self, f: impl FnOnce(&str) -> R) -> R {
        let body = self.body();
        let table = match self.id() {
            PLAIN => return f(self.plain_str()),
            id => match table(id) {
                Some(t) => t,
                // Not made: a packed text names a table registered before it.
                None => return f(""),
            },
        };
        DECODED.with(|cell| match cell.try_borrow_mut() {
            Ok(mut decoded) => {
                decode_into(table, body, &mut decoded);
                f(&String::from_utf8_lossy(&decoded))
            }
            // `f` of an outer call reads another text: this one gets a buffer of its own.
            Err(_) => {
                let mut decoded = Vec::new();
                decode_into(table, body, &mut decoded);
                f(&String::from_utf8_lossy(&decoded))
            }
        })
    }

    /// The body of a text kept as it came.
    fn plain_str(&self) -> &str {
        let body = self.body();
        debug_assert!(self.id() == PLAIN && std::str::from_utf8(body).is_ok());
        // SAFETY: a text kept as it came is made only by `PackedText::plain` and
        // `PackedText::from_string`, from a whole `&str` or `String`, followed by the id
        // byte `split_last` leaves out here; nothing changes it afterwards. (Checking it
        // again on every read would cost each message indexed or rendered a pass over
        // its text.)
        unsafe { std::str::from_utf8_unchecked(body) }
    }

    /// Bytes held on the heap (the packed size of a packed text).
    pub fn heap_bytes(&self) -> usize {
        self.0.len()
    }
}

/// Decodes `codes` into `decoded` (emptied first).
fn decode_into(table: &Table, codes: &[u8], decoded: &mut Vec<u8>) {
    let decompressor = Decompressor::new(&table.symbols, &table.lengths);
    decoded.clear();
    // Every code yields at most 8 bytes, each written as a whole word.
    decoded.reserve(decompressor.max_decompression_capacity(codes) + 8);
    let len = decompressor.decompress_into(codes, decoded.spare_capacity_mut());
    // SAFETY: `decompress_into` initialised the first `len` bytes of the spare capacity
    // it was given (every byte it returns, within the capacity reserved).
    unsafe { decoded.set_len(len.min(decoded.capacity())) };
}

impl From<&str> for PackedText {
    fn from(text: &str) -> Self {
        PackedText::plain(text)
    }
}

impl From<String> for PackedText {
    fn from(text: String) -> Self {
        PackedText::from_string(text)
    }
}

impl PartialEq for PackedText {
    /// Two texts are equal when they read the same, however each is held.
    fn eq(&self, other: &Self) -> bool {
        // One table packs one text one way: the same id and different bytes are
        // different texts.
        self.0 == other.0 || (self.id() != other.id() && self.as_str() == other.as_str())
    }
}

impl PartialEq<str> for PackedText {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl fmt::Debug for PackedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.as_str(), f)
    }
}

/// Learns a store's table from the first [`SAMPLE_BYTES`] of text it takes in, then
/// packs each text with it.
#[derive(Default)]
pub struct TextPacker(Stage);

enum Stage {
    /// Collecting the sample.
    Learning {
        sample: Vec<Box<[u8]>>,
        bytes: usize,
    },
    Packing {
        id: u8,
        compressor: Box<Compressor>,
        /// The last text's codes and end offset, kept for the next text's.
        codes: Vec<u8>,
        ends: Vec<u64>,
    },
    /// Texts stay as they came: packing is turned off, or no table id was left.
    Off,
}

impl Default for Stage {
    fn default() -> Self {
        Stage::Learning {
            sample: Vec::new(),
            bytes: 0,
        }
    }
}

impl TextPacker {
    /// A packer that keeps every text as it came.
    pub fn off() -> Self {
        TextPacker(Stage::Off)
    }

    /// Packs `text` unless it is packed already or packing would not shorten it.
    /// Returns the text as it came when it was packed.
    pub fn pack(&mut self, text: &mut PackedText) -> Option<PackedText> {
        if text.is_packed() {
            return None;
        }
        if let Stage::Learning { sample, bytes } = &mut self.0 {
            sample.push(text.body().into());
            *bytes += text.body().len();
            if *bytes < SAMPLE_BYTES {
                return None;
            }
            let lines: Vec<&[u8]> = sample.iter().map(|b| &**b).collect();
            let compressor = Compressor::train(&lines);
            self.0 = match register(&compressor) {
                Some(id) => Stage::Packing {
                    id,
                    compressor: Box::new(compressor),
                    codes: Vec::new(),
                    ends: Vec::new(),
                },
                None => Stage::Off,
            };
        }
        if let Stage::Packing {
            id,
            compressor,
            codes,
            ends,
        } = &mut self.0
        {
            // The bulk entry point, for one text: its lookups are branch-free, which
            // real text (whose next symbol is hard to predict) packs some 1.3-2x faster
            // with than with `compress`. It writes into a buffer kept for the next text.
            codes.clear();
            ends.clear();
            compressor.compress_bulk_into::<1>(&[text.body()], codes, ends);
            if codes.len() < text.body().len() {
                let mut packed = Vec::with_capacity(codes.len() + 1);
                packed.extend_from_slice(codes);
                return Some(std::mem::replace(text, PackedText::with_id(packed, *id)));
            }
        }
        None
    }

    /// Whether the packer learned a table (texts taken in from now on are packed).
    pub fn is_packing(&self) -> bool {
        matches!(self.0, Stage::Packing { .. })
    }
}

impl fmt::Debug for TextPacker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let stage = match &self.0 {
            Stage::Learning { bytes, .. } => format!("learning ({bytes} B sampled)"),
            Stage::Packing { id, .. } => format!("packing with table {id}"),
            Stage::Off => "off".to_string(),
        };
        f.debug_tuple("TextPacker").field(&stage).finish()
    }
}

#[cfg(test)]
mod tests;
