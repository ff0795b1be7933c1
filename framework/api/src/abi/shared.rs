//! The shared-layout transport: a pass plugin built from the same IR and API source, by the same
//! compiler with the same flags for the same target as the host, works on the host's functions
//! in place. Nothing is encoded, copied or decoded; a request is a pointer.
//!
//! Two things make that sound, and both are checked or enforced rather than assumed:
//!
//! - **The same layout.** Rust promises no layout across compilations in general, but one
//!   compiler lays out the same type definitions the same way every time (layout depends on the
//!   definitions, the target and the flags, not on the optimisation level). Each side computes a
//!   [`layout_key`] from rpt-ir's [`LAYOUT_DIGEST`](rpt_ir::LAYOUT_DIGEST) (its source,
//!   `rustc -vV`, the target and the flags), the digest of this crate's source and the sizes of
//!   the types that cross; [`super::load`] sends shared-layout requests only when the plugin's key
//!   equals its own. Anything else (another compiler, other flags, an edited IR crate) gets the
//!   [`super::flat`] form, which any build of the same `WIRE_VERSION` reads.
//! - **The same allocator.** A pass grows, shrinks and frees the host's vectors, so both sides
//!   must allocate from one heap. The export macros declare the plugin's `#[global_allocator]` to
//!   be [`std::alloc::System`] (a plugin that declares another does not compile), and rpt, like
//!   any Rust program that declares none, allocates from `System` too: both end in the process's
//!   one `malloc`.
//!
//! A pass that fails or panics may leave the functions half changed, exactly as a built-in pass
//! does; the core throws them away with the error. Errors, panics and analyses come back in the
//! usual postcard answer. `RPT_PLUGIN_TRANSPORT=flat` forces the flat form.

use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::LazyLock;

use std::collections::BTreeSet;

use rpt_ir::{BlockData, Function, GuestAddr, HelperDecl, Inst, Program, StateDesc, Terminator};

use super::export::panic_message;
use super::wire::{Fault, encode_answer};
use crate::{
    BatchContext, Discovery, GuestImage, GuestOptions, GuestPlugin, LiftResult, PassError, PassParams, PassPlugin,
    ProgramAnalysis, Seeds,
};

/// `call_shared` method: run the pass over a [`RunRequest`].
pub(crate) const METHOD_RUN: u8 = 1;
/// `call_shared` method: analyse the program of an [`AnalyzeRequest`].
pub(crate) const METHOD_ANALYZE: u8 = 2;
/// `call_shared` method: a guest's discovery, [`DiscoverRequest`].
pub(crate) const METHOD_DISCOVER: u8 = 3;
/// `call_shared` method: a guest's lifting of one function, [`LiftRequest`].
pub(crate) const METHOD_LIFT: u8 = 4;

/// What a run request answers: the index and error of the first function that failed.
pub(crate) type RunResult = Result<(), (usize, PassError)>;

/// What an analysis request answers.
pub(crate) type AnalyzeResult = Result<Option<ProgramAnalysis>, PassError>;

static LAYOUT_KEY: LazyLock<String> = LazyLock::new(|| {
    use std::mem::{align_of, size_of};
    // A cheap second check on top of the digests: the sizes and alignments of what crosses.
    let shapes = [
        (size_of::<Function>(), align_of::<Function>()),
        (size_of::<BlockData>(), align_of::<BlockData>()),
        (size_of::<Inst>(), align_of::<Inst>()),
        (size_of::<Terminator>(), align_of::<Terminator>()),
        (size_of::<Program>(), align_of::<Program>()),
        (size_of::<StateDesc>(), align_of::<StateDesc>()),
        (size_of::<HelperDecl>(), align_of::<HelperDecl>()),
        (size_of::<PassParams>(), align_of::<PassParams>()),
        (size_of::<RunRequest<'_>>(), align_of::<RunRequest<'_>>()),
        (size_of::<AnalyzeRequest<'_>>(), align_of::<AnalyzeRequest<'_>>()),
        (size_of::<LiftRequest<'_>>(), align_of::<LiftRequest<'_>>()),
        (size_of::<DiscoverRequest<'_>>(), align_of::<DiscoverRequest<'_>>()),
        (size_of::<GuestImage>(), align_of::<GuestImage>()),
    ];
    let shapes: Vec<String> = shapes.iter().map(|(size, align)| format!("{size}/{align}")).collect();
    format!(
        "ir {} api {} shapes {}",
        rpt_ir::LAYOUT_DIGEST,
        env!("RPT_SOURCE_HASH"),
        shapes.join(",")
    )
});

