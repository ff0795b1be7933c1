//! The plugin side of a call: decode the request, run the trait method, encode the answer, and
//! never let a panic unwind across the `extern "C"` boundary.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex};

use serde::Serialize;

use super::flat;
use super::wire::{Answer, FlatFunctions, Fault, ImageRef, Request, encode, encode_answer, split_envelope};
use crate::{BatchContext, GuestImage, GuestPlugin, HostPlugin, PassPlugin};

/// The text of a panic payload.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

/// Runs `answer` on the decoded request (and the flat batch after it, empty for requests without
/// one) with panics caught, and encodes what it returns.
fn serve(request: &[u8], answer: impl FnOnce(Request<'static>, &[u8]) -> Answer<Vec<u8>>) -> Vec<u8> {
    let (request, batch): (Request<'static>, &[u8]) = match split_envelope(request) {
        Ok(r) => r,
        Err(e) => return encode_answer::<()>(&Err(Fault::BadRequest(e))),
    };
    match catch_unwind(AssertUnwindSafe(|| answer(request, batch))) {
        // The answer is already encoded as `Answer<T>`.
        Ok(Ok(bytes)) => bytes,
        Ok(Err(fault)) => encode_answer::<()>(&Err(fault)),
        Err(payload) => encode_answer::<()>(&Err(Fault::Panic(panic_message(payload.as_ref())))),
    }
}

/// Encodes a successful answer.
fn ok<T: Serialize>(value: T) -> Answer<Vec<u8>> {
    Ok(encode_answer(&Ok::<T, Fault>(value)))
}

/// Answers a request to a pass plugin; the `export_pass!` macro calls this.
pub fn serve_pass<P: PassPlugin>(pass: &P, request: &[u8]) -> Vec<u8> {
    serve(request, |request, batch| match request {
        Request::Info => ok(pass.info()),
        Request::CheckParams(params) => ok(pass.check_params(&params)),
        Request::Analyze { program, params } => ok(pass.analyze(&program, &params)),
        Request::Codegen(params) => ok(pass.codegen(&params)),
        Request::RunPass {
            state,
            helpers,
            facts,
            params,
            functions,
        } => {
            let count = usize::try_from(functions.count).unwrap_or(usize::MAX);
            let bad = |e: flat::FlatError| Fault::BadRequest(format!("the functions do not decode: {e}"));
            // The bytes each function arrived in, to tell afterwards which ones the pass changed.
            let sent: Vec<&[u8]> = flat::read_batch(batch, count)
                .map_err(bad)?
                .into_iter()
                .map(|entry| match entry {
                    flat::Entry::Function(bytes) => Some(bytes),
                    flat::Entry::Unchanged => None,
                })
                .collect::<Option<_>>()
                .ok_or_else(|| Fault::BadRequest("a request marks a function unchanged".to_string()))?;
            let mut funcs = Vec::with_capacity(sent.len());
            for (index, bytes) in sent.iter().enumerate() {
                funcs.push(flat::decode_function(bytes).map_err(|e| {
                    bad(flat::FlatError::InFunction {
                        index,
                        source: Box::new(e),
                    })
                })?);
            }
            let context = BatchContext {
                state: &state,
                helpers: &helpers,
                facts: &facts,
            };
            match pass.run_all(&mut funcs, &context, &params) {
                Ok(()) => {
                    let envelope: Answer<Result<FlatFunctions, (usize, crate::PassError)>> =
                        Ok(Ok(functions));
                    let mut out = encode(&envelope).map_err(Fault::BadRequest)?;
                    flat::encode_answer_into(&funcs, &sent, &mut out);
                    Ok(out)
                }
                Err(failure) => ok(Err::<FlatFunctions, _>(failure)),
            }
        }
        _ => Err(Fault::WrongKind),
    })
}

/// Images a guest plugin was sent, by the number the host gave them. Hosts send one image per
/// run, so the cache holds the latest few.
static IMAGES: Mutex<BTreeMap<u64, Arc<GuestImage>>> = Mutex::new(BTreeMap::new());

const KEPT_IMAGES: usize = 4;

fn image(image: ImageRef<'static>) -> Result<Arc<GuestImage>, Fault> {
    let mut images = IMAGES.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    match image {
        ImageRef::Full(id, image) => {
            let image = Arc::new(image.into_owned());
            images.insert(id, image.clone());
            while images.len() > KEPT_IMAGES {
                images.pop_first();
            }
            Ok(image)
        }
        ImageRef::Cached(id) => images.get(&id).cloned().ok_or(Fault::UnknownImage(id)),
    }
}

/// Answers a request to a guest plugin; the `export_guest!` macro calls this.
pub fn serve_guest<G: GuestPlugin>(guest: &G, request: &[u8]) -> Vec<u8> {
    serve(request, |request, _| match request {
        Request::Info => ok(guest.info()),
        Request::CheckOptions(options) => ok(guest.check_options(&options)),
        Request::State(options) => ok(guest.state(&options)),
        Request::Helpers(options) => ok(guest.helpers(&options)),
        Request::MemoryModel => ok(guest.memory_model()),
        Request::Platforms => ok(guest.platforms()),
        Request::Load(bytes) => ok(guest.load(&bytes)),
        Request::Externs { image: i, platform } => ok(guest.externs(&*image(i)?, &platform)),
        Request::Discover { image: i, seeds } => ok(guest.discover(&*image(i)?, &seeds)),
        Request::Lift {
            image: i,
            entry,
            functions,
            options,
        } => ok(guest.lift(&*image(i)?, entry, &functions, &options)),
        Request::RuntimeSources { platform, options } => ok(guest.runtime_sources(&platform, &options)),
        _ => Err(Fault::WrongKind),
    })
}

/// Answers a request to a host plugin; the `export_host!` macro calls this.
pub fn serve_host<H: HostPlugin>(host: &H, request: &[u8]) -> Vec<u8> {
    serve(request, |request, _| match request {
        Request::Info => ok(host.info()),
        Request::HostDesc => ok(host.desc()),
        Request::CpuModels => ok(host.cpu_models()),
        Request::Compiler => ok(host.compiler()),
        Request::Environment => ok(host.environment()),
        Request::Requirements => ok(host.requirements()),
        Request::Runner => ok(host.runner()),
        _ => Err(Fault::WrongKind),
    })
}
