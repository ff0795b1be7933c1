//! The stable ABI of dynamically loaded plugins.
//!
//! A plugin is a `cdylib` crate that implements [`GuestPlugin`], [`HostPlugin`] or [`PassPlugin`]
//! and exports it with [`export_guest!`](crate::export_guest), [`export_host!`](crate::export_host)
//! or [`export_pass!`](crate::export_pass). The library exports one abi_stable root module,
//! [`PluginModule`]: the plugin's kind, its name, the API and wire-format versions it was built
//! against, its layout key, and two entry points, `call` (bytes) and `call_shared` (in place).
//!
//! Requests cross the boundary as bytes: a request is one buffer and the answer another, so a
//! call costs one FFI round trip however much IR it carries. A buffer starts with a postcard
//! envelope ([`wire`]); the functions of a pass request and of its answer follow it in the
//! [`flat`] form, fixed-width instruction records, and the answer marks the functions the pass did
//! not change so that they are not decoded again. A plugin built by the same compiler from the
//! same IR and API source as the host (the same [`layout_key`]) skips all of that: its pass runs
//! on the host's functions in place, and its guest lifts into the host's memory, through
//! `call_shared` (see `shared.rs`). The layout of the root module is checked by abi_stable when
//! the library is loaded, the versions and the layout key by [`load`]; a plugin that panics is
//! caught inside the library (a panic must not unwind through `extern "C"`) and reported with its
//! name.
//!
//! [`GuestPlugin`]: crate::GuestPlugin
//! [`HostPlugin`]: crate::HostPlugin
//! [`PassPlugin`]: crate::PassPlugin

// abi_stable's derive and its static tables are `unsafe impl`s and `unsafe` constructors; they are
// confined to this module and the export macros, whose safety abi_stable's own checks uphold.
#![allow(unsafe_code)]

mod export;
pub mod flat;
mod load;
mod shared;
pub mod wire;

use abi_stable::StableAbi;
use abi_stable::library::RootModule;
use abi_stable::sabi_types::VersionStrings;
use abi_stable::std_types::{RSlice, RStr, RVec};
use std::ffi::c_void;

pub use export::{serve_guest, serve_host, serve_pass};
pub use load::{LoadError, LoadedPlugin, PluginFault, Transport, load, load_with, take_fault, wanted_transport};
pub use shared::{layout_key, refuse_shared, serve_guest_shared, serve_pass_shared};

/// The version of the plugin interface: the traits, the data they exchange and this module.
/// A library built against another version is refused at load.
///
/// Version 2: `GuestPlugin::load` and `memory_model` take the platform and the guest options;
/// `GuestPlugin::convert_image`; `GuestPlugin::externs` answers `Externs` (the implemented and the
/// missing imports) instead of failing on a missing one.
/// Version 3: `GuestPlugin::lift_uncovered` (the run-time tier's instructions).
pub const API_VERSION: u32 = 3;

/// The version of the byte format requests and answers use. It changes whenever a type that
/// crosses the boundary (the IR included) changes shape, so that a plugin never decodes bytes
/// written for another layout.
///
/// Version 2: the functions of a pass request and its answer travel in the [`flat`] form after
/// the postcard envelope, and an answer marks the functions the pass left unchanged.
/// Version 3: the root module has `layout_key` and `call_shared`, the shared-layout transport.
/// Version 4: `Load` and `MemoryModel` requests carry the platform and the guest options; the
/// `ConvertImage` request.
/// Version 5: the IR's `ExitReason::Unliftable`; `Externs` answers carry the missing imports.
/// Version 6: `HelperDecl::touches`; `HostDesc::recommended_passes`; `Codegen::state_in_locals`.
/// Version 7: the IR's `InstKind::Kill` (flat tag 20); `Program::flag_transparent` and
/// `Externs::flag_transparent`.
/// Version 8: `Request::LiftUncovered` (`GuestPlugin::lift_uncovered`, the run-time tier).
pub const WIRE_VERSION: u32 = 8;

/// The symbol abi_stable looks up in a plugin library. The export macros must spell it out,
/// because a `macro_rules!` cannot build an identifier from a constant; a test checks that it is
/// the name abi_stable expects.
#[doc(hidden)]
#[macro_export]
macro_rules! __rpt_root_module_symbol {
    () => {
        "_1as_0lib_1header_0root_bmodule_bloader"
    };
}

/// What a plugin library provides.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, StableAbi)]
pub enum PluginKind {
    /// A [`GuestPlugin`](crate::GuestPlugin).
    Guest = 1,
    /// A [`HostPlugin`](crate::HostPlugin).
    Host = 2,
    /// A [`PassPlugin`](crate::PassPlugin).
    Pass = 3,
}

