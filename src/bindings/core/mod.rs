//! Exports of the core: the token estimate and SHA-256; the tool-call input reader the
//! wings' tools share.

mod sha256;
mod tokens;
pub(crate) mod tool;
