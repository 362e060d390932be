//! Exports of the drop-in wing: the structured context, the attachment manifest, the
//! runtime hardening.

mod context;
mod manifest;
mod runtime;
