//! The napi binding layer: translates JS values to the domain types and back, and
//! nothing else. It mirrors the house: `core`, `channel`, `memory` and `dropin` hold the
//! exports of each; `errors`, `js` and `value` are the translation every export shares.
//! Each export's doc comment is its TypeScript doc.

mod channel;
mod core;
mod dropin;
mod errors;
mod js;
mod memory;
mod value;
