//! The effective recipe: a recipe with the command line's host, CPU model and passes in place.
//!
//! A generation's name is a digest of the recipe *as it is built*, so every command that names a
//! generation (`recompile` and `run` making it, `promote` and `bench --vs` finding it) must apply
//! the same choices in the same way. [`effective_recipe`] is the one function that does.

use std::collections::BTreeSet;
use std::path::Path;

use rpt_core::{CoreError, Registry, ResolvedHost};
use rpt_recipe::{PassConfig, Recipe};

use crate::GenerationError;

/// What a command chose in place of the recipe's own settings; the default chooses nothing, which
/// builds the recipe as written. With the `clap` feature it is the flags `--host`, `--host-cpu`
/// and `--passes` (each field's comment is its help), which every command naming a generation takes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct Selection {
    /// A host in place of the recipe's (`rpt hosts` lists them); the recipe's `host_cpu` and `l1i`,
    /// which describe its own host, then do not apply.
    #[cfg_attr(feature = "clap", arg(long))]
    pub host: Option<String>,
    /// A CPU model of the host in place of the recipe's or the host's default.
    #[cfg_attr(feature = "clap", arg(long))]
    pub host_cpu: Option<String>,
    /// Passes in place of the recipe's (comma-separated, in order; an empty list runs none), as if
    /// the recipe listed them without parameters. The generation's digest follows.
    #[cfg_attr(feature = "clap", arg(long, value_delimiter = ','))]
    pub passes: Option<Vec<String>>,
    /// The run-time tier on or off in place of the recipe's `run_time_tier` (`--run-time-tier
    /// false` builds without it, as the benchmarks of its cost do). The generation's digest follows.
    #[cfg_attr(feature = "clap", arg(long, value_name = "BOOL"))]
    pub run_time_tier: Option<bool>,
}

/// A recipe as one build makes it: the recipe file with a [`Selection`] applied.
///
/// The digest of [`EffectiveRecipe::recipe`] names the generation, and the core builds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EffectiveRecipe {
    /// The recipe to build.
    pub recipe: Recipe,
    /// The recipe's own host when the selection named another and the recipe's `host_cpu` or
    /// `l1i`, which describe that host, were dropped (commands say so).
    pub dropped_settings_of: Option<String>,
    /// Whether the host name is the recipe's, so an error about it can point at the recipe's line.
    host_from_recipe: bool,
    /// Whether the CPU model is the recipe's, likewise.
    cpu_from_recipe: bool,
}

/// The recipe with `selection` applied: its passes replaced when the selection names passes; its
/// host replaced when the selection names another host, which also drops the recipe's `host_cpu`
/// and `l1i` (they describe the recipe's own host); then its CPU model replaced when the selection
/// names one. A recipe that lists no passes keeps none: the core runs its host's recommended
/// pipeline ([`rpt_core::pipeline`]), which the manifest records, and the generation's name says
/// "recommended" rather than the list, as it says nothing of rpt's version either.
///
/// Pure: the same recipe and selection always give the same recipe, so the generation a recompile
/// writes is the one a promote looks for. A pass named twice is an error.
pub fn effective_recipe(mut recipe: Recipe, selection: &Selection) -> Result<EffectiveRecipe, GenerationError> {
    if let Some(names) = &selection.passes {
        let mut seen = BTreeSet::new();
        let mut passes = Vec::new();
        for name in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
            if !seen.insert(name) {
                return Err(GenerationError::PassTwice(name.to_string()));
            }
            passes.push(PassConfig {
                name: name.to_string(),
                enabled: true,
                params: Default::default(),
            });
        }
        recipe.passes = Some(passes);
    }
    let host_from_recipe = selection.host.as_ref().is_none_or(|h| *h == recipe.host);
    let mut dropped_settings_of = None;
    if !host_from_recipe && let Some(host) = &selection.host {
        if recipe.host_cpu.is_some() || recipe.l1i.is_some() {
            dropped_settings_of = Some(recipe.host.clone());
        }
        recipe.host = host.clone();
        recipe.host_cpu = None;
        recipe.l1i = None;
    }
    if let Some(cpu) = &selection.host_cpu {
        recipe.host_cpu = Some(cpu.clone());
    }
    if let Some(on) = selection.run_time_tier {
        recipe.run_time_tier = on;
    }
    Ok(EffectiveRecipe {
        recipe,
        dropped_settings_of,
        host_from_recipe,
        cpu_from_recipe: host_from_recipe && selection.host_cpu.is_none(),
    })
}

impl EffectiveRecipe {
    /// The generation's name (see [`crate::generation_name`]).
    pub fn generation_name(&self) -> String {
        crate::generation_name(&self.recipe)
    }