/// This build's layout key: equal keys on both sides of the boundary mean every type that
/// crosses in a shared-layout request is laid out the same way.
pub fn layout_key() -> &'static str {
    &LAYOUT_KEY
}

/// A pass run over the host's functions, in place.
pub(crate) struct RunRequest<'a> {
    /// The functions, as the host holds them.
    pub funcs: &'a mut [Function],
    /// Their context and facts.
    pub batch: BatchContext<'a>,
    /// The pass's parameters.
    pub params: &'a PassParams,
}

/// A whole-program analysis of the host's program, read in place.
pub(crate) struct AnalyzeRequest<'a> {
    /// The program.
    pub program: &'a Program,
    /// The pass's parameters.
    pub params: &'a PassParams,
}

/// A guest's discovery over the host's image; the plugin leaves the result in `out`.
pub(crate) struct DiscoverRequest<'a> {
    /// The image.
    pub image: &'a GuestImage,
    /// Where discovery starts.
    pub seeds: &'a Seeds,
    /// The answer, moved into the host's memory (one heap on both sides).
    pub out: Option<Discovery>,
}

/// A guest's lifting of one function of the host's image; the plugin leaves the result in `out`.
pub(crate) struct LiftRequest<'a> {
    /// The image.
    pub image: &'a GuestImage,
    /// The function's entry.
    pub entry: GuestAddr,
    /// Every function discovery found.
    pub functions: &'a BTreeSet<GuestAddr>,
    /// The guest's options.
    pub options: &'a GuestOptions,
    /// The answer, moved into the host's memory.
    pub out: Option<LiftResult>,
}

/// Runs `answer` with panics caught, as the answer to a shared-layout request.
fn serve_shared(answer: impl FnOnce() -> Vec<u8>) -> Vec<u8> {
    catch_unwind(AssertUnwindSafe(answer))
        .unwrap_or_else(|payload| encode_answer::<()>(&Err(Fault::Panic(panic_message(payload.as_ref())))))
}

