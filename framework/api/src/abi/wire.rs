//! The byte format of plugin calls: postcard encodings of [`Request`] and of each answer.
//!
//! The host encodes a request from borrowed data ([`Cow::Borrowed`]), the plugin decodes it into
//! owned data, and the answer comes back as `Result<T, Fault>` where `T` is the return type of
//! the trait method the request stands for. Postcard writes integers as varints and no field
//! names, which suits the small, varied data of most calls.
//!
//! IR functions are the exception: a pass over a program carries millions of instructions, and
//! serde's generic path costs hundreds of host instructions per IR instruction. So
//! [`Request::RunPass`] and its answer carry a [`FlatFunctions`] marker in the envelope, and the
//! functions follow the envelope in the same buffer as a [`flat`](super::flat) batch
//! ([`encode_with_batch`], [`split_envelope`]).

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use rpt_ir::{Function, GuestAddr, HelperDecl, Program, StateDesc};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::{GuestImage, GuestOptions, PassParams, Seeds};

/// A guest image as a request carries it: whole the first time, by number afterwards, so that
/// lifting thousands of functions does not send the image thousands of times.
#[derive(Debug, Serialize, Deserialize)]
pub enum ImageRef<'a> {
    /// The image, which the plugin keeps under this number for later requests.
    Full(u64, Cow<'a, GuestImage>),
    /// An image sent before under this number.
    Cached(u64),
}

/// A [`Program`] without its functions, which follow the envelope as a flat batch in the order
/// of `keys`.
#[derive(Debug, Serialize, Deserialize)]
pub struct ProgramHead<'a> {
    /// The guest's register file.
    pub state: Cow<'a, StateDesc>,
    /// The runtime helpers.
    pub helpers: Cow<'a, BTreeMap<String, HelperDecl>>,
    /// The externs.
    pub externs: Cow<'a, BTreeMap<GuestAddr, String>>,
    /// The address-taken functions.
    pub address_taken: Cow<'a, BTreeSet<GuestAddr>>,
    /// The flag-transparent externs.
    pub flag_transparent: Cow<'a, BTreeSet<GuestAddr>>,
    /// The image's tables of function addresses.
    pub pointer_tables: Cow<'a, BTreeMap<GuestAddr, Vec<GuestAddr>>>,
    /// The key of each function of the batch, in order.
    pub keys: Vec<GuestAddr>,
}

impl<'a> ProgramHead<'a> {
    /// The head of `program` and its functions in key order, for [`encode_with_batch`].
    pub fn split(program: &'a Program) -> (ProgramHead<'a>, Vec<&'a Function>) {
        let head = ProgramHead {
            state: Cow::Borrowed(&program.state),
            helpers: Cow::Borrowed(&program.helpers),
            externs: Cow::Borrowed(&program.externs),
            address_taken: Cow::Borrowed(&program.address_taken),
            flag_transparent: Cow::Borrowed(&program.flag_transparent),
            pointer_tables: Cow::Borrowed(&program.pointer_tables),
            keys: program.functions.keys().copied().collect(),
        };
        (head, program.functions.values().collect())
    }

    /// The program again, from the decoded batch.
    pub fn join(self, functions: Vec<Function>) -> Program {
        Program {
            state: self.state.into_owned(),
            helpers: self.helpers.into_owned(),
            externs: self.externs.into_owned(),
            functions: self.keys.into_iter().zip(functions).collect(),
            address_taken: self.address_taken.into_owned(),
            flag_transparent: self.flag_transparent.into_owned(),
            pointer_tables: self.pointer_tables.into_owned(),
        }
    }
}

/// The guest state and helpers of a pass request: whole the first time, by number afterwards.
/// Core calls a pass once per function, and encoding and decoding the state each time would
/// cost more than the function itself.
#[derive(Debug, Serialize, Deserialize)]
pub enum ContextRef<'a> {
    /// The state and helpers, which the plugin keeps under this number for later requests.
    Full(u64, Cow<'a, StateDesc>, Cow<'a, BTreeMap<String, HelperDecl>>),
    /// A context sent before under this number.
    Cached(u64),
}