    /// Resolves the recipe's host through `registry`. An unknown host or CPU model that the recipe
    /// file at `recipe_path` names is reported at its line there; one the selection named, at none.
    pub fn resolve_host(&self, registry: &Registry, recipe_path: &Path) -> Result<ResolvedHost, GenerationError> {
        rpt_core::resolve_host(registry, &self.recipe).map_err(|error| {
            let field = match &error {
                CoreError::UnknownHost { .. } if self.host_from_recipe => Some("host"),
                CoreError::UnknownCpuModel { .. } if self.cpu_from_recipe => Some("host_cpu"),
                _ => None,
            };
            // Only for the message: a recipe that cannot be read again just loses the line.
            let location = field.and_then(|f| {
                std::fs::read_to_string(recipe_path)
                    .ok()
                    .and_then(|text| rpt_recipe::locate(&text, f))
            });
            GenerationError::Host {
                recipe: recipe_path.to_path_buf(),
                location,
                error: Box::new(error),
            }
        })
    }
}

/// A selection from borrowed names, for tests.
#[cfg(test)]
pub(crate) fn select(host: Option<&str>, host_cpu: Option<&str>, passes: Option<&[&str]>) -> Selection {
    Selection {
        host: host.map(str::to_string),
        host_cpu: host_cpu.map(str::to_string),
        passes: passes.map(|p| p.iter().map(|s| s.to_string()).collect()),
        run_time_tier: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turning_the_run_time_tier_off_changes_the_recipe_and_its_name() {
        let on = effective_recipe(recipe(), &Selection::default()).expect("effective");
        let off = Selection {
            run_time_tier: Some(false),
            ..Selection::default()
        };
        let off = effective_recipe(recipe(), &off).expect("effective");
        assert!(on.recipe.run_time_tier && !off.recipe.run_time_tier);
        assert_ne!(on.generation_name(), off.generation_name());
    }
    use rpt_recipe::CacheGeometry;

    fn recipe() -> Recipe {
        let text = r#"(guest: "x86-pe", image: "demo.exe", image_sha256: "05722e60c5a2dac419da145fdf7a463631a753cd3474b7bb08e6f7a1cc7799d4",
            platform: "win32-console", host: "x86-64", host_cpu: "skylake", l1i: (size: 32768, ways: 8, line: 64),
            passes: [(name: "flag-abi", params: {"limit": 4})])"#;
        rpt_recipe::parse(Path::new("demo.ron"), text).expect("the test recipe parses")
    }

    #[test]
    fn choosing_nothing_builds_the_recipe_as_written() {
        let effective = effective_recipe(recipe(), &Selection::default()).expect("effective");
        assert_eq!(effective.recipe, recipe());
        assert_eq!(effective.dropped_settings_of, None);
    }

    #[test]
    fn another_host_drops_the_recipes_cpu_model_and_l1i() {
        let effective = effective_recipe(recipe(), &select(Some("aarch64"), None, None)).expect("effective");
        assert_eq!(effective.recipe.host, "aarch64");
        assert_eq!(effective.recipe.host_cpu, None);
        assert_eq!(effective.recipe.l1i, None);
        assert_eq!(effective.dropped_settings_of.as_deref(), Some("x86-64"));
        // Naming the recipe's own host keeps its settings.
        let same = effective_recipe(recipe(), &select(Some("x86-64"), None, None)).expect("effective");
        assert_eq!(same.recipe, recipe());
        assert_eq!(same.dropped_settings_of, None);
    }

    #[test]
    fn a_cpu_model_applies_after_the_host() {
        let effective =
            effective_recipe(recipe(), &select(Some("aarch64"), Some("cortex-a72"), None)).expect("effective");
        assert_eq!(effective.recipe.host_cpu.as_deref(), Some("cortex-a72"));
        assert_eq!(effective.recipe.l1i, None);
        let own_host = effective_recipe(recipe(), &select(None, Some("znver3"), None)).expect("effective");
        assert_eq!(own_host.recipe.host_cpu.as_deref(), Some("znver3"));
        assert_eq!(
            own_host.recipe.l1i,
            Some(CacheGeometry {
                size: 32768,
                ways: 8,
                line: 64
            })
        );
    }

    #[test]
    fn passes_replace_the_recipes_in_order_without_parameters() {
        let effective =
            effective_recipe(recipe(), &select(None, None, Some(&["memarg", " ", "flag-abi"]))).expect("effective");
        let names: Vec<(&str, bool, usize)> = effective
            .recipe
            .passes
            .iter()
            .flatten()
            .map(|p| (p.name.as_str(), p.enabled, p.params.len()))
            .collect();
        assert_eq!(names, [("memarg", true, 0), ("flag-abi", true, 0)]);
        let none = effective_recipe(recipe(), &select(None, None, Some(&[]))).expect("effective");
        assert_eq!(none.recipe.passes, Some(vec![]), "an empty list runs no passes");
        let twice = effective_recipe(recipe(), &select(None, None, Some(&["memarg", "memarg"])));
        assert_eq!(
            twice.expect_err("a pass named twice").to_string(),
            "--passes names `memarg` twice"
        );
    }

    #[test]
    fn each_choice_changes_the_generation_name() {
        let names: BTreeSet<String> = [
            Selection::default(),
            select(Some("aarch64"), None, None),
            select(Some("aarch64"), Some("cortex-a53"), None),
            select(None, None, Some(&[])),
        ]
        .iter()
        .map(|s| effective_recipe(recipe(), s).expect("effective").generation_name())
        .collect();
        assert_eq!(names.len(), 4, "{names:?}");
    }
}
