//! The host side: load a plugin library, check it, and wrap it in the plugin traits.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use abi_stable::library::{LibraryError, lib_header_from_path};
use abi_stable::std_types::RSlice;
use rpt_ir::{Function, GuestAddr, HelperDecl, Program, StateDesc};
use serde::de::DeserializeOwned;

use super::flat;
use super::shared::{self, AnalyzeRequest, AnalyzeResult, DiscoverRequest, LiftRequest, RunRequest, RunResult};
use super::wire::{
    Answer, ContextRef, Fault, FlatFunctions, ImageRef, ProgramHead, Request, RunPassAnswer, decode, encode,
    encode_with_batch, split_envelope,
};
use super::{API_VERSION, PluginKind, PluginModuleRef, WIRE_VERSION};
use crate::{
    BatchContext, CEnvironment, Codegen, CompilerSettings, CpuModel, Discovery, Externs, FunctionContext, GuestError,
    GuestImage, GuestOptions, GuestPlugin, HostDesc, HostPlugin, LiftResult, MemoryModel, PassError, PassParams,
    PassPlugin, PluginInfo, ProgramAnalysis, Requirement, Runner, Seeds, SourceFile,
};

/// Why a plugin library could not be loaded. Every message names the library file.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file is missing or is not a loadable library.
    #[error("{path}: cannot load the plugin library: {message}")]
    Open {
        /// The library.
        path: PathBuf,
        /// The loader's message.
        message: String,
    },
    /// The library loads but exports no rpt plugin (it is not built with an `export_*!` macro).
    #[error(
        "{path}: not an rpt plugin: the library does not export the symbol `{symbol}` (build it with rpt_api::export_pass!, export_guest! or export_host!)"
    )]
    MissingSymbol {
        /// The library.
        path: PathBuf,
        /// The symbol that is missing.
        symbol: String,
    },
    /// abi_stable refused the library: its root module has another layout, or it was built with
    /// an incompatible abi_stable or rpt-api version.
    #[error("{path}: the plugin was built against an incompatible rpt plugin interface: {message}")]
    Incompatible {
        /// The library.
        path: PathBuf,
        /// abi_stable's explanation.
        message: String,
    },
    /// The plugin declares another API or wire-format version than this rpt.
    #[error(
        "plugin `{name}` ({path}) was built against rpt plugin API {api} (wire format {wire}), but this rpt \
         speaks API {API_VERSION} (wire format {WIRE_VERSION}); rebuild the plugin against this rpt's rpt-api"
    )]
    Version {
        /// The plugin's name.
        name: String,
        /// The library.
        path: PathBuf,
        /// Its API version.
        api: u32,
        /// Its wire-format version.
        wire: u32,
    },
    /// The plugin failed to say who it is.
    #[error("plugin `{name}` ({path}): {fault}")]
    Info {
        /// The plugin's name as its module gives it.
        name: String,
        /// The library.
        path: PathBuf,
        /// What went wrong.
        fault: String,
    },
    /// `RPT_PLUGIN_TRANSPORT` names no transport.
    #[error("RPT_PLUGIN_TRANSPORT is `{value}`; it can be `flat` (always the flat form) or `shared` (the default)")]
    Transport {
        /// The variable's value.
        value: String,
    },
    /// The library's file could not be read to hash it.
    #[error("{path}: cannot read the plugin library: {source}")]
    Read {
        /// The library.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// A plugin loaded from a library, as the trait it implements.
#[derive(Clone)]
pub enum LoadedPlugin {
    /// A guest.
    Guest(Arc<dyn GuestPlugin>),
    /// A host.
    Host(Arc<dyn HostPlugin>),
    /// A pass.
    Pass(Arc<dyn PassPlugin>),
}

impl LoadedPlugin {
    /// The plugin's identity; its hash is the library file's sha256.
    pub fn info(&self) -> PluginInfo {
        match self {
            LoadedPlugin::Guest(g) => g.info(),
            LoadedPlugin::Host(h) => h.info(),
            LoadedPlugin::Pass(p) => p.info(),
        }
    }

    /// `guest`, `host` or `pass`.
    pub fn kind(&self) -> PluginKind {
        match self {
            LoadedPlugin::Guest(_) => PluginKind::Guest,
            LoadedPlugin::Host(_) => PluginKind::Host,
            LoadedPlugin::Pass(_) => PluginKind::Pass,
        }
    }
}

/// A call that produced no answer, with the plugin it concerns.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("plugin `{plugin}` ({path}) {what} in {method}")]
pub struct PluginFault {
    /// The plugin's name.
    pub plugin: String,
    /// Its library.
    pub path: String,
    /// The trait method that was called.
    pub method: &'static str,
    /// What happened, as a phrase (`panicked: index out of bounds`).
    pub what: String,
}

/// The last fault of a plugin method that has no way to return an error (`GuestPlugin::lift`,
/// `HostPlugin::desc`): such a fault unwinds the calling thread after recording itself here, and
/// the command's top level, which catches the unwind, reports it by name.
static LAST_FAULT: Mutex<Option<PluginFault>> = Mutex::new(None);

/// Takes the fault recorded by the last plugin call that had to unwind, if any.
pub fn take_fault() -> Option<PluginFault> {
    LAST_FAULT.lock().unwrap_or_else(|p| p.into_inner()).take()
}

fn unwind_with(fault: PluginFault) -> ! {
    let message = fault.to_string();
    *LAST_FAULT.lock().unwrap_or_else(|p| p.into_inner()) = Some(fault);
    std::panic::resume_unwind(Box::new(message))
}

/// One loaded library: its checked root module and the identity it reported.
struct Library {
    module: PluginModuleRef,
    path: PathBuf,
    info: PluginInfo,
}

impl Library {
    fn fault(&self, method: &'static str, what: String) -> PluginFault {
        PluginFault {
            plugin: self.info.name.clone(),
            path: self.path.display().to_string(),
            method,
            what,
        }
    }

    /// Sends a request and decodes the answer as `T`.
    fn call<T: DeserializeOwned>(&self, method: &'static str, request: &Request<'_>) -> Result<T, PluginFault> {
        let bytes = encode(request).map_err(|e| self.fault(method, format!("could not be sent a request: {e}")))?;
        self.call_bytes(method, &bytes)
    }

    /// Sends an encoded request and decodes the answer as `T`.
    fn call_bytes<T: DeserializeOwned>(&self, method: &'static str, bytes: &[u8]) -> Result<T, PluginFault> {
        call_raw(self.module, bytes)
            .map_err(|e| self.fault(method, format!("sent an answer that does not decode: {e}")))?
            .map_err(|fault| self.fault(method, describe(&fault)))
    }

    /// Sends a shared-layout request (see `shared`) and decodes the answer as `T`.
    ///
    /// # Safety
    /// The library's layout key is this build's, and `request` is the request type of `method`.
    unsafe fn call_shared<T: DeserializeOwned, R>(
        &self,
        name: &'static str,
        method: u8,
        request: &mut R,
    ) -> Result<T, PluginFault> {
        // Safety: the caller's contract; the request outlives the call, and the plugin, which
        // allocates from the same heap, may change what it refers to in place.
        let answer = unsafe { (self.module.call_shared())(method, std::ptr::from_mut(request).cast()) };
        let answer: Answer<T> = decode(answer.as_slice())
            .map_err(|e| self.fault(name, format!("sent an answer that does not decode: {e}")))?;
        answer.map_err(|fault| self.fault(name, describe(&fault)))
    }

    /// The result a shared-layout request of a method that cannot fail left in its `out`; a fault,
    /// or an answer without a result, unwinds.
    fn take_shared_out<T>(&self, method: &'static str, answer: Result<(), PluginFault>, out: Option<T>) -> T {
        match (answer, out) {
            (Ok(()), Some(result)) => result,
            (Err(fault), _) => unwind_with(fault),
            (Ok(()), None) => unwind_with(self.fault(method, "answered without a result".into())),
        }
    }

    /// Like [`Library::call`], for methods that cannot return an error: a fault unwinds.
    fn call_or_unwind<T: DeserializeOwned>(&self, method: &'static str, request: &Request<'_>) -> T {
        self.call(method, request).unwrap_or_else(|fault| unwind_with(fault))
    }
}

fn call_raw<T: DeserializeOwned>(module: PluginModuleRef, request: &[u8]) -> Result<Answer<T>, String> {
    let answer = (module.call())(RSlice::from_slice(request));
    decode(answer.as_slice())
}

fn describe(fault: &Fault) -> String {
    match fault {
        Fault::Panic(message) => format!("panicked: {message}"),
        Fault::BadRequest(message) => format!("could not read rpt's request ({message})"),
        Fault::WrongKind => "was sent a request for another kind of plugin".to_string(),
        Fault::UnknownImage(id) => format!("lost guest image {id}"),
        Fault::UnknownContext(id) => format!("lost pass context {id}"),
    }
}

/// Loads the plugin library at `path` on its own (not through abi_stable's per-type module cache,
/// which would hand back the first library for every later one), checks its layout and versions,
/// asks for its identity and wraps it in the trait it implements.
///
/// The identity's hash is the sha256 of the library file, so manifests pin the exact build.
/// Libraries are never unloaded: code of a plugin may still be referenced by values it returned.
pub fn load(path: &Path) -> Result<LoadedPlugin, LoadError> {
    load_with(path, wanted_transport()?).map(|(plugin, _)| plugin)
}

/// The transport `RPT_PLUGIN_TRANSPORT` asks for: [`Transport::Flat`] for `flat`,
/// [`Transport::Shared`] (where the plugin allows it) for `shared` or when it is not set.
pub fn wanted_transport() -> Result<Transport, LoadError> {
    match std::env::var("RPT_PLUGIN_TRANSPORT") {
        Err(_) => Ok(Transport::Shared),
        Ok(value) if value == "shared" => Ok(Transport::Shared),
        Ok(value) if value == "flat" => Ok(Transport::Flat),
        Ok(value) => Err(LoadError::Transport { value }),
    }
}

/// How a pass plugin's requests carry IR.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// In place, when the plugin's layout key is the host's (see `shared`); the flat form
    /// otherwise.
    Shared,
    /// Always the [`flat`] form.
    Flat,
}

