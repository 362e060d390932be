//! The vectors a host's embedder gives the messages: `messagesToEmbed`, `setVectors`, and
//! the `queryVector` of `assemble`, read here; kept and searched by
//! `crate::memory::passages::vectors`.

use super::{storage_error, JsMemoryStore};
use crate::bindings::errors::throw;
use crate::bindings::js::{budget_arg, describe, expect_array, id_arg, to_js};
use crate::core::input::InputError;
use crate::memory::passages::vectors::{unit, MAX_VECTOR_DIMS};
use crate::memory::passages::VectorsError;
use crate::memory::shapes::{MessageToEmbed, MAX_BATCH};
use napi::bindgen_prelude::*;
use napi::{Env, JsValue};
use napi_derive::napi;

/// A vector given as a `Float32Array` or an array of numbers (read, not yet checked for
/// finite values: the store says which number is not).
fn read_vector(env: &Env, func: &str, path: &str, v: &Unknown) -> Result<Vec<f32>> {
    let wrong = |got: &str| {
        throw(
            env,
            func,
            &InputError::type_error(
                path,
                format!("expected a Float32Array or an array of numbers, got {got}"),
            ),
        )
    };
    if v.is_typedarray()? {
        // SAFETY: `from_napi_value` checks the value is a typed array of f32 and fails
        // otherwise; the slice is copied before anything else runs.
        return match unsafe { Float32ArraySlice::from_napi_value(env.raw(), v.raw()) } {
            Ok(slice) => Ok(slice.to_vec()),
            Err(_) => Err(wrong("another typed array")),
        };
    }
    if !v.is_array()? {
        return Err(wrong(describe(v)));
    }
    let arr = expect_array(env, func, path, v)?;
    let len = arr.get_array_length()? as usize;
    if len > MAX_VECTOR_DIMS {
        return Err(throw(
            env,
            func,
            &InputError::range_error(
                path,
                format!("must hold at most {MAX_VECTOR_DIMS} numbers, got {len}"),
            ),
        ));
    }
    let mut out = Vec::with_capacity(len);
    for i in 0..len {
        let x: Unknown = arr.get_element(u32::try_from(i).unwrap_or(u32::MAX))?;
        if x.get_type()? != ValueType::Number {
            return Err(throw(
                env,
                func,
                &InputError::type_error(
                    format!("{path}[{i}]"),
                    format!("expected a number, got {}", describe(&x)),
                ),
            ));
        }
        #[allow(clippy::cast_possible_truncation)] // a vector's own precision is f32
        out.push(x.coerce_to_number()?.get_double()? as f32);
    }
    Ok(out)
}

/// A question's vector, read and checked (a `RangeError` for one that is not a vector).
pub(super) fn query_vector(env: &Env, func: &str, path: &str, v: &Unknown) -> Result<Vec<f32>> {
    let read = read_vector(env, func, path, v)?;
    if let Err(e) = unit(&read) {
        return Err(throw(
            env,
            func,
            &InputError::range_error(path, e.to_string()),
        ));
    }
    Ok(read)
}

#[napi]
impl JsMemoryStore {
    /// The messages of a session that have no vector yet, the newest first, at most
    /// `limit` (default 256): what a host's embedder is given next (nothing is read when
    /// every message has one). Give their vectors to
    /// `setVectors`; then `assemble` with a `queryVector` finds them by meaning too.
    ///
    /// ```ts
    /// const pending = memory.messagesToEmbed(sessionId)
    /// const vectors = await embed(pending.map((m) => m.text))
    /// memory.setVectors(sessionId, pending.map((m, i) => ({ messageId: m.messageId, vector: vectors[i] })))
    /// ```
    #[napi(
        catch_unwind,
        ts_args_type = "sessionId: string, limit?: number",
        ts_return_type = "MessageToEmbed[]"
    )]
    pub fn messages_to_embed<'e>(
        &self,
        env: &'e Env,
        session_id: Unknown<'e>,
        limit: Option<Unknown<'e>>,
    ) -> Result<Unknown<'e>> {
        const F: &str = "MemoryStore.messagesToEmbed";
        let session = id_arg(env, F, "sessionId", &session_id)?;
        let limit = usize::try_from(budget_arg(env, F, "limit", limit.as_ref(), 256)?)
            .unwrap_or(usize::MAX);
        let rows = self.with(env, F, |s| s.unembedded(&session, limit))?;
        let out: Vec<MessageToEmbed> = rows
            .into_iter()
            .map(|(message_id, text)| MessageToEmbed { message_id, text })
            .collect();
        to_js(env, &out)
    }

    /// Keeps a vector per message of a session (by the id `ingest` stored it under),
    /// replacing one kept before, all in one transaction: all kept, or, when one is not a
    /// vector (empty, over 4,096 numbers, a number not finite), none, with a `RangeError`
    /// naming it. Vectors are compared by cosine similarity, so any embedder's do, one
    /// model per session (a vector of another length than the question's is passed
    /// over). Returns the ids of the entries no message of the session has.
    #[napi(
        catch_unwind,
        ts_args_type = "sessionId: string, entries: Array<{ messageId: string, vector: Float32Array | number[] }>",
        ts_return_type = "string[]"
    )]
    pub fn set_vectors<'e>(
        &self,
        env: &'e Env,
        session_id: Unknown<'e>,
        entries: Unknown<'e>,
    ) -> Result<Unknown<'e>> {
        const F: &str = "MemoryStore.setVectors";
        let session = id_arg(env, F, "sessionId", &session_id)?;
        let arr = expect_array(env, F, "entries", &entries)?;
        let len = arr.get_array_length()? as usize;
        if len > MAX_BATCH {
            return Err(throw(
                env,
                F,
                &InputError::range_error(
                    "entries",
                    format!("at most {MAX_BATCH} entries per call, got {len}"),
                ),
            ));
        }
        let mut read: Vec<(String, Vec<f32>)> = Vec::with_capacity(len);
        for i in 0..len {
            let path = format!("entries[{i}]");
            let e: Unknown = arr.get_element(u32::try_from(i).unwrap_or(u32::MAX))?;
            crate::bindings::js::expect_object(env, F, &path, &e)?;
            // SAFETY: checked to be an object above.
            let obj: Object = unsafe { e.cast()? };
            let id: Unknown = obj.get_named_property("messageId")?;
            let vector: Unknown = obj.get_named_property("vector")?;
            read.push((
                id_arg(env, F, &format!("{path}.messageId"), &id)?,
                read_vector(env, F, &format!("{path}.vector"), &vector)?,
            ));
        }
        let refs: Vec<(&str, &[f32])> = read
            .iter()
            .map(|(id, v)| (id.as_str(), v.as_slice()))
            .collect();
        let out = self.with(env, F, |s| Ok(s.set_vectors(&session, &refs)))?;
        match out {
            Ok(unknown) => to_js(env, &unknown),
            Err(VectorsError::Invalid(i, e)) => Err(throw(
                env,
                F,
                &InputError::range_error(format!("entries[{i}].vector"), e.to_string()),
            )),
            Err(VectorsError::Storage(e)) => Err(storage_error(env, F, &e)),
        }
    }
}