impl PluginKind {
    /// `guest`, `host` or `pass`, as manifests and messages name kinds.
    pub fn name(self) -> &'static str {
        match self {
            PluginKind::Guest => "guest",
            PluginKind::Host => "host",
            PluginKind::Pass => "pass",
        }
    }
}

/// The root module a plugin library exports.
///
/// New entries may be added after `call` in later API versions (abi_stable's prefix types keep
/// older libraries loadable); changing or removing one needs a new [`API_VERSION`].
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = PluginModuleRef)))]
#[sabi(missing_field(panic))]
pub struct PluginModule {
    /// The [`API_VERSION`] the plugin was built against.
    pub api_version: u32,
    /// The [`WIRE_VERSION`] the plugin was built against.
    pub wire_version: u32,
    /// What the plugin is.
    pub kind: PluginKind,
    /// The plugin's name (as recipes use it), for messages even when later checks fail.
    pub name: extern "C" fn() -> RStr<'static>,
    /// Answers one postcard-encoded [`wire::Request`] with a postcard-encoded answer.
    pub call: extern "C" fn(request: RSlice<'_, u8>) -> RVec<u8>,
    /// The plugin's [`layout_key`]: equal to the host's, it may be sent shared-layout requests.
    pub layout_key: extern "C" fn() -> RStr<'static>,
    /// Answers a shared-layout request (see `shared`): `method` says which, `request` points to
    /// it; the answer is postcard-encoded like `call`'s. Called only when the layout keys agree.
    #[sabi(last_prefix_field)]
    pub call_shared: unsafe extern "C" fn(method: u8, request: *mut c_void) -> RVec<u8>,
}

impl RootModule for PluginModuleRef {
    abi_stable::declare_root_module_statics! {PluginModuleRef}
    const BASE_NAME: &'static str = "rpt_plugin";
    const NAME: &'static str = "rpt_plugin";
    const VERSION_STRINGS: VersionStrings = abi_stable::package_version_strings!();
}

/// What the export macros expand to; not for direct use.
#[doc(hidden)]
pub mod __private {
    pub use abi_stable::library::{__call_root_module_loader, CheckTypeLayout, LibHeader, RootModuleResult};
    pub use abi_stable::prefix_type::PrefixTypeTrait;
    pub use abi_stable::std_types::{RSlice, RStr, RVec};
    pub use std::ffi::c_void;

    pub use super::{PluginKind, PluginModule, PluginModuleRef};
}

/// Exports a plugin value under the given kind; the public macros below call this.
#[doc(hidden)]
#[macro_export]
macro_rules! __rpt_export_plugin {
    ($kind:ident, $trait:path, $ty:ty, $make:expr, $serve:path, $serve_shared:path, $api_version:expr) => {
        $crate::__rpt_export_plugin!(
            $kind,
            $trait,
            $ty,
            $make,
            $serve,
            $serve_shared,
            $api_version,
            $crate::abi::layout_key()
        );
    };
    ($kind:ident, $trait:path, $ty:ty, $make:expr, $serve:path, $serve_shared:path, $api_version:expr, $layout_key:expr) => {
        // Shared-layout requests hand the plugin the host's vectors to grow and free, so the
        // plugin allocates from the same heap as rpt (see `abi::shared`); a plugin crate that
        // declares another global allocator fails to compile here.
        #[global_allocator]
        static RPT_PLUGIN_ALLOCATOR: ::std::alloc::System = ::std::alloc::System;

        static RPT_PLUGIN: ::std::sync::LazyLock<$ty> = ::std::sync::LazyLock::new(|| $make);
        static RPT_PLUGIN_NAME: ::std::sync::LazyLock<::std::string::String> =
            ::std::sync::LazyLock::new(|| $crate::abi::__plugin_name(|| <$ty as $trait>::info(&*RPT_PLUGIN)));

        extern "C" fn rpt_plugin_name() -> $crate::abi::__private::RStr<'static> {
            $crate::abi::__private::RStr::from_str(RPT_PLUGIN_NAME.as_str())
        }

        extern "C" fn rpt_plugin_call(
            request: $crate::abi::__private::RSlice<'_, u8>,
        ) -> $crate::abi::__private::RVec<u8> {
            $crate::abi::__private::RVec::from($serve(&*RPT_PLUGIN, request.as_slice()))
        }

        extern "C" fn rpt_plugin_layout_key() -> $crate::abi::__private::RStr<'static> {
            $crate::abi::__private::RStr::from_str($layout_key)
        }

