//! Resolving a recipe's host: the plugin, the CPU model, the L1I geometry and the compile flags.
//!
//! This is the one place where the recipe's `host`, `host_cpu`, `l1i` and `compiler.cflags` meet
//! the host plugin, so the description passes read and the flags objects are built with never
//! disagree.

use std::sync::Arc;

use rpt_api::{CEnvironment, CacheGeometry, CompilerSettings, HostDesc, HostPlugin};
use rpt_recipe::{PassConfig, Recipe};

use crate::{CoreError, Db, Registry, Session};

/// A host plugin as one recipe uses it.
#[derive(Clone)]
pub struct ResolvedHost {
    /// The plugin.
    pub plugin: Arc<dyn HostPlugin>,
    /// The description passes read: the recipe's CPU model (or the host's default), with the
    /// recipe's `l1i` in place of the model's geometry when it names one.
    pub desc: HostDesc,
    /// The host's compiler settings, then the CPU model's tuning flags, then the recipe's `cflags`.
    pub compiler: CompilerSettings,
    /// Whether the host has a C library or brings a shim.
    pub environment: CEnvironment,
}

/// Resolves `recipe.host` with the recipe's CPU model, L1I geometry and extra flags.
pub fn resolve_host(registry: &Registry, recipe: &Recipe) -> Result<ResolvedHost, CoreError> {
    let plugin = registry
        .host(&recipe.host)
        .cloned()
        .ok_or_else(|| CoreError::UnknownHost {
            name: recipe.host.clone(),
            known: registry.host_names().join(", "),
        })?;
    let models = plugin.cpu_models();
    let mut desc = plugin.desc();
    let mut compiler = plugin.compiler();
    let model = match &recipe.host_cpu {
        Some(cpu) => Some(
            models
                .iter()
                .find(|m| &m.name == cpu)
                .ok_or_else(|| CoreError::UnknownCpuModel {
                    host: recipe.host.clone(),
                    cpu: cpu.clone(),
                    known: models.iter().map(|m| m.name.as_str()).collect::<Vec<_>>().join(", "),
                })?,
        ),
        // The default model is the one `desc()` describes.
        None => models.first(),
    };
    if let Some(model) = model {
        desc = desc.with_cpu(model);
        compiler.cflags.extend(model.cflags.iter().cloned());
    }
    if let Some(l1i) = recipe.l1i {
        desc.l1i = CacheGeometry {
            size: l1i.size,
            ways: l1i.ways,
            line: l1i.line,
        };
    }
    compiler.cflags.extend(recipe.compiler.cflags.iter().cloned());
    let environment = plugin.environment();
    Ok(ResolvedHost {
        plugin,
        desc,
        compiler,
        environment,
    })
}

/// The passes a build of `recipe` runs, in order: the recipe's list when it has one (`passes: []`
/// runs none), else the recommended pipeline of its host as `host_plugin` describes it (none for
/// an unknown host, which fails elsewhere with its own error).
pub fn pipeline(recipe: &Recipe, host_plugin: Option<&dyn HostPlugin>) -> Vec<PassConfig> {
    match &recipe.passes {
        Some(passes) => passes.clone(),
        None => host_plugin
            .map(|host| host.desc().recommended_passes)
            .unwrap_or_default()
            .into_iter()
            .map(|name| PassConfig {
                name,
                enabled: true,
                params: Default::default(),
            })
            .collect(),
    }
}

/// The host description passes read, for the session's recipe: a query, so a pass that reads it
/// re-runs only when the description changes (salsa backdates an equal result after any other
/// recipe edit). The CLI puts `--host` and `--host-cpu` into the session's recipe before the
/// session is created, so this always describes the host the objects are built for.
#[salsa::tracked(returns(ref))]
pub fn host_desc(db: &dyn Db, s: Session) -> Result<HostDesc, CoreError> {
    resolve_host(db.registry(), s.recipe(db)).map(|host| host.desc)
}
