//! The napi binding layer: translates JS values to the domain types and back, and
//! nothing else. One module per concern; each export's doc comment is its TypeScript doc.

mod coord;
mod dropin;
mod errors;
mod js;
mod manifest;
mod memory;
mod memory_assemble;
mod memory_compaction;
mod memory_history;
mod memory_tools;
mod runtime;
mod sha256;
mod store;
mod thread_block;
mod tokens;
mod tools;