        /// # Safety
        /// rpt calls this only with a request of `method` laid out as this build lays it out.
        #[allow(unsafe_code)]
        unsafe extern "C" fn rpt_plugin_call_shared(
            method: u8,
            request: *mut $crate::abi::__private::c_void,
        ) -> $crate::abi::__private::RVec<u8> {
            // Safety: the host sends shared-layout requests only when the layout keys agree.
            $crate::abi::__private::RVec::from(unsafe { $serve_shared(&*RPT_PLUGIN, method, request) })
        }

        fn rpt_root_module() -> $crate::abi::__private::PluginModuleRef {
            use $crate::abi::__private::PrefixTypeTrait as _;
            $crate::abi::__private::PluginModule {
                api_version: $api_version,
                wire_version: $crate::abi::WIRE_VERSION,
                kind: $crate::abi::__private::PluginKind::$kind,
                name: rpt_plugin_name,
                call: rpt_plugin_call,
                layout_key: rpt_plugin_layout_key,
                call_shared: rpt_plugin_call_shared,
            }
            .leak_into_prefix()
        }

        /// The plugin's root module header, the one symbol rpt looks up when it loads the library.
        #[allow(unsafe_code, non_upper_case_globals)]
        #[unsafe(export_name = $crate::__rpt_root_module_symbol!())]
        pub static RPT_ROOT_MODULE_LOADER: $crate::abi::__private::LibHeader = {
            extern "C" fn erased_root_module() -> $crate::abi::__private::RootModuleResult {
                $crate::abi::__private::__call_root_module_loader(rpt_root_module)
            }
            // Safety: the constructor returns the root module of type PluginModuleRef, as
            // abi_stable's own `export_root_module` attribute arranges.
            unsafe {
                $crate::abi::__private::LibHeader::from_constructor::<$crate::abi::__private::PluginModuleRef>(
                    erased_root_module,
                    $crate::abi::__private::CheckTypeLayout::Yes,
                )
            }
        };
    };
}

/// Exports a [`PassPlugin`](crate::PassPlugin) from a `cdylib` crate: `export_pass!(MyPass, MyPass::default());`.
#[macro_export]
macro_rules! export_pass {
    ($ty:ty, $make:expr) => {
        $crate::__rpt_export_kind!(Pass, $ty, $make);
    };
}

/// Exports a [`GuestPlugin`](crate::GuestPlugin) from a `cdylib` crate: `export_guest!(MyGuest, MyGuest);`.
#[macro_export]
macro_rules! export_guest {
    ($ty:ty, $make:expr) => {
        $crate::__rpt_export_kind!(Guest, $ty, $make);
    };
}

/// Exports a [`HostPlugin`](crate::HostPlugin) from a `cdylib` crate: `export_host!(MyHost, MyHost);`.
#[macro_export]
macro_rules! export_host {
    ($ty:ty, $make:expr) => {
        $crate::__rpt_export_kind!(Host, $ty, $make);
    };
}

/// Each kind's trait and serving functions, for the export macros. Hosts have no shared-layout
/// transport: nothing they answer is large.
#[doc(hidden)]
#[macro_export]
#[rustfmt::skip]
macro_rules! __rpt_export_kind {
    (Pass, $ty:ty, $make:expr) => {
        $crate::__rpt_export_plugin!(Pass, $crate::PassPlugin, $ty, $make, $crate::abi::serve_pass, $crate::abi::serve_pass_shared, $crate::abi::API_VERSION);
    };
    (Guest, $ty:ty, $make:expr) => {
        $crate::__rpt_export_plugin!(Guest, $crate::GuestPlugin, $ty, $make, $crate::abi::serve_guest, $crate::abi::serve_guest_shared, $crate::abi::API_VERSION);
    };
    (Host, $ty:ty, $make:expr) => {
        $crate::__rpt_export_plugin!(Host, $crate::HostPlugin, $ty, $make, $crate::abi::serve_host, $crate::abi::refuse_shared, $crate::abi::API_VERSION);
    };
}

/// The name a plugin reports, or a placeholder when asking it panics.
#[doc(hidden)]
pub fn __plugin_name(info: impl FnOnce() -> crate::PluginInfo) -> String {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(info))
        .map(|i| i.name)
        .unwrap_or_else(|_| "<a plugin whose info() panics>".to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_export_macros_use_the_symbol_abi_stable_looks_up() {
        assert_eq!(
            crate::__rpt_root_module_symbol!(),
            abi_stable::library::ROOT_MODULE_LOADER_NAME
        );
    }
}