/// Like [`load`], with the transport given rather than read from `RPT_PLUGIN_TRANSPORT`; also
/// says which transport the plugin's IR-carrying requests will use (a pass's runs and analyses,
/// a guest's discovery and lifting; [`Transport::Flat`] for hosts, which carry no IR).
pub fn load_with(path: &Path, wanted: Transport) -> Result<(LoadedPlugin, Transport), LoadError> {
    let bytes = std::fs::read(path).map_err(|source| LoadError::Read {
        path: path.to_owned(),
        source,
    })?;
    let hash = sha256_hex(&bytes);
    let header = lib_header_from_path(path).map_err(|e| library_error(path, e))?;
    let module = header
        .init_root_module::<PluginModuleRef>()
        .map_err(|e| library_error(path, e))?;
    let name = (module.name())().to_string();
    if module.api_version() != API_VERSION || module.wire_version() != WIRE_VERSION {
        return Err(LoadError::Version {
            name,
            path: path.to_owned(),
            api: module.api_version(),
            wire: module.wire_version(),
        });
    }
    let info: PluginInfo = call_raw(module, &encode(&Request::Info).unwrap_or_default())
        .map_err(|e| LoadError::Info {
            name: name.clone(),
            path: path.to_owned(),
            fault: format!("its identity does not decode: {e}"),
        })?
        .map_err(|fault| LoadError::Info {
            name: name.clone(),
            path: path.to_owned(),
            fault: format!("{} in info", describe(&fault)),
        })?;
    let library = Arc::new(Library {
        module,
        path: path.to_owned(),
        info: PluginInfo { hash, ..info },
    });
    let shared = module.kind() != PluginKind::Host
        && wanted == Transport::Shared
        && (module.layout_key())().as_str() == shared::layout_key();
    let transport = if shared { Transport::Shared } else { Transport::Flat };
    let plugin = match module.kind() {
        PluginKind::Guest => LoadedPlugin::Guest(Arc::new(DynGuest {
            library,
            sent_image: Mutex::new(None),
            shared,
        })),
        PluginKind::Host => LoadedPlugin::Host(Arc::new(DynHost { library })),
        PluginKind::Pass => LoadedPlugin::Pass(Arc::new(DynPass {
            library,
            sent_context: Mutex::new(None),
            shared,
        })),
    };
    Ok((plugin, transport))
}