/// One call of a plugin method.
#[derive(Debug, Serialize, Deserialize)]
pub enum Request<'a> {
    /// `info()` of any plugin.
    Info,
    /// [`PassPlugin::check_params`](crate::PassPlugin::check_params).
    CheckParams(Cow<'a, PassParams>),
    /// [`PassPlugin::analyze`](crate::PassPlugin::analyze): the program's functions follow the
    /// envelope as a flat batch.
    Analyze {
        /// The whole program but its functions.
        program: ProgramHead<'a>,
        /// The pass's parameters.
        params: Cow<'a, PassParams>,
    },
    /// [`PassPlugin::codegen`](crate::PassPlugin::codegen).
    Codegen(Cow<'a, PassParams>),
    /// [`PassPlugin::run_all`](crate::PassPlugin::run_all): the functions come back transformed.
    RunPass {
        /// The guest state and the program's helpers.
        context: ContextRef<'a>,
        /// Each function's facts from the pass's analysis, by position.
        facts: Cow<'a, [Vec<u8>]>,
        /// The pass's parameters.
        params: Cow<'a, PassParams>,
        /// The functions to transform, as a flat batch after the envelope.
        functions: FlatFunctions,
    },
    /// [`GuestPlugin::check_options`](crate::GuestPlugin::check_options).
    CheckOptions(Cow<'a, GuestOptions>),
    /// [`GuestPlugin::state`](crate::GuestPlugin::state).
    State(Cow<'a, GuestOptions>),
    /// [`GuestPlugin::helpers`](crate::GuestPlugin::helpers).
    Helpers(Cow<'a, GuestOptions>),
    /// [`GuestPlugin::memory_model`](crate::GuestPlugin::memory_model).
    MemoryModel {
        /// The platform.
        platform: Cow<'a, str>,
        /// The guest options.
        options: Cow<'a, GuestOptions>,
    },
    /// [`GuestPlugin::platforms`](crate::GuestPlugin::platforms).
    Platforms,
    /// [`GuestPlugin::convert_image`](crate::GuestPlugin::convert_image).
    ConvertImage(Cow<'a, [u8]>),
    /// [`GuestPlugin::load`](crate::GuestPlugin::load).
    Load {
        /// The image file's bytes.
        image: Cow<'a, [u8]>,
        /// The platform.
        platform: Cow<'a, str>,
        /// The guest options.
        options: Cow<'a, GuestOptions>,
    },
    /// [`GuestPlugin::externs`](crate::GuestPlugin::externs).
    Externs {
        /// The image.
        image: ImageRef<'a>,
        /// The platform.
        platform: Cow<'a, str>,
    },
    /// [`GuestPlugin::discover`](crate::GuestPlugin::discover).
    Discover {
        /// The image.
        image: ImageRef<'a>,
        /// The recipe's seeds.
        seeds: Cow<'a, Seeds>,
    },
    /// [`GuestPlugin::lift`](crate::GuestPlugin::lift).
    Lift {
        /// The image.
        image: ImageRef<'a>,
        /// The function to lift.
        entry: GuestAddr,
        /// Every discovered function.
        functions: Cow<'a, BTreeSet<GuestAddr>>,
        /// The guest options.
        options: Cow<'a, GuestOptions>,
    },
    /// [`GuestPlugin::lift_uncovered`](crate::GuestPlugin::lift_uncovered).
    LiftUncovered {
        /// The image.
        image: ImageRef<'a>,
        /// Every discovered function.
        functions: Cow<'a, BTreeSet<GuestAddr>>,
        /// Every instruction of the lifted functions.
        covered: Cow<'a, BTreeSet<GuestAddr>>,
        /// The guest options.
        options: Cow<'a, GuestOptions>,
    },
    /// [`GuestPlugin::runtime_sources`](crate::GuestPlugin::runtime_sources).
    RuntimeSources {
        /// The platform.
        platform: Cow<'a, str>,
        /// The guest options.
        options: Cow<'a, GuestOptions>,
    },
    /// [`HostPlugin::desc`](crate::HostPlugin::desc).
    HostDesc,
    /// [`HostPlugin::cpu_models`](crate::HostPlugin::cpu_models).
    CpuModels,
    /// [`HostPlugin::compiler`](crate::HostPlugin::compiler).
    Compiler,
    /// [`HostPlugin::environment`](crate::HostPlugin::environment).
    Environment,
    /// [`HostPlugin::requirements`](crate::HostPlugin::requirements).
    Requirements,
    /// [`HostPlugin::runner`](crate::HostPlugin::runner).
    Runner,
}

/// Stands in an envelope for the [`flat`](super::flat) batch of functions that follows it in the
/// same buffer: a [`Request::RunPass`] carries every function in full, its answer
/// (`Answer<Result<FlatFunctions, (usize, PassError)>>`) marks those the pass left unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlatFunctions {
    /// How many functions the batch holds.
    pub count: u64,
}

/// What a [`Request::RunPass`] answers in its envelope; the functions follow it.
pub type RunPassAnswer = Answer<Result<FlatFunctions, (usize, crate::PassError)>>;

/// Why a call produced no answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Fault {
    /// The plugin panicked; the panic message.
    Panic(String),
    /// The plugin could not decode the request (a wire-format mismatch that the version check
    /// did not catch).
    BadRequest(String),
    /// A request of another kind of plugin (a guest request sent to a pass).
    WrongKind,
    /// A [`ImageRef::Cached`] image the plugin does not hold (any more); the host resends it.
    UnknownImage(u64),
    /// A [`ContextRef::Cached`] context the plugin does not hold (any more); the host resends it.
    UnknownContext(u64),
}

/// What a call returns: the method's result or why there is none.
pub type Answer<T> = Result<T, Fault>;

/// Encodes a value; postcard cannot fail on the types of this crate except by running out of
/// memory, and a failure is reported rather than assumed away.
pub fn encode<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, String> {
    postcard::to_stdvec(value).map_err(|e| e.to_string())
}

/// Decodes a value written by [`encode`].
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    postcard::from_bytes(bytes).map_err(|e| e.to_string())
}

/// Encodes an envelope followed by the flat batch of `functions`, in one buffer that is allocated
/// once at its final size.
pub fn encode_with_batch<T: Serialize + ?Sized, F: std::borrow::Borrow<Function>>(
    envelope: &T,
    functions: &[F],
) -> Result<Vec<u8>, String> {
    let mut out = encode(envelope)?;
    super::flat::encode_batch_into(functions, &mut out);
    Ok(out)
}

/// Decodes the envelope at the start of `bytes` and returns it with the bytes after it (the flat
/// batch of a request or answer that has one, nothing otherwise).
pub fn split_envelope<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Result<(T, &'a [u8]), String> {
    postcard::take_from_bytes(bytes).map_err(|e| e.to_string())
}

/// Encodes an answer; if the answer itself cannot be encoded, the encoding of that fault.
pub fn encode_answer<T: Serialize>(answer: &Answer<T>) -> Vec<u8> {
    encode(answer).unwrap_or_else(|e| {
        let fault: Answer<()> = Err(Fault::BadRequest(format!("the answer cannot be encoded: {e}")));
        encode(&fault).unwrap_or_default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpt_ir::{Slot, SlotLayout, SlotRole, Type};

    #[test]
    fn a_pass_request_round_trips() {
        let mut state = StateDesc::new();
        state
            .add(Slot {
                name: "eax".into(),
                ty: Type::I32,
                role: SlotRole::Gpr,
                layout: SlotLayout::Plain,
            })
            .expect("slot");
        let function = Function::new(GuestAddr(0x401000));
        let params = PassParams::new();
        let helpers = BTreeMap::new();
        let request = Request::RunPass {
            context: ContextRef::Full(1, Cow::Borrowed(&state), Cow::Borrowed(&helpers)),
            facts: Cow::Owned(vec![vec![1, 2, 3]]),
            params: Cow::Borrowed(&params),
            functions: FlatFunctions { count: 1 },
        };
        let bytes = encode_with_batch(&request, std::slice::from_ref(&function)).expect("encodes");
        let (
            Request::RunPass {
                context: ContextRef::Full(1, s, _),
                functions,
                ..
            },
            batch,
        ) = split_envelope(&bytes).expect("decodes")
        else {
            panic!("another request came back");
        };
        assert_eq!(*s, state);
        assert_eq!(functions, FlatFunctions { count: 1 });
        assert_eq!(
            crate::abi::flat::decode_batch(batch, 1).expect("the batch decodes"),
            vec![function]
        );
    }

    #[test]
    fn a_state_with_a_duplicate_slot_is_refused_when_decoded() {
        let slot = Slot {
            name: "r3".into(),
            ty: Type::I32,
            role: SlotRole::Gpr,
            layout: SlotLayout::Plain,
        };
        let bytes = encode(&vec![slot.clone(), slot]).expect("encodes");
        // postcard keeps only "Serde Deserialization Error" of the message; what matters is that
        // the state is refused.
        assert!(decode::<StateDesc>(&bytes).is_err());
    }

    #[test]
    fn a_truncated_buffer_is_an_error_not_a_panic() {
        let bytes = encode(&Request::CheckParams(Cow::Owned(PassParams::new()))).expect("encodes");
        assert!(decode::<Request<'_>>(&bytes[..bytes.len() - 1]).is_err());
    }
}
