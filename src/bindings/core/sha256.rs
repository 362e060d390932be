//! SHA-256 exports: synchronous for small inputs, off the JS thread for large ones.

use crate::bindings::errors::throw;
use crate::bindings::js::describe;
use crate::core::input::InputError;
use crate::core::sha256::sha256_hex;
use napi::bindgen_prelude::*;
use napi::{Env, JsString, JsValue, Task, ValueType};
use napi_derive::napi;

fn wrong_type(env: &Env, func: &str, v: &Unknown) -> Error {
    throw(
        env,
        func,
        &InputError::type_error(
            "data",
            format!(
                "expected a string, Buffer or Uint8Array, got {}",
                describe(v)
            ),
        ),
    )
}

fn is_uint8_array(v: &Unknown) -> Result<bool> {
    Ok(v.get_type()? == ValueType::Object && v.is_typedarray()?)
}

/// SHA-256 of a string (its UTF-8 bytes, as `Buffer.from(text)` gives them) or of the
/// bytes of a Buffer / Uint8Array, as lowercase hex.
#[napi(catch_unwind, js_name = "sha256Hex", ts_args_type = "data: string | Uint8Array")]
pub fn sha256_hex_export(env: &Env, data: Unknown) -> Result<String> {
    const F: &str = "sha256Hex";
    if data.get_type()? == ValueType::String {
        // SAFETY: this arm is for strings.
        let s: JsString = unsafe { data.cast()? };
        return Ok(sha256_hex(s.into_utf8()?.as_slice()));
    }
    if is_uint8_array(&data)? {
        // SAFETY: checked to be a Uint8Array by `is_uint8_array` above.
        if let Ok(bytes) = unsafe { data.cast::<Uint8ArraySlice>() } {
            return Ok(sha256_hex(&bytes));
        }
    }
    Err(wrong_type(env, F, &data))
}

/// Bytes to hash on the libuv thread pool: a JS-owned typed array kept alive by its
/// reference, or a copy of a string's UTF-8.
pub enum HashInput {
    Bytes(Uint8Array),
    Text(Vec<u8>),
}

pub struct HashTask(HashInput);

impl Task for HashTask {
    type Output = String;
    type JsValue = String;

    fn compute(&mut self) -> Result<String> {
        Ok(match &self.0 {
            HashInput::Bytes(b) => sha256_hex(b),
            HashInput::Text(t) => sha256_hex(t),
        })
    }

    fn resolve(&mut self, _env: Env, output: String) -> Result<String> {
        Ok(output)
    }
}

/// `sha256Hex` computed on the libuv thread pool, so hashing a 50 MB upload does not
/// block the event loop. The bytes must not be modified until the promise settles.
/// A wrong argument type throws a `TypeError` synchronously.
#[napi(
    catch_unwind,
    ts_args_type = "data: string | Uint8Array",
    ts_return_type = "Promise<string>"
)]
pub fn sha256_hex_async(env: &Env, data: Unknown) -> Result<AsyncTask<HashTask>> {
    const F: &str = "sha256HexAsync";
    if data.get_type()? == ValueType::String {
        // SAFETY: this arm is for strings.
        let s: JsString = unsafe { data.cast()? };
        let bytes = s.into_utf8()?.as_slice().to_vec();
        return Ok(AsyncTask::new(HashTask(HashInput::Text(bytes))));
    }
    if is_uint8_array(&data)? {
        // SAFETY: checked to be a Uint8Array by `is_uint8_array` above.
        if let Ok(bytes) = unsafe { data.cast::<Uint8Array>() } {
            return Ok(AsyncTask::new(HashTask(HashInput::Bytes(bytes))));
        }
    }
    Err(wrong_type(env, F, &data))
}