/// Answers a shared-layout request to a pass plugin; the `export_pass!` macro calls this.
///
/// # Safety
/// `request` points to the request of `method` built by a host whose [`layout_key`] equals this
/// build's, live for the duration of the call.
pub unsafe fn serve_pass_shared<P: PassPlugin>(pass: &P, method: u8, request: *mut c_void) -> Vec<u8> {
    serve_shared(|| match method {
        METHOD_RUN => {
            // Safety: the caller's contract.
            let request = unsafe { &mut *request.cast::<RunRequest<'_>>() };
            encode_answer(&Ok(pass.run_all(request.funcs, &request.batch, request.params)))
        }
        METHOD_ANALYZE => {
            // Safety: the caller's contract.
            let request = unsafe { &*request.cast::<AnalyzeRequest<'_>>() };
            encode_answer(&Ok(pass.analyze(request.program, request.params)))
        }
        _ => encode_answer::<()>(&Err(Fault::WrongKind)),
    })
}

/// Answers a shared-layout request to a guest plugin; the `export_guest!` macro calls this.
///
/// # Safety
/// As for [`serve_pass_shared`].
pub unsafe fn serve_guest_shared<G: GuestPlugin>(guest: &G, method: u8, request: *mut c_void) -> Vec<u8> {
    serve_shared(|| match method {
        METHOD_DISCOVER => {
            // Safety: the caller's contract.
            let request = unsafe { &mut *request.cast::<DiscoverRequest<'_>>() };
            request.out = Some(guest.discover(request.image, request.seeds));
            encode_answer(&Ok(()))
        }
        METHOD_LIFT => {
            // Safety: the caller's contract.
            let request = unsafe { &mut *request.cast::<LiftRequest<'_>>() };
            request.out = Some(guest.lift(request.image, request.entry, request.functions, request.options));
            encode_answer(&Ok(()))
        }
        _ => encode_answer::<()>(&Err(Fault::WrongKind)),
    })
}

/// The shared-layout entry of a host plugin, which has no shared-layout requests.
///
/// # Safety
/// None needed: the request is not read.
pub unsafe fn refuse_shared<T: ?Sized>(_: &T, _method: u8, _request: *mut c_void) -> Vec<u8> {
    encode_answer::<()>(&Err(Fault::WrongKind))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use rpt_ir::{Function, GuestAddr};

    use super::*;
    use crate::abi::wire::{Answer, decode};
    use crate::{FunctionContext, PluginInfo};

    /// Moves the entry of odd functions up by one; panics on the entry 0xdead.
    struct BumpOdd;

    impl PassPlugin for BumpOdd {
        fn info(&self) -> PluginInfo {
            PluginInfo {
                name: "bump-odd".into(),
                version: "0".into(),
                hash: String::new(),
            }
        }

        fn check_params(&self, _: &PassParams) -> Result<(), PassError> {
            Ok(())
        }

        fn run(&self, func: &mut Function, _: &FunctionContext<'_>, _: &PassParams) -> Result<(), PassError> {
            assert!(func.entry.0 != 0xdead, "bump-odd cannot stand 0xdead");
            if func.entry.0 % 2 == 1 {
                func.entry.0 += 1;
                // Grows a vector the host allocated, as passes do.
                func.new_block();
            }
            Ok(())
        }
    }

    fn serve_run(funcs: &mut [Function]) -> Answer<RunResult> {
        let state = StateDesc::new();
        let helpers = BTreeMap::new();
        let params = PassParams::new();
        let mut request = RunRequest {
            funcs,
            batch: BatchContext {
                state: &state,
                helpers: &helpers,
                facts: &[],
            },
            params: &params,
        };
        // Safety: a request of this build, live for the call.
        let answer = unsafe { serve_pass_shared(&BumpOdd, METHOD_RUN, std::ptr::from_mut(&mut request).cast()) };
        decode(&answer).expect("the answer decodes")
    }

    #[test]
    fn a_run_changes_the_hosts_functions_in_place() {
        let mut funcs: Vec<Function> = [0x11, 0x12].map(|a| Function::new(GuestAddr(a))).into();
        assert_eq!(serve_run(&mut funcs), Ok(Ok(())));
        assert_eq!(funcs[0].entry, GuestAddr(0x12));
        assert_eq!(funcs[0].blocks.len(), 1);
        assert_eq!(funcs[1], Function::new(GuestAddr(0x12)));
    }

    #[test]
    fn a_panic_in_the_pass_is_an_answer() {
        let mut funcs = vec![Function::new(GuestAddr(0xdead))];
        let answer = serve_run(&mut funcs);
        assert!(
            matches!(&answer, Err(Fault::Panic(m)) if m.contains("cannot stand 0xdead")),
            "{answer:?}"
        );
    }

    #[test]
    fn a_method_of_another_kind_is_refused() {
        // Safety: the method is refused before the request is read.
        let answer = unsafe { serve_pass_shared(&BumpOdd, METHOD_LIFT, std::ptr::null_mut()) };
        let answer: Answer<()> = decode(&answer).expect("the answer decodes");
        assert_eq!(answer, Err(Fault::WrongKind));
    }

    #[test]
    fn the_layout_key_names_the_ir_build_and_the_shapes() {
        assert!(layout_key().contains(rpt_ir::LAYOUT_DIGEST));
        assert!(layout_key().contains("rustc "), "{}", layout_key());
        assert!(layout_key().contains(&format!("{}/", std::mem::size_of::<Function>())));
    }
}
