//! The plugin side of a call: decode the request, run the trait method, encode the answer, and
//! never let a panic unwind across the `extern "C"` boundary.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex};

use serde::Serialize;

use super::flat;
use rpt_ir::{HelperDecl, StateDesc};

use super::wire::{
    Answer, ContextRef, Fault, FlatFunctions, ImageRef, Request, RunPassAnswer, encode, encode_answer, split_envelope,
};
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
        Request::Analyze { program, params } => {
            let functions = flat::decode_batch(batch, program.keys.len())
                .map_err(|e| Fault::BadRequest(format!("the functions do not decode: {e}")))?;
            ok(pass.analyze(&program.join(functions), &params))
        }
        Request::Codegen(params) => ok(pass.codegen(&params)),
        Request::RunPass {
            context,
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
            let context = pass_context(context)?;
            let batch_context = BatchContext {
                state: &context.0,
                helpers: &context.1,
                facts: &facts,
            };
            match pass.run_all(&mut funcs, &batch_context, &params) {
                Ok(()) => {
                    let envelope: RunPassAnswer = Ok(Ok(functions));
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

/// The state and helpers a pass plugin was sent, by the number the host gave them.
type PassContext = Arc<(StateDesc, BTreeMap<String, HelperDecl>)>;

/// Contexts a pass plugin was sent; a host sends one per program, so the latest few are kept.
static CONTEXTS: Mutex<BTreeMap<u64, PassContext>> = Mutex::new(BTreeMap::new());

fn pass_context(context: ContextRef<'static>) -> Result<PassContext, Fault> {
    let mut contexts = CONTEXTS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    match context {
        ContextRef::Full(id, state, helpers) => {
            let context = Arc::new((state.into_owned(), helpers.into_owned()));
            contexts.insert(id, context.clone());
            while contexts.len() > KEPT_IMAGES {
                contexts.pop_first();
            }
            Ok(context)
        }
        ContextRef::Cached(id) => contexts.get(&id).cloned().ok_or(Fault::UnknownContext(id)),
    }
}

/// Images a guest plugin was sent, by the number the host gave them. Hosts send one image per
/// run, so the cache holds the latest few.
static IMAGES: Mutex<BTreeMap<u64, Arc<GuestImage>>> = Mutex::new(BTreeMap::new());

/// How many images (or pass contexts) a plugin keeps.
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
        Request::MemoryModel { platform, options } => ok(guest.memory_model(&platform, &options)),
        Request::Platforms => ok(guest.platforms()),
        Request::ConvertImage(file) => ok(guest.convert_image(&file)),
        Request::Load {
            image,
            platform,
            options,
        } => ok(guest.load(&image, &platform, &options)),
        Request::Externs { image: i, platform } => ok(guest.externs(&*image(i)?, &platform)),
        Request::Discover { image: i, seeds } => ok(guest.discover(&*image(i)?, &seeds)),
        Request::Lift {
            image: i,
            entry,
            functions,
            options,
        } => ok(guest.lift(&*image(i)?, entry, &functions, &options)),
        Request::LiftUncovered {
            image: i,
            functions,
            covered,
            options,
        } => ok(guest.lift_uncovered(&*image(i)?, &functions, &covered, &options)),
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

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use rpt_ir::{Function, GuestAddr, Slot, SlotLayout, SlotRole, Type};

    use super::*;
    use crate::abi::flat;
    use crate::abi::wire::ProgramHead;
    use crate::abi::wire::{encode_with_batch, split_envelope};
    use crate::{FunctionContext, GuestOptions, PassError, PassParams, PluginInfo, ProgramAnalysis};
    use rpt_ir::Program;

    /// Moves the entry of functions at odd addresses by the number of state slots, so the answer
    /// shows both that the context arrived and which functions changed.
    struct ShiftOdd;

    impl PassPlugin for ShiftOdd {
        fn info(&self) -> PluginInfo {
            PluginInfo {
                name: "shift-odd".into(),
                version: "0".into(),
                hash: String::new(),
            }
        }

        fn check_params(&self, _: &PassParams) -> Result<(), PassError> {
            Ok(())
        }

        /// Reports every function's key, entry and block count, and the externs.
        fn analyze(&self, program: &Program, _: &PassParams) -> Result<Option<ProgramAnalysis>, PassError> {
            let mut report = String::new();
            for (key, func) in &program.functions {
                report += &format!("{key}:{}:{} ", func.entry, func.blocks.len());
            }
            report += &format!("externs {}", program.externs.len());
            Ok(Some(ProgramAnalysis {
                facts: BTreeMap::new(),
                report,
            }))
        }

        fn run(&self, func: &mut Function, cx: &FunctionContext<'_>, _: &PassParams) -> Result<(), PassError> {
            if func.entry.0 % 2 == 1 {
                func.entry.0 += cx.state.len() as u64;
            }
            Ok(())
        }
    }

    fn run(context: ContextRef<'_>, funcs: &[Function]) -> Answer<(FlatFunctions, Vec<Option<Function>>)> {
        let params = PassParams::new();
        let request = Request::RunPass {
            context,
            facts: Cow::Owned(Vec::new()),
            params: Cow::Borrowed(&params),
            functions: FlatFunctions {
                count: funcs.len() as u64,
            },
        };
        let bytes = serve_pass(&ShiftOdd, &encode_with_batch(&request, funcs).expect("encodes"));
        let (head, rest): (RunPassAnswer, &[u8]) = split_envelope(&bytes).expect("the answer decodes");
        let count = head?.expect("the pass succeeds");
        Ok((
            count,
            flat::decode_answer(rest, funcs.len()).expect("the batch decodes"),
        ))
    }

    #[test]
    fn a_pass_answers_with_changed_functions_and_keeps_its_context() {
        let mut state = StateDesc::new();
        for name in ["eax", "ebx", "ecx"] {
            state
                .add(Slot {
                    name: name.into(),
                    ty: Type::I32,
                    role: SlotRole::Gpr,
                    layout: SlotLayout::Plain,
                })
                .expect("slot");
        }
        let helpers = BTreeMap::new();
        let funcs: Vec<Function> = [0x10, 0x11, 0x12].map(|a| Function::new(GuestAddr(a))).into();
        // A number the plugin was never sent.
        let id = u64::MAX - 7;
        assert_eq!(run(ContextRef::Cached(id), &funcs), Err(Fault::UnknownContext(id)));
        let full = ContextRef::Full(id, Cow::Borrowed(&state), Cow::Borrowed(&helpers));
        let moved = Some(Function::new(GuestAddr(0x14)));
        let expected = (FlatFunctions { count: 3 }, vec![None, moved, None]);
        assert_eq!(run(full, &funcs), Ok(expected.clone()));
        assert_eq!(run(ContextRef::Cached(id), &funcs), Ok(expected));
    }

    #[test]
    fn an_analysis_sees_the_whole_program() {
        let mut program = Program::default();
        let mut func = Function::new(GuestAddr(0x20));
        func.new_block();
        program
            .functions
            .insert(GuestAddr(0x10), Function::new(GuestAddr(0x10)));
        // A key that is not the entry stays the key.
        program.functions.insert(GuestAddr(0x30), func);
        program.externs.insert(GuestAddr(0x40), "puts".into());
        let params = PassParams::new();
        let (head, functions) = ProgramHead::split(&program);
        let request = Request::Analyze {
            program: head,
            params: Cow::Borrowed(&params),
        };
        let answer = serve_pass(&ShiftOdd, &encode_with_batch(&request, &functions).expect("encodes"));
        let analysis: Answer<Result<Option<ProgramAnalysis>, PassError>> =
            crate::abi::wire::decode(&answer).expect("the answer decodes");
        let report = analysis
            .expect("no fault")
            .expect("no error")
            .expect("an analysis")
            .report;
        assert_eq!(report, "0x00000010:0x00000010:0 0x00000030:0x00000020:1 externs 1");
    }

    #[test]
    fn a_request_with_a_broken_batch_is_refused() {
        let params = PassParams::new();
        let request = Request::RunPass {
            context: ContextRef::Cached(1),
            facts: Cow::Owned(Vec::new()),
            params: Cow::Borrowed(&params),
            functions: FlatFunctions { count: 1 },
        };
        let mut bytes = encode_with_batch(&request, &[Function::new(GuestAddr(1))]).expect("encodes");
        bytes.pop();
        let answer = serve_pass(&ShiftOdd, &bytes);
        let (head, _): (RunPassAnswer, &[u8]) = split_envelope(&answer).expect("the answer decodes");
        assert!(
            matches!(&head, Err(Fault::BadRequest(m)) if m.contains("do not decode")),
            "{head:?}"
        );
    }

    /// A guest that answers with what it was told about the platform and the options.
    struct EchoSetup;

    impl GuestPlugin for EchoSetup {
        fn info(&self) -> PluginInfo {
            PluginInfo {
                name: "echo".into(),
                version: "0".into(),
                hash: String::new(),
            }
        }
        fn check_options(&self, _: &GuestOptions) -> Result<(), crate::GuestError> {
            Ok(())
        }
        fn state(&self, _: &GuestOptions) -> StateDesc {
            StateDesc::new()
        }
        fn helpers(&self, _: &GuestOptions) -> Vec<rpt_ir::HelperDecl> {
            Vec::new()
        }
        fn memory_model(&self, platform: &str, options: &GuestOptions) -> crate::MemoryModel {
            crate::MemoryModel {
                address_bits: platform.len() as u32 + options.len() as u32,
                big_endian: true,
                stack_pointer: None,
                scratch_registers: Vec::new(),
                call_registers: Vec::new(),
            }
        }
        fn platforms(&self) -> Vec<String> {
            Vec::new()
        }
        fn convert_image(&self, file: &[u8]) -> Result<Vec<u8>, crate::GuestError> {
            Ok(file.iter().rev().copied().collect())
        }
        fn load(
            &self,
            image: &[u8],
            platform: &str,
            options: &GuestOptions,
        ) -> Result<crate::GuestImage, crate::GuestError> {
            Err(crate::GuestError::BadImage(format!(
                "{} bytes for {platform}, {options:?}",
                image.len()
            )))
        }
        fn externs(&self, _: &crate::GuestImage, _: &str) -> Result<crate::Externs, crate::GuestError> {
            Ok(crate::Externs::default())
        }
        fn discover(&self, _: &crate::GuestImage, _: &crate::Seeds) -> crate::Discovery {
            crate::Discovery::default()
        }
        fn lift(
            &self,
            _: &crate::GuestImage,
            entry: GuestAddr,
            _: &std::collections::BTreeSet<GuestAddr>,
            _: &GuestOptions,
        ) -> crate::LiftResult {
            crate::LiftResult {
                function: Function::new(entry),
                diagnostics: Vec::new(),
                listing: Vec::new(),
            }
        }
        fn lift_uncovered(
            &self,
            _: &crate::GuestImage,
            _: &std::collections::BTreeSet<GuestAddr>,
            _: &std::collections::BTreeSet<GuestAddr>,
            _: &GuestOptions,
        ) -> Vec<crate::LiftResult> {
            Vec::new()
        }
        fn runtime_sources(&self, _: &str, _: &GuestOptions) -> Result<Vec<crate::SourceFile>, crate::GuestError> {
            Ok(Vec::new())
        }
    }

    #[test]
    fn a_guest_converts_loads_and_describes_memory_for_the_recipes_platform_and_options() {
        let options = GuestOptions::from([("mapping".to_string(), crate::ParamValue::Str("hirom".into()))]);
        let load = Request::Load {
            image: Cow::Borrowed(&[1, 2, 3]),
            platform: Cow::Borrowed("snes"),
            options: Cow::Borrowed(&options),
        };
        let answer = serve_guest(&EchoSetup, &crate::abi::wire::encode(&load).expect("encodes"));
        let loaded: Answer<Result<crate::GuestImage, crate::GuestError>> =
            crate::abi::wire::decode(&answer).expect("the answer decodes");
        let message = loaded.expect("no fault").expect_err("the echo").to_string();
        assert!(
            message.contains("3 bytes for snes") && message.contains("hirom"),
            "{message}"
        );
        let memory = Request::MemoryModel {
            platform: Cow::Borrowed("snes"),
            options: Cow::Borrowed(&options),
        };
        let answer = serve_guest(&EchoSetup, &crate::abi::wire::encode(&memory).expect("encodes"));
        let model: Answer<crate::MemoryModel> = crate::abi::wire::decode(&answer).expect("the answer decodes");
        assert_eq!(model.expect("no fault").address_bits, 5);
        let convert = Request::ConvertImage(Cow::Borrowed(&[1, 2, 3]));
        let answer = serve_guest(&EchoSetup, &crate::abi::wire::encode(&convert).expect("encodes"));
        let converted: Answer<Result<Vec<u8>, crate::GuestError>> =
            crate::abi::wire::decode(&answer).expect("the answer decodes");
        assert_eq!(converted, Ok(Ok(vec![3, 2, 1])));
    }
}