fn library_error(path: &Path, error: LibraryError) -> LoadError {
    match error {
        LibraryError::OpenError { .. } => LoadError::Open {
            path: path.to_owned(),
            message: error.to_string(),
        },
        LibraryError::GetSymbolError { .. } => LoadError::MissingSymbol {
            path: path.to_owned(),
            symbol: abi_stable::library::ROOT_MODULE_LOADER_NAME.to_string(),
        },
        other => LoadError::Incompatible {
            path: path.to_owned(),
            message: other.to_string(),
        },
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// A pass in a library. With the flat form, it remembers the last state and helpers it sent, so
/// that calling it once per function sends them once.
struct DynPass {
    library: Arc<Library>,
    sent_context: Mutex<Option<SentContext>>,
    /// The plugin has this build's layout key: requests go shared-layout (see `shared`).
    shared: bool,
}

/// A pass context as the plugin holds it, under its number.
struct SentContext {
    id: u64,
    state: StateDesc,
    helpers: BTreeMap<String, HelperDecl>,
}

/// Numbers contexts across every pass library of the process, so that two hosts of one library
/// (loaded twice, which gives the same library) never mistake each other's contexts.
static NEXT_CONTEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// Why a run request produced no functions.
enum RunFailure {
    /// The plugin no longer holds the context the request named; send it again.
    LostContext,
    /// Anything else, as `run_all` reports it.
    Failed((usize, PassError)),
}

impl DynPass {
    /// The number of the context the plugin already holds, if it is this one.
    fn cached_context(&self, batch: &BatchContext<'_>) -> Option<u64> {
        let sent = self.sent_context.lock().unwrap_or_else(|p| p.into_inner());
        sent.as_ref()
            .and_then(|s| (s.state == *batch.state && s.helpers == *batch.helpers).then_some(s.id))
    }

    /// Numbers a context and remembers it as the one the plugin holds.
    fn remember_context(&self, batch: &BatchContext<'_>) -> u64 {
        let id = NEXT_CONTEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        *self.sent_context.lock().unwrap_or_else(|p| p.into_inner()) = Some(SentContext {
            id,
            state: batch.state.clone(),
            helpers: batch.helpers.clone(),
        });
        id
    }

    /// One shared-layout run request: the plugin runs the pass on `funcs` in place.
    fn run_shared(
        &self,
        funcs: &mut [Function],
        batch: &BatchContext<'_>,
        params: &PassParams,
    ) -> Result<(), (usize, PassError)> {
        let mut request = RunRequest {
            funcs,
            batch: *batch,
            params,
        };
        // Safety: `shared` is set only when the layout keys agree; this is a run request.
        let answer = unsafe {
            self.library
                .call_shared::<RunResult, _>("run", shared::METHOD_RUN, &mut request)
        };
        answer.map_err(|fault| (0, PassError::Failed(fault.to_string())))?
    }

    /// One run request and its answer applied to `funcs`.
    fn run_once(
        &self,
        context: ContextRef<'_>,
        funcs: &mut [Function],
        batch: &BatchContext<'_>,
        params: &PassParams,
    ) -> Result<(), RunFailure> {
        let failed = |fault: PluginFault| RunFailure::Failed((0, PassError::Failed(fault.to_string())));
        let request = Request::RunPass {
            context,
            facts: Cow::Borrowed(batch.facts),
            params: Cow::Borrowed(params),
            functions: FlatFunctions {
                count: funcs.len() as u64,
            },
        };
        let bytes = encode_with_batch(&request, funcs)
            .map_err(|e| failed(self.library.fault("run", format!("could not be sent a request: {e}"))))?;
        let answer = (self.library.module.call())(RSlice::from_slice(&bytes));
        drop(bytes);
        let undecodable = |e: String| {
            failed(
                self.library
                    .fault("run", format!("sent an answer that does not decode: {e}")),
            )
        };
        let (head, rest): (RunPassAnswer, &[u8]) = split_envelope(answer.as_slice()).map_err(undecodable)?;
        let count = match head {
            Ok(Ok(count)) => count,
            Ok(Err(failure)) => return Err(RunFailure::Failed(failure)),
            Err(Fault::UnknownContext(_)) => return Err(RunFailure::LostContext),
            Err(fault) => return Err(failed(self.library.fault("run", describe(&fault)))),
        };
        if count.count != funcs.len() as u64 {
            return Err(failed(self.library.fault(
                "run",
                format!("returned {} functions for {}", count.count, funcs.len()),
            )));
        }
        // Only a whole answer is applied; functions marked unchanged keep the host's copy.
        let changed = flat::decode_answer(rest, funcs.len()).map_err(|e| undecodable(e.to_string()))?;
        for (slot, func) in funcs.iter_mut().zip(changed) {
            if let Some(func) = func {
                *slot = func;
            }
        }
        Ok(())
    }
}

impl PassPlugin for DynPass {
    fn info(&self) -> PluginInfo {
        self.library.info.clone()
    }

    fn check_params(&self, params: &PassParams) -> Result<(), PassError> {
        self.library
            .call::<Result<(), PassError>>("check_params", &Request::CheckParams(Cow::Borrowed(params)))
            .map_err(|fault| PassError::Failed(fault.to_string()))?
    }

    fn analyze(&self, program: &Program, params: &PassParams) -> Result<Option<ProgramAnalysis>, PassError> {
        let failed = |fault: PluginFault| PassError::Failed(fault.to_string());
        if self.shared {
            let mut request = AnalyzeRequest { program, params };
            // Safety: `shared` is set only when the layout keys agree; this is an analysis request.
            let answer = unsafe {
                self.library
                    .call_shared::<AnalyzeResult, _>("analyze", shared::METHOD_ANALYZE, &mut request)
            };
            return answer.map_err(failed)?;
        }
        let (head, functions) = ProgramHead::split(program);
        let request = Request::Analyze {
            program: head,
            params: Cow::Borrowed(params),
        };
        let bytes = encode_with_batch(&request, &functions).map_err(|e| {
            failed(
                self.library
                    .fault("analyze", format!("could not be sent a request: {e}")),
            )
        })?;
        self.library
            .call_bytes::<Result<Option<ProgramAnalysis>, PassError>>("analyze", &bytes)
            .map_err(failed)?
    }

    fn codegen(&self, params: &PassParams) -> Codegen {
        // `codegen` cannot fail; a plugin that cannot answer makes no code-generation choice, and
        // the fault is kept for the report at exit like any other.
        self.library
            .call::<Codegen>("codegen", &Request::Codegen(Cow::Borrowed(params)))
            .unwrap_or_default()
    }

    fn run(&self, func: &mut Function, cx: &FunctionContext<'_>, params: &PassParams) -> Result<(), PassError> {
        let facts = [cx.facts.to_vec()];
        let batch = BatchContext {
            state: cx.state,
            helpers: cx.helpers,
            facts: &facts,
        };
        self.run_all(std::slice::from_mut(func), &batch, params)
            .map_err(|(_, e)| e)
    }

    fn run_all(
        &self,
        funcs: &mut [Function],
        batch: &BatchContext<'_>,
        params: &PassParams,
    ) -> Result<(), (usize, PassError)> {
        let mut start = 0;
        while start < funcs.len() {
            let mut end = start;
            let mut insts = 0;
            while end < funcs.len() && (end == start || insts < CALL_INSTS) {
                insts += funcs[end].blocks.iter().map(|b| b.insts.len()).sum::<usize>();
                end += 1;
            }
            let chunk = BatchContext {
                state: batch.state,
                helpers: batch.helpers,
                facts: batch.facts.get(start..end.min(batch.facts.len())).unwrap_or(&[]),
            };
            self.run_call(&mut funcs[start..end], &chunk, params)
                .map_err(|(i, e)| (start + i, e))?;
            start = end;
        }
        Ok(())
    }
}

/// About how many IR instructions one call carries: a program-wide pass goes in calls of a few
/// hundred kilobytes each way, which stay in the caches, instead of one buffer of the whole
/// program, which is slower to write and read (fresh pages, main memory) and holds every function
/// twice at once. The FFI call itself costs nothing next to this.
const CALL_INSTS: usize = 1 << 12;

impl DynPass {
    /// Runs the pass over `funcs` in one call.
    fn run_call(
        &self,
        funcs: &mut [Function],
        batch: &BatchContext<'_>,
        params: &PassParams,
    ) -> Result<(), (usize, PassError)> {
        if self.shared {
            return self.run_shared(funcs, batch, params);
        }
        if let Some(id) = self.cached_context(batch) {
            match self.run_once(ContextRef::Cached(id), funcs, batch, params) {
                Ok(()) => return Ok(()),
                Err(RunFailure::Failed(failure)) => return Err(failure),
                // The plugin dropped the context: send it whole below.
                Err(RunFailure::LostContext) => {}
            }
        }
        let id = self.remember_context(batch);
        let context = ContextRef::Full(id, Cow::Borrowed(batch.state), Cow::Borrowed(batch.helpers));
        match self.run_once(context, funcs, batch, params) {
            Ok(()) => Ok(()),
            Err(RunFailure::Failed(failure)) => Err(failure),
            Err(RunFailure::LostContext) => Err((
                0,
                PassError::Failed(
                    self.library
                        .fault("run", "lost the pass context it was just sent".to_string())
                        .to_string(),
                ),
            )),
        }
    }
}

/// A guest in a library. It remembers the last image it sent, so lifting sends the image once.
struct DynGuest {
    library: Arc<Library>,
    sent_image: Mutex<Option<(u64, GuestImage)>>,
    /// The plugin has this build's layout key: discovery and lifting go shared-layout.
    shared: bool,
}

impl DynGuest {
    /// Calls with the image by number when the plugin already has it, whole otherwise (and again
    /// whole if the plugin has dropped it).
    fn call_with_image<'a, T: DeserializeOwned>(
        &self,
        method: &'static str,
        image: &'a GuestImage,
        request: impl Fn(ImageRef<'a>) -> Request<'a>,
    ) -> T {
        let cached = {
            let sent = self.sent_image.lock().unwrap_or_else(|p| p.into_inner());
            sent.as_ref().and_then(|(id, sent)| (sent == image).then_some(*id))
        };
        if let Some(id) = cached {
            match self.library.call(method, &request(ImageRef::Cached(id))) {
                Ok(answer) => return answer,
                Err(fault) if fault.what != describe(&Fault::UnknownImage(id)) => unwind_with(fault),
                Err(_) => {}
            }
        }
        let id = {
            let mut sent = self.sent_image.lock().unwrap_or_else(|p| p.into_inner());
            let id = sent.as_ref().map_or(1, |(id, _)| id + 1);
            *sent = Some((id, image.clone()));
            id
        };
        self.library
            .call_or_unwind(method, &request(ImageRef::Full(id, Cow::Borrowed(image))))
    }

    /// Sends a request of a method that answers `Result<T, GuestError>`; a fault becomes a
    /// [`GuestError::Plugin`] naming the plugin.
    fn call_fallible<T: serde::de::DeserializeOwned>(
        &self,
        method: &'static str,
        request: &Request<'_>,
    ) -> Result<T, GuestError> {
        self.library
            .call::<Result<T, GuestError>>(method, request)
            .map_err(|fault| GuestError::Plugin(fault.to_string()))?
    }
}

impl GuestPlugin for DynGuest {
    fn info(&self) -> PluginInfo {
        self.library.info.clone()
    }

    fn check_options(&self, options: &GuestOptions) -> Result<(), GuestError> {
        self.call_fallible("check_options", &Request::CheckOptions(Cow::Borrowed(options)))
    }

    fn state(&self, options: &GuestOptions) -> StateDesc {
        self.library
            .call_or_unwind("state", &Request::State(Cow::Borrowed(options)))
    }

    fn helpers(&self, options: &GuestOptions) -> Vec<HelperDecl> {
        self.library
            .call_or_unwind("helpers", &Request::Helpers(Cow::Borrowed(options)))
    }

    fn memory_model(&self, platform: &str, options: &GuestOptions) -> MemoryModel {
        let request = Request::MemoryModel {
            platform: Cow::Borrowed(platform),
            options: Cow::Borrowed(options),
        };
        self.library.call_or_unwind("memory_model", &request)
    }

    fn platforms(&self) -> Vec<String> {
        self.library.call_or_unwind("platforms", &Request::Platforms)
    }

    fn convert_image(&self, file: &[u8]) -> Result<Vec<u8>, GuestError> {
        self.call_fallible("convert_image", &Request::ConvertImage(Cow::Borrowed(file)))
    }

    fn load(&self, image: &[u8], platform: &str, options: &GuestOptions) -> Result<GuestImage, GuestError> {
        let request = Request::Load {
            image: Cow::Borrowed(image),
            platform: Cow::Borrowed(platform),
            options: Cow::Borrowed(options),
        };
        self.call_fallible("load", &request)
    }

    fn externs(&self, image: &GuestImage, platform: &str) -> Result<Externs, GuestError> {
        self.call_with_image("externs", image, |image| Request::Externs {
            image,
            platform: Cow::Borrowed(platform),
        })
    }

    fn discover(&self, image: &GuestImage, seeds: &Seeds) -> Discovery {
        if self.shared {
            let mut request = DiscoverRequest {
                image,
                seeds,
                out: None,
            };
            // Safety: `shared` is set only when the layout keys agree; this is a discovery request.
            let answer = unsafe {
                self.library
                    .call_shared::<(), _>("discover", shared::METHOD_DISCOVER, &mut request)
            };
            return self.library.take_shared_out("discover", answer, request.out);
        }
        self.call_with_image("discover", image, |image| Request::Discover {
            image,
            seeds: Cow::Borrowed(seeds),
        })
    }

    fn lift(
        &self,
        image: &GuestImage,
        entry: GuestAddr,
        functions: &BTreeSet<GuestAddr>,
        options: &GuestOptions,
    ) -> LiftResult {
        if self.shared {
            let mut request = LiftRequest {
                image,
                entry,
                functions,
                options,
                out: None,
            };
            // Safety: `shared` is set only when the layout keys agree; this is a lift request.
            let answer = unsafe {
                self.library
                    .call_shared::<(), _>("lift", shared::METHOD_LIFT, &mut request)
            };
            return self.library.take_shared_out("lift", answer, request.out);
        }
        self.call_with_image("lift", image, |image| Request::Lift {
            image,
            entry,
            functions: Cow::Borrowed(functions),
            options: Cow::Borrowed(options),
        })
    }

    fn lift_uncovered(
        &self,
        image: &GuestImage,
        functions: &BTreeSet<GuestAddr>,
        covered: &BTreeSet<GuestAddr>,
        options: &GuestOptions,
    ) -> Vec<LiftResult> {
        self.call_with_image("lift_uncovered", image, |image| Request::LiftUncovered {
            image,
            functions: Cow::Borrowed(functions),
            covered: Cow::Borrowed(covered),
            options: Cow::Borrowed(options),
        })
    }

    fn runtime_sources(&self, platform: &str, options: &GuestOptions) -> Result<Vec<SourceFile>, GuestError> {
        let request = Request::RuntimeSources {
            platform: Cow::Borrowed(platform),
            options: Cow::Borrowed(options),
        };
        self.call_fallible("runtime_sources", &request)
    }
}

/// A host in a library.
struct DynHost {
    library: Arc<Library>,
}

impl HostPlugin for DynHost {
    fn info(&self) -> PluginInfo {
        self.library.info.clone()
    }

    fn desc(&self) -> HostDesc {
        self.library.call_or_unwind("desc", &Request::HostDesc)
    }

    fn cpu_models(&self) -> Vec<CpuModel> {
        self.library.call_or_unwind("cpu_models", &Request::CpuModels)
    }

    fn compiler(&self) -> CompilerSettings {
        self.library.call_or_unwind("compiler", &Request::Compiler)
    }

    fn environment(&self) -> CEnvironment {
        self.library.call_or_unwind("environment", &Request::Environment)
    }

    fn requirements(&self) -> Vec<Requirement> {
        self.library.call_or_unwind("requirements", &Request::Requirements)
    }

    fn runner(&self) -> Runner {
        self.library.call_or_unwind("runner", &Request::Runner)
    }
}
